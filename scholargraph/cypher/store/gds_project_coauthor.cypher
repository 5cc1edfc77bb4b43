// GDS projection of the co-author network (ACN): undirected, weighted by joint papers.
CALL gds.graph.project($name, 'Author', {COAUTHOR: {orientation: 'UNDIRECTED', properties: 'weight'}})
YIELD nodeCount, relationshipCount
RETURN nodeCount, relationshipCount
