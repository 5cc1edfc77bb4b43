// Empty the database, second half: the nodes, now without relationships (run as an auto-commit query).
MATCH (n)
CALL (n) { DELETE n } IN TRANSACTIONS OF 10000 ROWS
