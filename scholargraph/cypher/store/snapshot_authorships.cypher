// One page of authors for a snapshot, in id order after $after: rows [author id, name,
// [[paper id, position], ...]]; `last` is the page's last author id (null: no more pages).
MATCH (a:Author) WHERE a.id > $after AND a.id <= $until
WITH a ORDER BY a.id LIMIT $limit
RETURN collect([a.id, a.name, [(a)-[r:AUTHORED]->(p:Paper) | [p.id, coalesce(r.position, 0)]]]) AS rows,
       max(a.id) AS last
