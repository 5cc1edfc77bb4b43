// Stream every :PUBLISHED_IN relationship as (source id, target id, $weight property) for a snapshot.
MATCH (a)-[r:PUBLISHED_IN]->(b)
RETURN a.id AS source, b.id AS target, r[$weight] AS weight
