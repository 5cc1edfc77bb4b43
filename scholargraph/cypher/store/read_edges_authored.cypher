// Stream every :AUTHORED relationship as (source id, target id, $weight property) for a snapshot.
MATCH (a)-[r:AUTHORED]->(b)
RETURN a.id AS source, b.id AS target, r[$weight] AS weight
