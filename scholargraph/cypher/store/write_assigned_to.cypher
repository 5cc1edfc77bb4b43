// Write (:Author)-[:ASSIGNED_TO {runId, affinity, rank, ...}]->(:Paper) of one assignment run; rows {source, target, props}.
// A run's edges sit beside the previous run's until the switch; idempotent for a run id.
UNWIND $rows AS row
MATCH (a:Author {id: row.source})
MATCH (b:Paper {id: row.target})
MERGE (a)-[r:ASSIGNED_TO {runId: $runId}]->(b)
SET r += row.props
