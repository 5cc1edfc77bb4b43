// After the switch: drop :RISING_STAR_IN edges of runs other than the current one (auto-commit, batched).
MATCH ()-[r:RISING_STAR_IN]->() WHERE r.runId <> $runId
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS
