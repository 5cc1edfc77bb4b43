// (:Paper)-[:PUBLISHED_IN]->(:Venue) for papers that name a venue.
UNWIND $rows AS row
MATCH (p:Paper {id: row.paperId})
MATCH (v:Venue {id: row.venueId})
MERGE (p)-[:PUBLISHED_IN]->(v)
