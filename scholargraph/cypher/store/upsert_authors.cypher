// Upsert authors: the first name seen is kept; ORCID fills in when known; `sources` is a set union.
UNWIND $rows AS row
MERGE (a:Author {id: row.id})
WITH a, row, coalesce(a.sources, []) AS oldSources
SET a.name = coalesce(a.name, row.name),
    a.orcid = coalesce(row.orcid, a.orcid),
    a.sources = oldSources + [s IN row.sources WHERE NOT s IN oldSources]
