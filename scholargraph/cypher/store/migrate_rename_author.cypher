// Migration to whitespace-free ids: rename authors ($rows: {old, new}). The old id joins `sources`, so it
// still resolves. When the new id is already taken (an ingest ran before the migration), the old node
// folds into that one: its authorships, score edges and expertise settings move over, derived edges (COAUTHOR,
// CITES_AUTHOR) too where the other has none (`features` recomputes them), then it is deleted. Idempotent.
UNWIND $rows AS row
MATCH (old:Author {id: row.old})
OPTIONAL MATCH (taken:Author {id: row.new})
WITH row, old, taken
CALL (row, old, taken) {
  WITH row, old, taken WHERE taken IS NULL
  SET old.id = row.new,
      old.sources = coalesce(old.sources, []) + [s IN [row.old] WHERE NOT s IN coalesce(old.sources, [])]
}
CALL (row, old, taken) {
  WITH row, old, taken WHERE taken IS NOT NULL
  SET taken.name = coalesce(taken.name, old.name),
      taken.orcid = coalesce(taken.orcid, old.orcid),
      taken.sources = coalesce(taken.sources, [])
        + [s IN coalesce(old.sources, []) + [row.old] WHERE NOT s IN coalesce(taken.sources, [])],
      // The reviewer's own expertise settings follow them (those set under the new id win).
      taken.expertiseExcluded = coalesce(taken.expertiseExcluded, old.expertiseExcluded),
      taken.expertiseSince = coalesce(taken.expertiseSince, old.expertiseSince),
      taken.expertiseRecentYears = coalesce(taken.expertiseRecentYears, old.expertiseRecentYears),
      taken.expertiseWeights = coalesce(taken.expertiseWeights, old.expertiseWeights),
      // Affiliations and emails (conflicts of interest) are set unions.
      taken.affiliations = CASE WHEN old.affiliations IS NULL THEN taken.affiliations ELSE coalesce(taken.affiliations, [])
        + [x IN old.affiliations WHERE NOT x IN coalesce(taken.affiliations, [])] END,
      taken.emails = CASE WHEN old.emails IS NULL THEN taken.emails ELSE coalesce(taken.emails, [])
        + [x IN old.emails WHERE NOT x IN coalesce(taken.emails, [])] END
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (old)-[w:AUTHORED]->(p:Paper)
  MERGE (taken)-[nw:AUTHORED]->(p)
  SET nw.position = coalesce(nw.position, w.position)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (old)-[s:SUGGESTED_REVIEWER]->(p:Paper)
  MERGE (taken)-[ns:SUGGESTED_REVIEWER {runId: s.runId}]->(p)
  ON CREATE SET ns += properties(s)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (old)-[s:ASSIGNED_TO]->(p:Paper)
  MERGE (taken)-[ns:ASSIGNED_TO {runId: s.runId}]->(p)
  ON CREATE SET ns += properties(s)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (old)-[s:RISING_STAR_IN]->(t:Topic)
  MERGE (taken)-[ns:RISING_STAR_IN {runId: s.runId}]->(t)
  ON CREATE SET ns += properties(s)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (old)-[c:COAUTHOR]->(b:Author) WHERE b <> taken
  MERGE (taken)-[nc:COAUTHOR]->(b)
  ON CREATE SET nc += properties(c)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (b:Author)-[c:COAUTHOR]->(old) WHERE b <> taken
  MERGE (b)-[nc:COAUTHOR]->(taken)
  ON CREATE SET nc += properties(c)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (old)-[c:CITES_AUTHOR]->(b:Author) WHERE b <> taken
  MERGE (taken)-[nc:CITES_AUTHOR]->(b)
  ON CREATE SET nc += properties(c)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  MATCH (b:Author)-[c:CITES_AUTHOR]->(old) WHERE b <> taken
  MERGE (b)-[nc:CITES_AUTHOR]->(taken)
  ON CREATE SET nc += properties(c)
}
CALL (old, taken) {
  WITH old, taken WHERE taken IS NOT NULL
  DETACH DELETE old
}
RETURN count(taken) AS folded
