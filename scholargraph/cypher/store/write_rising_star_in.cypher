// Write (:Author)-[:RISING_STAR_IN {runId, ...props}]->(:Topic) scores of one run; rows {source, target, props}.
// A run's edges sit beside the previous run's until the switch; idempotent for a run id.
UNWIND $rows AS row
MATCH (a:Author {id: row.source})
MATCH (b:Topic {id: row.target})
MERGE (a)-[r:RISING_STAR_IN {runId: $runId}]->(b)
SET r += row.props
