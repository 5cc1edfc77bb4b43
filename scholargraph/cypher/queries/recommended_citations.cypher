// purpose: Papers recommended for a paper to cite, best first, from the latest citation run.
// reads: only the current run of the job (switched in atomically by the scoring job)
// params: paperId (string, a Paper id), limit (int, default 20)
// ids: paper (columns holding node ids: printed whitespace-free)
// example: scholargraph query recommended_citations -p paperId=aminer:synth-p0001234 -p limit=10
MATCH (run:ScoringRun {job: 'citations'}) WHERE run.current = true
MATCH (p:Paper {id: $paperId})-[r:RECOMMENDED_CITATION {runId: run.id}]->(c:Paper)
RETURN r.rank AS rank, c.id AS paper, c.title AS title, c.year AS year, round(r.score, 4) AS score,
       EXISTS { (p)-[:CITES]->(c) } AS alreadyCited
ORDER BY r.rank
LIMIT $limit
