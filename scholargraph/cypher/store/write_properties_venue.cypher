// Write computed properties back onto :Venue nodes by id; unknown ids are skipped; idempotent.
UNWIND $rows AS row
MATCH (n:Venue {id: row.id})
SET n += row.props
