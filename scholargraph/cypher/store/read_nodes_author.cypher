// Stream every :Author node's id and the requested properties ($props, camelCase) for a snapshot.
MATCH (n:Author)
RETURN n.id AS id, [k IN $props | n[k]] AS values
