// One page of citations for a snapshot: the citing papers in id order after $after, rows [citing id,
// [cited ids]] for those that cite anything; `last` is the page's last paper id (null: no more pages).
MATCH (a:Paper) WHERE a.id > $after AND a.id <= $until
WITH a ORDER BY a.id LIMIT $limit
WITH a, [(a)-[:CITES]->(b:Paper) | b.id] AS cited
RETURN collect(CASE WHEN size(cited) > 0 THEN [a.id, cited] END) AS rows, max(a.id) AS last
