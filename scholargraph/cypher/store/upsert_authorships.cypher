// (:Author)-[:AUTHORED {position}]->(:Paper); both ends were upserted earlier in the same batch.
UNWIND $rows AS row
MATCH (a:Author {id: row.authorId})
MATCH (p:Paper {id: row.paperId})
MERGE (a)-[r:AUTHORED]->(p)
SET r.position = row.position
