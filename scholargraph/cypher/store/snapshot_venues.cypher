// Stream every venue for a snapshot: id and name.
MATCH (v:Venue)
RETURN v.id AS id, v.name AS name
