// Vector indexes on the paper vectors (cosine). Quantization off: exact-enough scores for tests.
CREATE VECTOR INDEX paper_semantic_vector IF NOT EXISTS FOR (p:Paper) ON (p.semanticVector)
OPTIONS {indexConfig: {`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX paper_citation_vector IF NOT EXISTS FOR (p:Paper) ON (p.citationVector)
OPTIONS {indexConfig: {`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX paper_topic_vector IF NOT EXISTS FOR (p:Paper) ON (p.topicVector)
OPTIONS {indexConfig: {`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}
