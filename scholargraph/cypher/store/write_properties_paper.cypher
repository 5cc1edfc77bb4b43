// Write computed properties back onto :Paper nodes by id; unknown ids are skipped; idempotent.
UNWIND $rows AS row
MATCH (n:Paper {id: row.id})
SET n += row.props
