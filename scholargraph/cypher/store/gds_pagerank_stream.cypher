// PageRank on a projected graph; $config holds dampingFactor, maxIterations, tolerance (and the weight).
CALL gds.pageRank.stream($name, $config) YIELD nodeId, score
RETURN gds.util.asNode(nodeId).id AS id, score
