"""Interactive commands, cold and warm: each one run through the CLI as a user would, twice on an unchanged graph.

    SCHOLARGRAPH_HOME=... python bench/interactive.py [--paper ID] [--author ID] [--queries Q --candidates C]

The first call of each command builds what does not depend on the query (the reviewer evidence, the graph's
snapshot) and caches it per graph state (graph/snapshot_cache.py); the second finds it. The baseline is the
same command with the cache emptied first (`cold`), in the same run. Prints wall seconds per call, the median
of `--repeats` warm calls and the cold/warm ratio, plus `scholargraph <group> --help` (the interpreter's start
and the subcommand's imports: a floor no cache removes). The graph and its models must exist (`make demo`, or
ingest + features + the trains).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(args: list[str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "scholargraph.cli", "-q", *args], cwd=REPO, capture_output=True,
                          text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"scholargraph {' '.join(args)} -> {done.returncode}: {done.stderr.strip()[-500:]}")
    return wall


def _pick_ids() -> tuple[str, str, str]:
    """A paper of the last year with authors and text, its title and abstract as one draft, and the author
    with the most papers."""
    from scholargraph.config import Settings
    from scholargraph.graph.snapshot import GraphSnapshot
    from scholargraph.server.connect import open_store

    with open_store(Settings.load()) as store:
        snap = GraphSnapshot.from_store(store, with_text=True)
    import numpy as np

    papers_per_author = np.diff(snap.authorship.tocsr().indptr)
    author = snap.author_ids[int(np.argmax(papers_per_author))]
    authored = np.asarray(snap.authorship.sum(axis=0)).ravel() > 0
    last = snap.max_year
    i = next(i for i in range(snap.n_papers) if snap.paper_year[i] == last and authored[i] and snap.abstracts[i])
    return snap.paper_ids[i], author, snap.text(i)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper", default=None, help="paper id for the per-paper commands (default: one of the last year; "
                                                  "its text is the draft of `citations recommend`)")
    ap.add_argument("--author", default=None, help="author id for rising-stars explain (default: the most prolific)")
    ap.add_argument("--queries", default=None, help="submissions JSONL for a batch `reviewers recommend`")
    ap.add_argument("--candidates", default=None, help="their candidate lists (qrels or run lines)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip", default="", help="commands to leave out (comma-separated names below)")
    args = ap.parse_args()
    from scholargraph.config import Settings

    cache = Settings.load().models_dir / "cache"
    paper, author, draft = _pick_ids()
    paper, author = args.paper or paper, args.author or author
    commands = {
        "reviewers recommend --paper": ["reviewers", "recommend", "--paper", paper, "--format", "tsv"],
        "reviewers assign --paper": ["reviewers", "assign", "--paper", paper, "--format", "tsv"],
        "citations recommend (one draft)": ["citations", "recommend", "--title", draft[:200], "--abstract", draft,
                                            "--format", "tsv"],
        "rising-stars explain": ["rising-stars", "explain", author],
    }
    if args.queries:
        batch = ["reviewers", "recommend", "--queries", args.queries, "--format", "tsv"]
        commands["reviewers recommend --queries"] = batch + (["--candidates", args.candidates]
                                                             if args.candidates else [])
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    print(f"paper {paper}, author {author} [load avg {' '.join(f'{x:.1f}' for x in os.getloadavg())}]")
    print("| command | cold (no cache) s | warm s (median) | cold / warm | `<group> --help` s (start + imports) |")
    print("|---|---|---|---|---|")
    for name, cmd in commands.items():
        if any(name.startswith(s) for s in skip):
            continue
        shutil.rmtree(cache, ignore_errors=True)
        cold = _run(cmd)
        warm = statistics.median(_run(cmd) for _ in range(args.repeats))
        # The floor no cache removes: the interpreter and the subcommand's modules (the CLI loads only those).
        floor = statistics.median(_run([cmd[0], "--help"]) for _ in range(args.repeats))
        print(f"| {name} | {cold:.2f} | {warm:.2f} | {cold / warm:.1f}x | {floor:.2f} |", flush=True)


if __name__ == "__main__":
    main()
