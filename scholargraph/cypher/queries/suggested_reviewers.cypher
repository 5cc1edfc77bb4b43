// purpose: Suggested reviewers for a paper with their evidence (main path, compensation, gate, reliability).
// reads: only the current run of the job (switched in atomically by the scoring job); each row names it (runId)
// params: paperId (string, a Paper id such as a DOI), limit (int, default 10)
// ids: author (columns holding node ids: printed whitespace-free)
// example: scholargraph query suggested_reviewers -p paperId=aminer:synth-p0001234
MATCH (run:ScoringRun {job: 'reviewers'}) WHERE run.current = true
MATCH (a:Author)-[s:SUGGESTED_REVIEWER {runId: run.id}]->(p:Paper {id: $paperId})
RETURN s.rank AS rank, a.id AS author, a.name AS name, round(s.score, 4) AS score,
       round(s.main, 4) AS main, round(s.compensation, 4) AS compensation,
       round(s.gate, 3) AS gate, round(s.reliability, 3) AS reliability, s.evidence AS evidence,
       s.runId AS runId
ORDER BY s.rank
LIMIT $limit
