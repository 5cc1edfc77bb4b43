// Make $runId the current run of its job in one transaction: readers that follow the current run
// (the library queries do) move from the old scores to the new ones at once, never a mix.
MATCH (new:ScoringRun {id: $runId})
OPTIONAL MATCH (old:ScoringRun {job: new.job}) WHERE old.current = true AND old <> new
SET old.current = false
SET new.current = true, new.status = 'succeeded', new.finishedAt = datetime()
RETURN new.id AS current
