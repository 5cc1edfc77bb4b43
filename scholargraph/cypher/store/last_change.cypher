// The latest Paper.ingestedAt (server ms; null on an empty graph): it moves whenever a paper is ingested or
// really changed, so with the counts it tells whether the graph changed since a cache was built.
MATCH (p:Paper) WHERE p.ingestedAt IS NOT NULL
RETURN p.ingestedAt AS t
ORDER BY t DESC
LIMIT 1
