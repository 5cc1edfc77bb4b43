// How many papers there are (the count store: no scan); id_boundaries cuts their ids into ranges.
MATCH (p:Paper) RETURN count(p) AS n
