// GDS in-memory projection of the paper citation graph (directed, unweighted), every paper a node.
CALL gds.graph.project($name, 'Paper', 'CITES') YIELD nodeCount, relationshipCount
RETURN nodeCount, relationshipCount
