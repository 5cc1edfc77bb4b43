// purpose: An author's profile: papers, topics, PageRanks, rising-star score and top co-authors.
// params: authorId (string, an Author id such as "aminer:nips-a0005")
// ids: author (columns holding node ids: printed whitespace-free)
// example: scholargraph query author_profile -p authorId=aminer:nips-a0005
MATCH (a:Author {id: $authorId})
OPTIONAL MATCH (a)-[:AUTHORED]->(p:Paper)
WITH a, count(p) AS papers, sum(coalesce(p.nCitation, 0)) AS citations, min(p.year) AS firstYear,
     max(p.year) AS lastYear
OPTIONAL MATCH (a)-[:AUTHORED]->(:Paper)-[h:HAS_TOPIC]->(t:Topic)
WITH a, papers, citations, firstYear, lastYear, t, sum(h.weight) AS w
ORDER BY w DESC
WITH a, papers, citations, firstYear, lastYear, [x IN collect(t.id + ' ' + coalesce(t.words[0], ''))
     WHERE x IS NOT NULL][0..3] AS topTopics
OPTIONAL MATCH (a)-[c:COAUTHOR]-(b:Author)
WITH a, papers, citations, firstYear, lastYear, topTopics, b, c
ORDER BY c.weight DESC
RETURN a.id AS author, a.name AS name, papers, citations, firstYear, lastYear,
       round(a.pagerankCoauthor, 8) AS pagerankCoauthor, round(a.pagerankCitation, 8) AS pagerankCitation,
       round(a.topicDiversity, 3) AS topicDiversity, round(a.topicAuthority, 3) AS topicAuthority,
       a.risingStarScore AS risingStarScore, a.risingStarRank AS risingStarRank, topTopics,
       [x IN collect(b.name + ' (' + toString(c.weight) + ')') WHERE x IS NOT NULL][0..5] AS topCoauthors
