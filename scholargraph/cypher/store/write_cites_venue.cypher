// Materialise (:Venue)-[:CITES_VENUE {weight}]->(:Venue) from computed rows {source, target, weight}; idempotent.
// $version tags this computation so that edges it no longer produces can be removed afterwards.
UNWIND $rows AS row
MATCH (a:Venue {id: row.source})
MATCH (b:Venue {id: row.target})
MERGE (a)-[r:CITES_VENUE]->(b)
SET r.weight = row.weight, r.version = $version
