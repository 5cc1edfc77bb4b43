// Drop a projected graph (no error when it is gone already).
CALL gds.graph.drop($name, false) YIELD graphName
RETURN graphName
