// Remove :CITES_VENUE edges that the latest computation ($version) did not produce (run as auto-commit).
MATCH ()-[r:CITES_VENUE]->() WHERE r.version IS NULL OR r.version <> $version
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS
