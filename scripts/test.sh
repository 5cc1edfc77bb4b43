#!/usr/bin/env bash
# `make test`: a test Neo4j on its own home and port, the whole pytest suite, then the server stops.
set -euo pipefail
cd "$(dirname "$0")/.."
export SCHOLARGRAPH_HOME="${SCHOLARGRAPH_TEST_HOME:-$PWD/.scholargraph-test}"
export SCHOLARGRAPH_NEO4J_PORT="${SCHOLARGRAPH_TEST_PORT:-17688}"
export SCHOLARGRAPH_HEAP="${SCHOLARGRAPH_HEAP:-1g}"
unset SCHOLARGRAPH_NEO4J_URI SCHOLARGRAPH_NEO4J_PASSWORD
cli=.venv/bin/scholargraph
$cli neo4j start
trap '$cli neo4j stop >/dev/null || true' EXIT
set +e
.venv/bin/pytest "$@"
code=$?
set -e
# pytest exits 5 when it collected nothing: that is a failure for us, not a pass.
exit $code
