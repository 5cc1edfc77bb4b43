#!/usr/bin/env bash
# `make demo`: the main job end to end on a synthetic world with planted ground truth:
# Neo4j -> synthetic corpus -> ingest -> features -> rising stars, reviewers, citations -> report.
set -euo pipefail
cd "$(dirname "$0")/.."
export SCHOLARGRAPH_HOME="${SCHOLARGRAPH_HOME:-$PWD/.scholargraph-demo}"
PAPERS="${DEMO_PAPERS:-20000}"
OUT="$SCHOLARGRAPH_HOME/synth-$PAPERS"
REPORT="$SCHOLARGRAPH_HOME/report"
cli=.venv/bin/scholargraph
started=$(date +%s)
mkdir -p "$REPORT"
md="$REPORT/report.md"

section() { echo; echo "== $*"; printf '\n## %s\n\n' "$*" >> "$md"; }
record() { # run a command, show its output (progress bars too), keep its results in the report
  echo "\$ scholargraph $*"
  { echo '```'; echo "\$ scholargraph $*"; } >> "$md"
  $cli "$@" | tee -a "$md"   # stdout only: progress bars (stderr) stay on the terminal
  echo '```' >> "$md"
}

printf '# scholargraph demo report\n\nA synthetic world of %s papers with planted ground truth (seed 42).\n' "$PAPERS" > "$md"

section "1. The managed Neo4j"
record neo4j start
record db init

section "2. A synthetic scholarly world with planted ground truth"
if [ ! -f "$OUT/world.json" ]; then
  $cli synth --papers "$PAPERS" --seed 42 --out "$OUT"
else
  echo "reusing $OUT"
fi

section "3. Ingest (resumable, idempotent)"
record ingest aminer "$OUT/corpus.aminer.jsonl"

section "4. Graph features: networks, PageRank, LDA topics, vectors"
record features
record db stats

section "5. Rising stars (IIRL)"
AS_OF=$(python3 -c "import json; print(json.load(open('$OUT/world.json'))['params']['end_year'] - 3)" 2>/dev/null || echo 2020)
record rising-stars evaluate --as-of "$AS_OF" --horizon 3 --repeats 2 --plot "$REPORT/rising_stars.png"
record rising-stars train --as-of "$AS_OF" --horizon 3
record rising-stars score --out "$REPORT/rising_stars.tsv"
record query top_rising_stars -p topic=topic:0 -p limit=5
printf '\n![Pre@k%% versus k](rising_stars.png)\n' >> "$md"

section "6. Citation recommendation (Citeomatic: NNSelect + NNRank, BM25 baseline)"
record citations train --epochs 2 --max-triplets 60000
record citations evaluate --queries "$OUT/citations.queries.jsonl" --qrels "$OUT/citations.qrels" \
  --plot "$REPORT/citations.png"
printf '\n![F1@20, MRR and recall per system](citations.png)\n' >> "$md"
head -1 "$OUT/citations.queries.jsonl" > "$REPORT/one-draft.jsonl"
record citations recommend --queries "$REPORT/one-draft.jsonl" --k 5

section "7. Reviewer recommendation (RECO-Rank) with evidence"
record reviewers train
record reviewers evaluate --queries "$OUT/reviewers.queries.jsonl" --qrels "$OUT/reviewers.qrels" \
  --candidates "$OUT/reviewers.candidates" --plot "$REPORT/reviewers.png"
printf '\n![Soft and hard precision per ranker](reviewers.png)\n' >> "$md"
head -1 "$OUT/reviewers.queries.jsonl" > "$REPORT/one-submission.jsonl"
record reviewers recommend --queries "$REPORT/one-submission.jsonl" --k 3

section "8. Reviewer assignment: loads, conflicts, a senior reviewer per paper, against greedy"
# The submissions: the latest year's papers of the busiest venue of that year.
read -r YEAR VENUE < <(python3 - "$OUT/corpus.aminer.jsonl" <<'PY'
import collections, json, sys
rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
year = max(r.get("year") or 0 for r in rows)
venues = collections.Counter((r.get("venue") or {}).get("raw") for r in rows if r.get("year") == year)
print(year, venues.most_common(1)[0][0])
PY
)
assign=(reviewers assign --venue "$VENUE" --year "$YEAR" --per-paper 3 --max-load 3 --senior 'papers>=10'
        --format csv --out "$REPORT/assignment.csv" --write)
echo "\$ scholargraph ${assign[*]@Q}"
{ echo '```'; echo "\$ scholargraph ${assign[*]@Q}"; } >> "$md"
$cli -q "${assign[@]}" 2>&1 | tee -a "$md"   # the rows go to the CSV; the summary and the write note to stderr
echo '```' >> "$md"
FIRST=$(sed -n 2p "$REPORT/assignment.csv" | cut -d, -f1)
record query assignment_of_paper -p "paperId=$FIRST"

section "9. Scoring jobs and the latest runs"
record jobs run
record query latest_runs -p limit=5

elapsed=$(( $(date +%s) - started ))
printf '\nDemo finished in %s s.\n' "$elapsed" >> "$md"
echo
echo "demo finished in $elapsed s; report: $md"
echo "Neo4j is running at bolt://127.0.0.1:${SCHOLARGRAPH_NEO4J_PORT:-7687} (no auth). Open the Neo4j Browser"
echo "(https://browser.neo4j.io, connect to that URI) or run the example Cypher of the library:"
echo "  $cli query --list"
echo "  $cli query author_profile -p authorId=\$(head -2 $REPORT/rising_stars.tsv | tail -1 | cut -f1)"
echo "Stop it with: SCHOLARGRAPH_HOME=$SCHOLARGRAPH_HOME $cli neo4j stop"
