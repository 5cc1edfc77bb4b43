// Write computed properties back onto :Author nodes by id; unknown ids are skipped; idempotent.
UNWIND $rows AS row
MATCH (n:Author {id: row.id})
SET n += row.props
