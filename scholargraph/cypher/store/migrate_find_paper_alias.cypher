// Migration to whitespace-free ids: a page of paper aliases whose id has whitespace and that the migration
// has not handled yet (it marks them `legacy`: they stay, so that the old form still resolves).
MATCH (al:PaperAlias) WHERE al.id > $after AND al.legacy IS NULL AND al.id =~ $pattern
WITH al ORDER BY al.id LIMIT $limit
RETURN al.id AS id
