// Empty the database in bounded transactions (run as an auto-commit query).
MATCH (n)
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
