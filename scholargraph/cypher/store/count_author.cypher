// How many authors there are (the count store: no scan); id_boundaries cuts their ids into ranges.
MATCH (a:Author) RETURN count(a) AS n
