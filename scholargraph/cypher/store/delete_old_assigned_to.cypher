// After the switch: drop :ASSIGNED_TO edges of runs other than the current one (auto-commit, batched).
MATCH ()-[r:ASSIGNED_TO]->() WHERE r.runId <> $runId
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS
