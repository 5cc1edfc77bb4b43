#!/usr/bin/env bash
# `make demo`: the main job end to end on a synthetic world with planted ground truth:
# Neo4j -> synthetic corpus -> ingest -> features -> rising stars, reviewers, citations -> report.
set -euo pipefail
cd "$(dirname "$0")/.."
export SCHOLARGRAPH_HOME="${SCHOLARGRAPH_HOME:-$PWD/.scholargraph-demo}"
PAPERS="${DEMO_PAPERS:-20000}"
OUT="$SCHOLARGRAPH_HOME/synth-$PAPERS"
# DEMO_DATA=FILE runs the demo on a real AMiner-format dump (e.g. ../shared/data/hepth/hepth-1992-2000.aminer.jsonl)
# instead of a synthetic world: the same steps, evaluated on the time split of the data itself.
DATA="${DEMO_DATA:-}"
if [ -n "$DATA" ] && [ ! -f "$DATA" ]; then
  echo "DEMO_DATA=$DATA: no such file (an AMiner-format JSON-lines dump)" >&2
  exit 2
fi
REPORT="$SCHOLARGRAPH_HOME/report"
cli=.venv/bin/scholargraph
started=$(date +%s)
mkdir -p "$REPORT"
md="$REPORT/report.md"

section() { echo; echo "== $*"; printf '\n## %s\n\n' "$*" >> "$md"; }
STEPS=()  # "seconds|step" of each command, for the report's table of step times
timed() { # LABEL COMMAND...: run it, keep its wall time under LABEL
  local label=$1 t0=$SECONDS
  shift
  "$@"
  STEPS+=("$((SECONDS - t0))|$label")
}
run_cli() { $cli "$@" | tee -a "$md"; }   # stdout only: progress bars (stderr) stay on the terminal
run_cli_quiet() { $cli -q "$@" 2>&1 | tee -a "$md"; }   # rows to a file, the summary (stderr) to the report
record() { # run a command, show its output (progress bars too), keep its results and its time in the report
  local runner=run_cli
  if [ "$1" = "--quiet" ]; then runner=run_cli_quiet; shift; fi
  echo "\$ scholargraph $*"
  { echo '```'; echo "\$ scholargraph $*"; } >> "$md"
  timed "${*:1:2}" "$runner" "$@"
  echo '```' >> "$md"
}

# The text encoder of `features` (docs/vectors.md compares them). A real dump's demo takes TF-IDF+SVD unless
# DEMO_ENCODER names another: MiniLM int8 reads hep-th's 22k abstracts in about 6 minutes on 2 cores with AVX-512
# VNNI and 27 without, half the rest of the demo or more. The synthetic world's text is not natural language,
# and `auto` takes TF-IDF+SVD there.
if [ -n "$DATA" ]; then ENCODER="${DEMO_ENCODER:-tfidf-svd}"; else ENCODER="${DEMO_ENCODER:-auto}"; fi

if [ -n "$DATA" ]; then
  CORPUS="$DATA"
  printf '# scholargraph demo report\n\nReal data: %s.\n' "$DATA" > "$md"
else
  CORPUS="$OUT/corpus.aminer.jsonl"
  printf '# scholargraph demo report\n\nA synthetic world of %s papers with planted ground truth (seed 42).\n' "$PAPERS" > "$md"
fi

section "1. The managed Neo4j"
record neo4j start
record db init

if [ -n "$DATA" ]; then
  section "2. Real data: $(basename "$DATA")"
  echo "no synthetic world: the models are evaluated on the data's own time split"
else
  section "2. A synthetic scholarly world with planted ground truth"
  if [ ! -f "$OUT/world.json" ]; then
    timed "synth" $cli synth --papers "$PAPERS" --seed 42 --out "$OUT"
  else
    echo "reusing $OUT"
  fi
fi

section "3. Ingest (resumable, idempotent)"
record ingest aminer "$CORPUS"
# The data's last year: the time splits of the evaluations below are taken from it.
LAST_YEAR=$(python3 - "$CORPUS" <<'PY'
import json, sys
print(max((json.loads(line).get("year") or 0) for line in open(sys.argv[1], encoding="utf-8") if line.strip()))
PY
)

section "4. Graph features: networks, PageRank, LDA topics, vectors"
printf 'Text vectors: `--encoder %s` (DEMO_ENCODER=minilm-onnx-int8 for MiniLM).\n\n' "$ENCODER" >> "$md"
record features --encoder "$ENCODER"
record db stats

section "5. Rising stars (IIRL)"
AS_OF=$((LAST_YEAR - 3))  # labels: the citations of the last three years
record rising-stars evaluate --as-of "$AS_OF" --horizon 3 --repeats 2 --plot "$REPORT/rising_stars.png"
record rising-stars train --as-of "$AS_OF" --horizon 3
record --quiet rising-stars score --write --format tsv --out "$REPORT/rising_stars.tsv"
record query top_rising_stars -p topic=topic:0 -p limit=5
printf '\n![Pre@k%% versus k](rising_stars.png)\n' >> "$md"
STAR=$(sed -n 2p "$REPORT/rising_stars.tsv" | cut -f1)  # the overall top rising star
record rising-stars explain "$STAR" --picture "$REPORT/rising_star.png"
printf '\n![The top rising star and their most frequent co-authors](rising_star.png)\n' >> "$md"

section "6. Citation recommendation (Citeomatic: NNSelect + NNRank, BM25 baseline)"
CITATION_TRAINING=(--epochs 2 --max-triplets 60000)  # the trained model's size, and the evaluated one's
record citations train "${CITATION_TRAINING[@]}"
if [ -n "$DATA" ]; then
  # The last year's papers as drafts (title and abstract only), their references as the gold.
  record citations evaluate --time-split $((LAST_YEAR - 1)) --max-queries 300 "${CITATION_TRAINING[@]}" \
    --plot "$REPORT/citations.png"
  python3 - "$CORPUS" "$LAST_YEAR" > "$REPORT/one-draft.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line) if line.strip() else {}
    if r.get("year") == int(sys.argv[2]) and r.get("abstract"):
        # The graph's id of the paper (qualified: a bare id is taken as a draft's label), so that it is
        # excluded from its own recommendations and its authors are conflicts.
        print(json.dumps({"id": "aminer:" + r["id"], "title": r.get("title"), "abstract": r["abstract"],
                          "year": r["year"]}))
        break
PY
else
  record citations evaluate --queries "$OUT/citations.queries.jsonl" --qrels "$OUT/citations.qrels" \
    --plot "$REPORT/citations.png"
  head -1 "$OUT/citations.queries.jsonl" > "$REPORT/one-draft.jsonl"
fi
printf '\n![F1@20, MRR and recall per system](citations.png)\n' >> "$md"
record citations recommend --queries "$REPORT/one-draft.jsonl" --k 5

section "7. Reviewer recommendation (RECO-Rank) with evidence"
record reviewers train
if [ -n "$DATA" ]; then
  # No judged candidates in a dump: one of the last year's papers as the submission.
  cp "$REPORT/one-draft.jsonl" "$REPORT/one-submission.jsonl"
else
  record reviewers evaluate --queries "$OUT/reviewers.queries.jsonl" --qrels "$OUT/reviewers.qrels" \
    --candidates "$OUT/reviewers.candidates" --plot "$REPORT/reviewers.png"
  printf '\n![Soft and hard precision per ranker](reviewers.png)\n' >> "$md"
  head -1 "$OUT/reviewers.queries.jsonl" > "$REPORT/one-submission.jsonl"
fi
record reviewers recommend --queries "$REPORT/one-submission.jsonl" --k 3 --picture "$REPORT/reviewer_evidence.png"
printf '\n![The top suggestion: the submission, the evidence papers of the reviewer, shared topics, citations](reviewer_evidence.png)\n' >> "$md"

