// Record that the named migration ($id) ran (the first time only: running it again changes nothing).
MERGE (m:Migration {id: $id})
ON CREATE SET m.ranAt = datetime(), m.counts = $counts
