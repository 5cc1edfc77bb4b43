// Runs left 'running' by a process that died are marked failed: runs of an earlier holder of the jobs
// lock ($owner holds it now, so they cannot be alive), and any run whose heartbeat is older than the lease.
MATCH (r:ScoringRun {status: 'running'})
WHERE (r.lockOwner IS NOT NULL AND r.lockOwner <> $owner)
   OR r.heartbeatAt IS NULL OR r.heartbeatAt < datetime() - duration({seconds: $lease})
SET r.status = 'failed', r.error = coalesce(r.error, 'abandoned: the process stopped without finishing'),
    r.finishedAt = coalesce(r.finishedAt, datetime())
RETURN count(r) AS failed
