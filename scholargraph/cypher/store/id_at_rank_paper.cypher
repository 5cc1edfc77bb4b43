// The id of the paper at position $skip in id order (an index-ordered scan of $skip entries): a boundary
// between two ranges of a parallel export.
MATCH (p:Paper) WHERE p.id IS NOT NULL
WITH p ORDER BY p.id SKIP $skip LIMIT 1
RETURN p.id AS id
