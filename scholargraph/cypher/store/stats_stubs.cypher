// Papers known only as cited references (not yet ingested themselves).
MATCH (p:Paper) WHERE p.stub = true
RETURN count(p) AS stubs
