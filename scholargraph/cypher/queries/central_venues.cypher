// purpose: The most central venues of a topic: venue PageRank on the venue citation network, with topic share.
// params: topic (string, a Topic id), limit (int, default 10)
// ids: venue (columns holding node ids: printed whitespace-free)
// example: scholargraph query central_venues -p topic=topic:2 -p limit=5
MATCH (v:Venue)<-[:PUBLISHED_IN]-(p:Paper)-[h:HAS_TOPIC]->(:Topic {id: $topic})
WITH v, count(p) AS papersInTopic, sum(h.weight) AS topicWeight
RETURN v.id AS venue, v.name AS name, papersInTopic, round(topicWeight, 2) AS topicWeight,
       round(coalesce(v.pagerankCitation, 0), 6) AS pagerank, round(coalesce(v.avgCitation, 0), 2) AS avgCitation
ORDER BY pagerank DESC, topicWeight DESC
LIMIT $limit
