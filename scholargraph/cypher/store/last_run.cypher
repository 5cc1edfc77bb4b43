// The latest successful run of a job: its id and properties.
MATCH (r:ScoringRun {job: $job, status: 'succeeded'})
RETURN r.id AS id, properties(r) AS props
ORDER BY r.finishedAt DESC
LIMIT 1
