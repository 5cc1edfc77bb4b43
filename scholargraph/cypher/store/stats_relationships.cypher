// Relationship counts per type, answered from the count store.
CALL () {
  MATCH ()-[r:AUTHORED]->() WITH count(r) AS c RETURN 'AUTHORED' AS type, c AS n
  UNION ALL MATCH ()-[r:CITES]->() WITH count(r) AS c RETURN 'CITES' AS type, c AS n
  UNION ALL MATCH ()-[r:PUBLISHED_IN]->() WITH count(r) AS c RETURN 'PUBLISHED_IN' AS type, c AS n
  UNION ALL MATCH ()-[r:COAUTHOR]->() WITH count(r) AS c RETURN 'COAUTHOR' AS type, c AS n
  UNION ALL MATCH ()-[r:CITES_AUTHOR]->() WITH count(r) AS c RETURN 'CITES_AUTHOR' AS type, c AS n
  UNION ALL MATCH ()-[r:CITES_VENUE]->() WITH count(r) AS c RETURN 'CITES_VENUE' AS type, c AS n
  UNION ALL MATCH ()-[r:HAS_TOPIC]->() WITH count(r) AS c RETURN 'HAS_TOPIC' AS type, c AS n
  UNION ALL MATCH ()-[r:SUGGESTED_REVIEWER]->() WITH count(r) AS c RETURN 'SUGGESTED_REVIEWER' AS type, c AS n
  UNION ALL MATCH ()-[r:RISING_STAR_IN]->() WITH count(r) AS c RETURN 'RISING_STAR_IN' AS type, c AS n
  UNION ALL MATCH ()-[r:RECOMMENDED_CITATION]->() WITH count(r) AS c RETURN 'RECOMMENDED_CITATION' AS type, c AS n
  UNION ALL MATCH ()-[r:ASSIGNED_TO]->() WITH count(r) AS c RETURN 'ASSIGNED_TO' AS type, c AS n
}
RETURN type, n
