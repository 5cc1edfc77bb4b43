// GDS projection of the author citation network (ACCN): directed, weighted.
CALL gds.graph.project($name, 'Author', {CITES_AUTHOR: {properties: 'weight'}})
YIELD nodeCount, relationshipCount
RETURN nodeCount, relationshipCount
