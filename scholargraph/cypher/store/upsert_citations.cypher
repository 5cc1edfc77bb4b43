// (:Paper)-[:CITES]->(:Paper), one row per citing paper with its list of cited ids.
// Both ends exist already: the citing paper from upsert_papers, the cited from upsert_cited_stubs.
UNWIND $rows AS row
MATCH (a:Paper {id: row.citing})
UNWIND row.cited AS citedId
MATCH (b:Paper {id: citedId})
MERGE (a)-[:CITES]->(b)
