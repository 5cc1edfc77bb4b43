// Stream every :Venue node's id and the requested properties ($props, camelCase) for a snapshot.
MATCH (n:Venue)
RETURN n.id AS id, [k IN $props | n[k]] AS values
