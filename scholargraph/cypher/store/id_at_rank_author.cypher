// The id of the author at position $skip in id order (an index-ordered scan of $skip entries): a boundary
// between two ranges of a parallel export.
MATCH (a:Author) WHERE a.id IS NOT NULL
WITH a ORDER BY a.id SKIP $skip LIMIT 1
RETURN a.id AS id
