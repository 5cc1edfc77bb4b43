// Topic nodes of one topic model version: id "topic:<k>", top words, model version.
UNWIND $rows AS row
MERGE (t:Topic {id: row.id})
SET t.words = row.words, t.weights = row.weights, t.modelVersion = row.modelVersion
