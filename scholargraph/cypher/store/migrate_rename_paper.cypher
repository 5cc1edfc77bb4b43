// Migration to whitespace-free ids: rewrite papers ($rows: {old, new, venueId, sources}, computed by the
// store): whitespace-free venue id and source ids, and the id renamed unless the new one is taken. The old
// id becomes a (:PaperAlias {legacy: true}) of the new one, so that it still resolves; a paper whose new
// id was taken is folded into that one afterwards (store/upsert_aliases). Idempotent.
UNWIND $rows AS row
MATCH (p:Paper {id: row.old})
OPTIONAL MATCH (taken:Paper {id: row.new}) WHERE row.new <> row.old
SET p.venueId = row.venueId,
    p.sources = row.sources
WITH row, p, taken
CALL (row, p, taken) {
  WITH row, p, taken WHERE row.new <> row.old AND taken IS NULL
  SET p.id = row.new
}
CALL (row) {
  WITH row WHERE row.new <> row.old
  MERGE (al:PaperAlias {id: row.old})
  SET al.paperId = row.new, al.legacy = true
}
RETURN [x IN collect(CASE WHEN taken IS NOT NULL THEN row.old END) WHERE x IS NOT NULL] AS taken
