// Every node with its labels and properties, for the canonical dump (`Neo4jStore.canonical_dump`).
MATCH (n)
RETURN labels(n) AS labels, properties(n) AS props
