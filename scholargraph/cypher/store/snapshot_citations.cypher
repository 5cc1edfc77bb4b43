// Stream citations grouped by citing paper: one record per paper with its cited ids (fewer records
// than one per edge, which is what makes 10M edges cheap to move over Bolt).
MATCH (a:Paper)
WITH a, [(a)-[:CITES]->(b:Paper) | b.id] AS cited
WHERE size(cited) > 0
RETURN a.id AS id, cited
