// Take the lock $name for $owner unless someone else holds an unexpired lease; returns who holds it.
MERGE (l:JobLock {id: $name})
WITH l, l.owner IS NOT NULL AND l.owner <> $owner AND l.expiresAt > datetime() AS heldByOther
SET l.owner = CASE WHEN heldByOther THEN l.owner ELSE $owner END,
    l.expiresAt = CASE WHEN heldByOther THEN l.expiresAt ELSE datetime() + duration({seconds: $lease}) END,
    l.acquiredAt = CASE WHEN heldByOther THEN l.acquiredAt ELSE datetime() END
RETURN NOT heldByOther AS acquired, l.owner AS owner, toString(l.expiresAt) AS expiresAt
