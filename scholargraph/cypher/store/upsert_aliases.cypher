// Record the source ids of papers whose graph id differs (a DOI), as (:PaperAlias {id, paperId}),
// so that a reference given by source id (an OpenAlex W id, an AMiner id) finds the DOI node.
// A node created earlier under that source id (a stub, or the same paper seen without its DOI)
// is folded into the real paper: its citations move over and it is deleted.
UNWIND $rows AS row
MERGE (al:PaperAlias {id: row.alias})
SET al.paperId = row.id
WITH row
MATCH (old:Paper {id: row.alias})
MATCH (p:Paper {id: row.id})
OPTIONAL MATCH (citer:Paper)-[:CITES]->(old)
WITH old, p, [c IN collect(citer) WHERE c <> p] AS citers
FOREACH (c IN citers | MERGE (c)-[:CITES]->(p))
WITH old, p
OPTIONAL MATCH (old)-[:CITES]->(cited:Paper)
WITH old, p, [c IN collect(cited) WHERE c <> p] AS citedList
FOREACH (c IN citedList | MERGE (p)-[:CITES]->(c))
WITH old, p
OPTIONAL MATCH (a:Author)-[w:AUTHORED]->(old)
WITH old, p, collect([a, w.position]) AS authorships
FOREACH (ap IN [x IN authorships WHERE x[0] IS NOT NULL] |
  MERGE (author:Author {id: ap[0].id})
  MERGE (author)-[nw:AUTHORED]->(p)
  SET nw.position = coalesce(nw.position, ap[1]))
SET p.title = coalesce(p.title, old.title),
    p.abstract = coalesce(p.abstract, old.abstract),
    p.year = coalesce(p.year, old.year),
    p.sources = p.sources + [s IN coalesce(old.sources, []) WHERE NOT s IN p.sources]
DETACH DELETE old
RETURN count(*) AS folded
