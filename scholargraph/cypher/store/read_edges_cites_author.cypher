// Stream every :CITES_AUTHOR relationship as (source id, target id, $weight property) for a snapshot.
MATCH (a)-[r:CITES_AUTHOR]->(b)
RETURN a.id AS source, b.id AS target, r[$weight] AS weight
