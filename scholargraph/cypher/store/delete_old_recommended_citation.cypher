// After the switch: drop :RECOMMENDED_CITATION edges of runs other than the current one (auto-commit, batched).
MATCH ()-[r:RECOMMENDED_CITATION]->() WHERE r.runId <> $runId
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS
