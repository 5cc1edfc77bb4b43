// purpose: The papers nearest a paper by its stored semantic vector (the HNSW vector index `features` builds).
// params: paperId (string, a Paper id such as "aminer:nips-p0001"), limit (int, default 10)
// ids: paper (columns holding node ids: printed whitespace-free)
// example: scholargraph query similar_papers -p paperId=aminer:nips-p0001 -p limit=5
// The score is Neo4j's cosine similarity rescaled to [0, 1]: (1 + cos) / 2.
MATCH (p:Paper {id: $paperId})
WHERE p.semanticVector IS NOT NULL
CALL db.index.vector.queryNodes('paper_semantic_vector', $limit + 1, p.semanticVector) YIELD node, score
WITH node, score WHERE node <> p
RETURN node.id AS paper, node.title AS title, node.year AS year, round(score, 4) AS score
ORDER BY score DESC, paper
LIMIT $limit
