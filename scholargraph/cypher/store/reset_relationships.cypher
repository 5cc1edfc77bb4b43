// Empty the database, first half: every relationship, a bounded number per transaction. Deleting nodes with
// DETACH instead puts all of a dense node's relationships (a paper cited 100k times) into one transaction,
// past the server's transaction memory limit on a large graph.
MATCH ()-[r]->()
CALL (r) { DELETE r } IN TRANSACTIONS OF 50000 ROWS
