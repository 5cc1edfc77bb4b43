// For each given id ($rows: {given, forms}), the authors whose own id is one of its forms. Givens naming
// none are absent (their source ids are looked up next, by lookup_author_sources).
UNWIND $rows AS row
MATCH (a:Author) WHERE a.id IN row.forms
RETURN row.given AS given, collect(DISTINCT a.id) AS ids
