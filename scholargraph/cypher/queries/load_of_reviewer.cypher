// purpose: A reviewer's papers in the current assignment: how many, which, and the affinity of each.
// reads: only the current run of the assignment job (switched in atomically by `reviewers assign --write`)
// params: authorId (string, an Author id)
// ids: paper (columns holding node ids: printed whitespace-free)
// example: scholargraph query load_of_reviewer -p authorId=aminer:synth-a000123
MATCH (run:ScoringRun {job: 'assignment'}) WHERE run.current = true
MATCH (a:Author {id: $authorId})-[s:ASSIGNED_TO {runId: run.id}]->(p:Paper)
WITH a, collect({paper: p.id, title: p.title, affinity: s.affinity}) AS papers
UNWIND papers AS item
RETURN item.paper AS paper, item.title AS title, round(item.affinity, 4) AS affinity, size(papers) AS load
ORDER BY item.affinity DESC
