#!/usr/bin/env bash
# `make test` / `make test-slow`: a test Neo4j on its own home and port, pytest with the arguments given (the
# tier's marker expression), then the server stops. The 25 slowest tests close the report.
set -euo pipefail
cd "$(dirname "$0")/.."
export SCHOLARGRAPH_HOME="${SCHOLARGRAPH_TEST_HOME:-$PWD/.scholargraph-test}"
export SCHOLARGRAPH_NEO4J_PORT="${SCHOLARGRAPH_TEST_PORT:-17688}"
# The Neo4j Browser / HTTP API of the test server: never a user's 7474 (the throw-away servers of some
# tests take the Bolt port +1, +3 and +4; see tests/conftest.py).
export SCHOLARGRAPH_NEO4J_HTTP_PORT="${SCHOLARGRAPH_TEST_HTTP_PORT:-$((SCHOLARGRAPH_NEO4J_PORT + 2))}"
export SCHOLARGRAPH_HEAP="${SCHOLARGRAPH_HEAP:-1g}"
unset SCHOLARGRAPH_NEO4J_URI SCHOLARGRAPH_NEO4J_PASSWORD
cli=.venv/bin/scholargraph
$cli neo4j start
trap '$cli neo4j stop >/dev/null || true' EXIT
set +e
.venv/bin/pytest --durations=25 "$@"
code=$?
set -e
# pytest exits 5 when it collected nothing: that is a failure for us, not a pass.
exit $code
