// Materialise (:Author)-[:COAUTHOR {weight}]->(:Author) from computed rows {source, target, weight}; idempotent.
// $version tags this computation so that edges it no longer produces can be removed afterwards.
UNWIND $rows AS row
MATCH (a:Author {id: row.source})
MATCH (b:Author {id: row.target})
MERGE (a)-[r:COAUTHOR]->(b)
SET r.weight = row.weight, r.version = $version
