// Runs left 'running' by a process that died (its lock lease expired) are marked failed.
MATCH (r:ScoringRun {status: 'running'})
WHERE r.heartbeatAt IS NULL OR r.heartbeatAt < datetime() - duration({seconds: $lease})
SET r.status = 'failed', r.error = coalesce(r.error, 'abandoned: the process stopped without finishing'),
    r.finishedAt = coalesce(r.finishedAt, datetime())
RETURN count(r) AS failed
