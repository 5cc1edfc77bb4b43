// purpose: The reviewers assigned to a paper by the current assignment, with affinity, rank and evidence.
// reads: only the current run of the assignment job (switched in atomically by `reviewers assign --write`)
// params: paperId (string, a Paper id such as a DOI)
// ids: reviewer (columns holding node ids: printed whitespace-free)
// example: scholargraph query assignment_of_paper -p paperId=aminer:synth-p0001234
MATCH (run:ScoringRun {job: 'assignment'}) WHERE run.current = true
MATCH (a:Author)-[s:ASSIGNED_TO {runId: run.id}]->(p:Paper {id: $paperId})
RETURN a.id AS reviewer, a.name AS name, round(s.affinity, 4) AS affinity, s.rank AS rank, s.forced AS forced,
       s.evidence AS evidence, run.method AS method
ORDER BY s.affinity DESC
