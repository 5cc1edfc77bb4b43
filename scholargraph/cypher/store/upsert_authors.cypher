// Upsert authors: the first name seen is kept; ORCID fills in when known; `sources` and `affiliations`
// (records.affiliation_entry strings) are set unions; an author without affiliations gets no property.
UNWIND $rows AS row
MERGE (a:Author {id: row.id})
WITH a, row, coalesce(a.sources, []) AS oldSources, coalesce(a.affiliations, []) AS oldAffiliations
SET a.name = coalesce(a.name, row.name),
    a.orcid = coalesce(row.orcid, a.orcid),
    a.sources = oldSources + [s IN row.sources WHERE NOT s IN oldSources],
    a.affiliations = CASE WHEN size(coalesce(row.affiliations, [])) = 0 THEN a.affiliations
                     ELSE oldAffiliations + [x IN row.affiliations WHERE NOT x IN oldAffiliations] END
