// Stream every :Paper node's id and the requested properties ($props, camelCase) for a snapshot.
MATCH (n:Paper)
RETURN n.id AS id, [k IN $props | n[k]] AS values
