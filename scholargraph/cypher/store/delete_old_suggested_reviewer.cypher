// After the switch: drop :SUGGESTED_REVIEWER edges of runs other than the current one (auto-commit, batched).
MATCH ()-[r:SUGGESTED_REVIEWER]->() WHERE r.runId <> $runId
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS
