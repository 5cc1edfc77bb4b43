// Stream authorships grouped by author: id, name, and the (paper id, position) pairs.
MATCH (a:Author)
RETURN a.id AS id, a.name AS name,
       [(a)-[r:AUTHORED]->(p:Paper) | [p.id, coalesce(r.position, 0)]] AS papers
