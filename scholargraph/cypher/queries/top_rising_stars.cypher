// purpose: The top predicted rising stars of a research topic, from the latest rising-stars run.
// reads: only the current run of the job (switched in atomically by the scoring job); each row names it (runId)
// params: topic (string, a Topic id such as "topic:3"), limit (int, default 10)
// ids: author (columns holding node ids: printed whitespace-free)
// example: scholargraph query top_rising_stars -p topic=topic:3 -p limit=5
MATCH (run:ScoringRun {job: 'rising-stars'}) WHERE run.current = true
MATCH (a:Author)-[r:RISING_STAR_IN {runId: run.id}]->(t:Topic {id: $topic})
RETURN r.rank AS rank, a.id AS author, a.name AS name, round(r.score, 4) AS score,
       round(r.percentile, 2) AS percentile, r.asOf AS asOf, r.horizon AS horizon, t.words[0..5] AS topicWords,
       r.runId AS runId
ORDER BY r.rank
LIMIT $limit
