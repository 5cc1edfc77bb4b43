// Whether the database holds anything besides migration markers (a bulk import needs it empty).
OPTIONAL MATCH (n) WHERE NOT n:Migration
WITH n LIMIT 1
RETURN n IS NOT NULL AS hasData
