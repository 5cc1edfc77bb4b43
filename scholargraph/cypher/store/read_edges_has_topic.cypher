// Stream every :HAS_TOPIC relationship as (source id, target id, $weight property) for a snapshot.
MATCH (a)-[r:HAS_TOPIC]->(b)
RETURN a.id AS source, b.id AS target, r[$weight] AS weight
