// One page of stored paper vectors, in id order after $after (the previous page's `last`; "" first):
// rows [id, semanticEncoder, semanticTextHash, semanticVector, topicVector, citationVector] of the papers
// that carry any of them. The vectors are lists of floats; null where a paper has none.
MATCH (p:Paper) WHERE p.id > $after AND p.id <= $until
WITH p ORDER BY p.id LIMIT $limit
RETURN collect(CASE WHEN p.semanticEncoder IS NOT NULL OR p.semanticVector IS NOT NULL
                         OR p.topicVector IS NOT NULL OR p.citationVector IS NOT NULL
                    THEN [p.id, p.semanticEncoder, p.semanticTextHash, p.semanticVector, p.topicVector,
                          p.citationVector] END) AS rows,
       max(p.id) AS last
