// Migration to whitespace-free ids: a page of papers whose id, venue id or one of whose source ids has
// whitespace (in id order after $after), with what the migration rewrites.
MATCH (p:Paper) WHERE p.id > $after
  AND (p.id =~ $pattern OR p.venueId =~ $pattern OR any(s IN coalesce(p.sources, []) WHERE s =~ $pattern))
WITH p ORDER BY p.id LIMIT $limit
RETURN p.id AS id, p.venueId AS venueId, coalesce(p.sources, []) AS sources
