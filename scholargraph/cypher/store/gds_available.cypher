// Whether the server has the Graph Data Science plugin (its PageRank procedure).
SHOW PROCEDURES YIELD name WHERE name = 'gds.pageRank.stream'
RETURN count(*) > 0 AS available
