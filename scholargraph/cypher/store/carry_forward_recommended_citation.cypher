// Incremental run: copy the current run's :RECOMMENDED_CITATION edges of the papers not rescored ($rescored ids)
// to run $runId, beside the current ones (invisible until the switch). Auto-commit, batched.
MATCH (cur:ScoringRun {job: 'citations'}) WHERE cur.current = true
MATCH (q:Paper)-[r:RECOMMENDED_CITATION {runId: cur.id}]->(c:Paper)
WHERE NOT q.id IN $rescored
CALL (q, r, c) {
  CREATE (q)-[n:RECOMMENDED_CITATION]->(c)
  SET n = properties(r), n.runId = $runId
  RETURN q.id AS paper
} IN TRANSACTIONS OF 10000 ROWS
RETURN count(*) AS edges, count(DISTINCT paper) AS papers
