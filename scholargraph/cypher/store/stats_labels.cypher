// Node counts per label; a literal label lets Neo4j answer from its count store in constant time.
// (Aggregating before RETURN gives a row of 0 for an empty label; a grouping key would give none.)
CALL () {
  MATCH (n:Paper) WITH count(n) AS c RETURN 'Paper' AS label, c AS n
  UNION ALL MATCH (n:Author) WITH count(n) AS c RETURN 'Author' AS label, c AS n
  UNION ALL MATCH (n:Venue) WITH count(n) AS c RETURN 'Venue' AS label, c AS n
  UNION ALL MATCH (n:Topic) WITH count(n) AS c RETURN 'Topic' AS label, c AS n
  UNION ALL MATCH (n:ScoringRun) WITH count(n) AS c RETURN 'ScoringRun' AS label, c AS n
}
RETURN label, n
