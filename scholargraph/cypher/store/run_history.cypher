// Scoring runs, newest first.
MATCH (r:ScoringRun)
RETURN r.id AS id, r.job AS job, r.status AS status, toString(r.startedAt) AS startedAt,
       toString(r.finishedAt) AS finishedAt, coalesce(r.current, false) AS current, r.counts AS counts,
       r.error AS error
ORDER BY r.startedAt DESC
LIMIT $limit
