// Extend the lease of a lock we hold; returns 0 when we lost it (it expired and someone took it).
MATCH (l:JobLock {id: $name, owner: $owner})
SET l.expiresAt = datetime() + duration({seconds: $lease})
RETURN count(l) AS renewed
