// Whether the named migration ($id) has run on this database.
OPTIONAL MATCH (m:Migration {id: $id})
RETURN m IS NOT NULL AS done
