// k nearest papers to $vector in the vector index $index (cosine score in [0, 1]).
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
RETURN node.id AS id, score
