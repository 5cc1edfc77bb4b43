// Write (:Paper)-[:RECOMMENDED_CITATION {runId, ...props}]->(:Paper) scores of one run; rows {source, target, props}.
// A run's edges sit beside the previous run's until the switch; idempotent for a run id.
UNWIND $rows AS row
MATCH (a:Paper {id: row.source})
MATCH (b:Paper {id: row.target})
MERGE (a)-[r:RECOMMENDED_CITATION {runId: $runId}]->(b)
SET r += row.props
