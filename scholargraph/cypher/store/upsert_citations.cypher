// (:Paper)-[:CITES]->(:Paper). A cited paper not in the graph becomes a stub until its record arrives.
UNWIND $rows AS row
MERGE (a:Paper {id: row.citing})
ON CREATE SET a.stub = true, a.sgNew = true
MERGE (b:Paper {id: row.cited})
ON CREATE SET b.stub = true, b.sgNew = true
MERGE (a)-[:CITES]->(b)
WITH a, b
WITH collect(DISTINCT CASE WHEN a.sgNew THEN a END) + collect(DISTINCT CASE WHEN b.sgNew THEN b END) AS fresh
UNWIND fresh AS n
REMOVE n.sgNew
RETURN count(DISTINCT n) AS stubsCreated
