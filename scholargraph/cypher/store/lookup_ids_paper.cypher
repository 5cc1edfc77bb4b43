// For each given id ($rows: {given, forms}), the papers one of its forms names: a paper's own id, or one of
// its source ids (a PaperAlias, also the old whitespace form of a migrated id). Givens naming none are absent.
UNWIND $rows AS row
CALL (row) {
  MATCH (p:Paper) WHERE p.id IN row.forms
  RETURN p.id AS id
  UNION
  MATCH (al:PaperAlias) WHERE al.id IN row.forms
  MATCH (p:Paper {id: al.paperId})
  RETURN p.id AS id
}
RETURN row.given AS given, collect(DISTINCT id) AS ids
