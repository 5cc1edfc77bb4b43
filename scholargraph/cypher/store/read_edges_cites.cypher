// Stream every :CITES relationship as (source id, target id, $weight property) for a snapshot.
MATCH (a)-[r:CITES]->(b)
RETURN a.id AS source, b.id AS target, r[$weight] AS weight
