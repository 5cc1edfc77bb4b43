// Non-stub papers ingested or changed after $since (ms since the epoch): what an incremental run rescores.
MATCH (p:Paper) WHERE p.ingestedAt > $since AND NOT coalesce(p.stub, false)
RETURN p.id AS id
ORDER BY id
