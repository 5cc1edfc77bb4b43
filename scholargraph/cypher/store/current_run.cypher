// The current (switched-in) run of a job, with its watermark.
MATCH (r:ScoringRun {job: $job}) WHERE r.current = true
RETURN r.id AS id, properties(r) AS props
