// purpose: The latest scoring runs (features, rising stars, reviewers, citations): status, times, counts.
// params: limit (int, default 10)
// ids: run (columns holding node ids: printed whitespace-free)
// example: scholargraph query latest_runs -p limit=5
MATCH (r:ScoringRun)
RETURN r.id AS run, r.job AS job, r.status AS status, toString(r.startedAt) AS startedAt,
       toString(r.finishedAt) AS finishedAt, r.counts AS counts, r.modelVersion AS modelVersion, r.error AS error
ORDER BY r.startedAt DESC
LIMIT $limit
