// GDS projection of the venue citation network (VCCN): directed, weighted.
CALL gds.graph.project($name, 'Venue', {CITES_VENUE: {properties: 'weight'}})
YIELD nodeCount, relationshipCount
RETURN nodeCount, relationshipCount
