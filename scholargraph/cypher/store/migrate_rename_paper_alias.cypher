// Migration to whitespace-free ids: a paper alias with whitespace ($rows: {old, new}) gets its
// whitespace-free twin (what a new ingest of that source id writes) and is itself kept, marked `legacy`,
// so that the old form still resolves. Idempotent.
UNWIND $rows AS row
MATCH (al:PaperAlias {id: row.old})
SET al.legacy = true
WITH row, al
CALL (row, al) {
  WITH row, al WHERE row.new <> row.old AND row.new <> al.paperId
  MERGE (twin:PaperAlias {id: row.new})
  SET twin.paperId = coalesce(twin.paperId, al.paperId)
}
RETURN count(*) AS aliases