section "8. Reviewer assignment: loads, conflicts, a senior reviewer per paper, against greedy"
# The submissions: the latest year's papers of the busiest venue of that year, or 100 of them when there are
# more (a real dump's venue may be a whole field), one command-line argument per line.
mapfile -t SUBMISSIONS < <(python3 - "$CORPUS" <<'PY'
import collections, json, sys
rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
year = max(r.get("year") or 0 for r in rows)
latest = [r for r in rows if r.get("year") == year]
venues = collections.Counter((r.get("venue") or {}).get("raw") for r in latest if (r.get("venue") or {}).get("raw"))
venue, n = venues.most_common(1)[0] if venues else (None, len(latest))
if venue is not None and n <= 200:
    print("--venue", venue, "--year", year, sep="\n")
else:
    same = [r for r in latest if venue is None or (r.get("venue") or {}).get("raw") == venue]
    n = min(len(same), 100)
    for r in sorted(same, key=lambda r: r["id"])[:n]:
        print("--paper", "aminer:" + r["id"], sep="\n")
# Senior: at least N papers, the strictest N up to 10 whose reviewers can cover every paper with room to spare
# (3 papers each, half again the papers); a small real dump has few authors with 10 papers.
papers = collections.Counter(a.get("id") or a.get("name") if isinstance(a, dict) else a
                             for r in rows for a in r.get("authors") or ())
senior = max([k for k in range(2, 11) if 3 * sum(c >= k for c in papers.values()) >= 1.5 * n] or [2])
print("--senior", f"papers>={senior}", sep="\n")
PY
)
record --quiet reviewers assign "${SUBMISSIONS[@]}" --per-paper 3 --max-load 3 --format csv \
  --out "$REPORT/assignment.csv" --write
FIRST=$(sed -n 2p "$REPORT/assignment.csv" | cut -d, -f1)
record query assignment_of_paper -p "paperId=$FIRST"

section "9. Scoring jobs and the latest runs"
record jobs run
record query latest_runs -p limit=5

elapsed=$(( $(date +%s) - started ))
{
  printf '\n## Step times\n\n| step | seconds |\n|---|---:|\n'
  for step in "${STEPS[@]}"; do printf '| %s | %s |\n' "${step#*|}" "${step%%|*}"; done
  printf '| **the whole demo** | **%s** |\n' "$elapsed"
  printf '\nDemo finished in %s s.\n' "$elapsed"
} >> "$md"
echo
echo "step times (s):"
for step in "${STEPS[@]}"; do printf '  %6s  %s\n' "${step%%|*}" "${step#*|}"; done
echo "demo finished in $elapsed s; report: $md"
# The running server's own ports (its run files), whatever the environment says now.
STATUS=$($cli neo4j status)
URI=$(sed -n 's/^uri: *//p' <<<"$STATUS")
BROWSER=$(sed -n 's/^browser: *//p' <<<"$STATUS")
if [ -n "${SCHOLARGRAPH_NEO4J_PASSWORD:-}" ]; then
  AUTH="user neo4j, the password of SCHOLARGRAPH_NEO4J_PASSWORD"
elif [ -f "$SCHOLARGRAPH_HOME/neo4j-password" ]; then
  AUTH="user neo4j, the password in $SCHOLARGRAPH_HOME/neo4j-password"
else
  AUTH="no user or password: it was started with --no-auth"
fi
if [ -n "${SCHOLARGRAPH_NEO4J_URI:-}" ]; then
  echo "The demo used the Neo4j at $SCHOLARGRAPH_NEO4J_URI. Run the example Cypher of the library:"
elif [ -n "$BROWSER" ] && [ "$BROWSER" != "-" ]; then
  echo "Neo4j is running at $URI. Open the Neo4j Browser at $BROWSER and connect ($AUTH):"
  echo "the guide of the query library opens by itself, one runnable query a slide. Or, from here:"
else
  echo "Neo4j is running at $URI (its Browser is off: SCHOLARGRAPH_NEO4J_HTTP_PORT=0)."
  echo "Run the example Cypher of the library:"
fi
echo "  $cli query --list"
echo "  $cli query author_profile -p authorId=\$(head -2 $REPORT/rising_stars.tsv | tail -1 | cut -f1)"
echo "Stop it with: SCHOLARGRAPH_HOME=$SCHOLARGRAPH_HOME $cli neo4j stop"
