// Release a lock we hold.
MATCH (l:JobLock {id: $name, owner: $owner})
SET l.owner = null, l.expiresAt = null
