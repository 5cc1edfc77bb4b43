// (:Paper)-[:CITES]->(:Paper), one row per citing paper with its list of cited ids. Both ends
// exist already (upsert_papers, upsert_cited_stubs); cited source ids resolve through aliases,
// and a reference that resolves to the citing paper itself is not a citation.
UNWIND $rows AS row
MATCH (a:Paper {id: row.citing})
UNWIND row.cited AS citedId
OPTIONAL MATCH (al:PaperAlias {id: citedId})
MATCH (b:Paper {id: coalesce(al.paperId, citedId)})
WITH a, b WHERE a <> b
MERGE (a)-[:CITES]->(b)
