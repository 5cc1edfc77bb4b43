// Incremental run: copy the current run's :SUGGESTED_REVIEWER edges of the papers not rescored ($rescored ids)
// to run $runId, beside the current ones (invisible until the switch). Auto-commit, batched.
MATCH (cur:ScoringRun {job: 'reviewers'}) WHERE cur.current = true
MATCH (a:Author)-[r:SUGGESTED_REVIEWER {runId: cur.id}]->(q:Paper)
WHERE NOT q.id IN $rescored
CALL (a, r, q) {
  CREATE (a)-[n:SUGGESTED_REVIEWER]->(q)
  SET n = properties(r), n.runId = $runId
  RETURN q.id AS paper
} IN TRANSACTIONS OF 10000 ROWS
RETURN count(*) AS edges, count(DISTINCT paper) AS papers
