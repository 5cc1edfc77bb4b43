// After a bulk import: the importer cannot write an empty list, so authors and ingested papers whose
// `sources` is empty arrive without it; the transactional path stores [] (run as an auto-commit query).
CALL () {
  MATCH (a:Author) WHERE a.sources IS NULL RETURN a AS n
  UNION ALL
  MATCH (p:Paper) WHERE p.sources IS NULL AND p.ingestedAt IS NOT NULL RETURN p AS n
}
CALL (n) { SET n.sources = [] } IN TRANSACTIONS OF 10000 ROWS
