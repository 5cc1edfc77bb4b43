// Write computed properties back onto :Topic nodes by id; unknown ids are skipped; idempotent.
UNWIND $rows AS row
MATCH (n:Topic {id: row.id})
SET n += row.props
