// For each given id ($rows: {given, forms}), the venues whose id is one of its forms, or that were known
// under it before the whitespace-free id migration (`sources`).
UNWIND $rows AS row
CALL (row) {
  MATCH (v:Venue) WHERE v.id IN row.forms
  RETURN v.id AS id
  UNION
  MATCH (v:Venue) WHERE v.sources IS NOT NULL AND any(s IN v.sources WHERE s IN row.forms)
  RETURN v.id AS id
}
RETURN row.given AS given, collect(DISTINCT id) AS ids
