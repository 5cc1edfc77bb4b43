#!/usr/bin/env bash
# `make demo`: start the managed Neo4j, initialise the schema, show what the graph holds.
set -euo pipefail
cd "$(dirname "$0")/.."
export SCHOLARGRAPH_HOME="${SCHOLARGRAPH_HOME:-$PWD/.scholargraph-demo}"
cli=.venv/bin/scholargraph
$cli neo4j start
$cli db init
$cli db stats
$cli neo4j status
echo
echo "Neo4j is running at bolt://127.0.0.1:${SCHOLARGRAPH_NEO4J_PORT:-7687} (stop it with: $cli neo4j stop)"
