// Every relationship by type, its ends' labels and ids, and its properties, for the canonical dump.
MATCH (a)-[r]->(b)
RETURN type(r) AS type, labels(a) AS startLabels, a.id AS startId, labels(b) AS endLabels, b.id AS endId,
       properties(r) AS props
