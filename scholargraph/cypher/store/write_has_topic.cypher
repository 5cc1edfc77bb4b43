// Materialise (:Paper)-[:HAS_TOPIC {weight}]->(:Topic) from computed rows {source, target, weight}; idempotent.
// $version tags this computation so that edges it no longer produces can be removed afterwards.
UNWIND $rows AS row
MATCH (a:Paper {id: row.source})
MATCH (b:Topic {id: row.target})
MERGE (a)-[r:HAS_TOPIC]->(b)
SET r.weight = row.weight, r.version = $version
