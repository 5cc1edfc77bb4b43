// Upsert papers. Non-null fields overwrite, nulls keep what is there; `sources` is a set union.
// A full record clears `stub`; a partial one (e.g. an abstract-only row) leaves it as it was.
// Returns counts for the ingest summary; re-running the same rows reports created = 0, merged = 0.
UNWIND $rows AS row
MERGE (p:Paper {id: row.id})
ON CREATE SET p.sgNew = true
WITH p, row, p.sgNew IS NOT NULL AS created, coalesce(p.stub, false) AS wasStub,
     coalesce(p.sources, []) AS oldSources
// `ingestedAt` (server ms) moves only when the paper really changed, so that scoring jobs rescore
// what changed since their watermark and re-ingesting the same dump changes nothing.
WITH p, row, created, wasStub, oldSources,
     created OR (wasStub AND NOT row.partial) OR any(s IN row.sources WHERE NOT s IN oldSources)
     OR (row.title IS NOT NULL AND row.title <> coalesce(p.title, ''))
     OR (row.abstract IS NOT NULL AND row.abstract <> coalesce(p.abstract, ''))
     OR (row.year IS NOT NULL AND row.year <> coalesce(p.year, -1)) AS changed
SET p.ingestedAt = CASE WHEN changed THEN timestamp() ELSE p.ingestedAt END,
    p.title = coalesce(row.title, p.title),
    p.abstract = coalesce(row.abstract, p.abstract),
    p.year = coalesce(row.year, p.year),
    p.doi = coalesce(row.doi, p.doi),
    p.venueId = coalesce(row.venueId, p.venueId),
    p.sources = oldSources + [s IN row.sources WHERE NOT s IN oldSources],
    p.stub = CASE WHEN row.partial THEN coalesce(p.stub, true) ELSE false END
REMOVE p.sgNew
RETURN sum(CASE WHEN created THEN 1 ELSE 0 END) AS created,
       sum(CASE WHEN wasStub AND NOT created AND NOT row.partial THEN 1 ELSE 0 END) AS stubsFilled,
       sum(CASE WHEN NOT created AND NOT wasStub AND NOT row.partial
                 AND size(oldSources) > 0 AND none(s IN row.sources WHERE s IN oldSources)
            THEN 1 ELSE 0 END) AS merged
