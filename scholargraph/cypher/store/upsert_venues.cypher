// Upsert venues by normalised id; the first display name seen is kept.
UNWIND $rows AS row
MERGE (v:Venue {id: row.id})
SET v.name = coalesce(v.name, row.name)
