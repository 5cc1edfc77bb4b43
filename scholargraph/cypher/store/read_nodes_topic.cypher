// Stream every :Topic node's id and the requested properties ($props, camelCase) for a snapshot.
MATCH (n:Topic)
RETURN n.id AS id, [k IN $props | n[k]] AS values
