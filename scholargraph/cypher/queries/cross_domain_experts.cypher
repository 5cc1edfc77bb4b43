// purpose: Authors whose papers bridge two topics (strong in both), e.g. reviewers for interdisciplinary work.
// params: topicA (string, a Topic id), topicB (string, a Topic id), limit (int, default 10)
// ids: author (columns holding node ids: printed whitespace-free)
// example: scholargraph query cross_domain_experts -p topicA=topic:1 -p topicB=topic:4
MATCH (a:Author)-[:AUTHORED]->(p:Paper)-[h:HAS_TOPIC]->(t:Topic)
WHERE t.id IN [$topicA, $topicB]
WITH a, sum(CASE WHEN t.id = $topicA THEN h.weight ELSE 0 END) AS inA,
        sum(CASE WHEN t.id = $topicB THEN h.weight ELSE 0 END) AS inB
WHERE inA > 0 AND inB > 0
RETURN a.id AS author, a.name AS name, round(inA, 3) AS weightInA, round(inB, 3) AS weightInB,
       round(CASE WHEN inA < inB THEN inA ELSE inB END, 3) AS bridge
ORDER BY bridge DESC, author
LIMIT $limit
