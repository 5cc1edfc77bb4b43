// One page of papers for a snapshot, in id order after $after (the previous page's `last`; "" first):
// ids up to $until (inclusive: a range of a parallel export; the store passes ID_CEILING for "no bound").
// rows [id, year, stub, venue id, title, abstract] (text only when $withText). One record per page,
// not per paper: the driver's per-record cost, not Neo4j, is what bounds a per-row stream.
MATCH (p:Paper) WHERE p.id > $after AND p.id <= $until
WITH p ORDER BY p.id LIMIT $limit
RETURN collect([p.id, p.year, coalesce(p.stub, false), p.venueId,
                CASE WHEN $withText THEN p.title END, CASE WHEN $withText THEN p.abstract END]) AS rows,
       max(p.id) AS last
