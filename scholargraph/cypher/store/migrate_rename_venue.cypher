// Migration to whitespace-free ids: rename venues ($rows: {old, new}); the old id is kept in `sources`.
// When the new id is taken, the old venue folds into it (PUBLISHED_IN moves; CITES_VENUE where the other
// has none) and is deleted. Papers' `venueId` is rewritten by the paper step. Idempotent.
UNWIND $rows AS row
MATCH (old:Venue {id: row.old})
OPTIONAL MATCH (taken:Venue {id: row.new})
WITH row, old, taken
CALL (row, old, taken) {
  WITH row, old, taken WHERE taken IS NULL
  SET old.id = row.new,
      old.sources = coalesce(old.sources, []) + [s IN [row.old] WHERE NOT s IN coalesce(old.sources, [])]
}
CALL (row, old, taken) {
  WITH row, old, taken WHERE taken IS NOT NULL
  SET taken.name = coalesce(taken.name, old.name),
      taken.sources = coalesce(taken.sources, [])
        + [s IN coalesce(old.sources, []) + [row.old] WHERE NOT s IN coalesce(taken.sources, [])]
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (p:Paper)-[:PUBLISHED_IN]->(old)
  MERGE (p)-[:PUBLISHED_IN]->(taken)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (old)-[c:CITES_VENUE]->(b:Venue) WHERE b <> taken
  MERGE (taken)-[nc:CITES_VENUE]->(b)
  ON CREATE SET nc += properties(c)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (b:Venue)-[c:CITES_VENUE]->(old) WHERE b <> taken
  MERGE (b)-[nc:CITES_VENUE]->(taken)
  ON CREATE SET nc += properties(c)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  DETACH DELETE old
}
RETURN count(taken) AS folded
