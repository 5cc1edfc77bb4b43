// (:Author)-[:AUTHORED {position}]->(:Paper), one row per paper with its ordered author list.
UNWIND $rows AS row
MATCH (p:Paper {id: row.paperId})
UNWIND row.authors AS au
MATCH (a:Author {id: au.id})
MERGE (a)-[r:AUTHORED]->(p)
SET r.position = au.position
