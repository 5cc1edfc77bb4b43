// Create or update a ScoringRun node (status, times, counts as JSON, model versions).
MERGE (r:ScoringRun {id: $id})
SET r += $props
