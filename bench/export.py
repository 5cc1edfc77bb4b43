"""The Parquet export in parallel id ranges against the serial export (one Bolt stream), on the graph the CLI's
settings name (the managed Neo4j of SCHOLARGRAPH_HOME, or SCHOLARGRAPH_NEO4J_URI), in the same run.

    SCHOLARGRAPH_HOME=... .venv/bin/python bench/export.py [--workers 1,2,4] [--repeats 3] [--as-of YEAR]

Each export goes to a fresh temporary directory; the runs alternate between the worker counts so that a change
of load hits them alike. Prints the median wall time of each count, its ratio to the serial export's, papers
per second, and whether each parallel export reads back as the serial one (read_snapshot, table by table).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def same_snapshot(a, b) -> bool:
    return (a.paper_ids == b.paper_ids and a.author_ids == b.author_ids and a.venue_ids == b.venue_ids
            and np.array_equal(a.paper_year, b.paper_year) and (a.citations != b.citations).nnz == 0
            and (a.authorship != b.authorship).nnz == 0 and a.titles == b.titles and a.abstracts == b.abstracts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--as-of", type=int, default=None)
    args = ap.parse_args()
    from scholargraph.config import Settings
    from scholargraph.graph.parquet import export_parquet, read_snapshot
    from scholargraph.server.connect import open_store

    counts = [int(w) for w in args.workers.split(",")]
    if 1 not in counts:
        counts.insert(0, 1)
    times: dict[int, list[float]] = {w: [] for w in counts}
    settings = Settings.load()
    with open_store(settings, quiet=True) as store, tempfile.TemporaryDirectory(prefix="sg-export-") as work:
        n = store.stats()["nodes"].get("Paper", 0)
        print(f"{n:,} papers; workers {counts}; {args.repeats} repeats" +
              ("" if args.as_of is None else f"; as of {args.as_of}"))
        kept: dict[int, Path] = {}
        for r in range(args.repeats):
            for w in counts:
                out = Path(work) / f"w{w}-r{r}"
                t0 = time.perf_counter()
                export_parquet(store, out, as_of=args.as_of, workers=w)
                times[w].append(time.perf_counter() - t0)
                print(f"  repeat {r} workers {w}: {times[w][-1]:.1f} s", flush=True)
                kept.setdefault(w, out)
        serial = read_snapshot(kept[1])
        base = statistics.median(times[1])
        print("\n| workers | median s | x serial | papers/s | same tables as serial |")
        print("|---|---|---|---|---|")
        for w in counts:
            med = statistics.median(times[w])
            same = True if w == 1 else same_snapshot(read_snapshot(kept[w]), serial)
            print(f"| {w} | {med:.1f} | {base / med:.2f} | {n / med:,.0f} | {same} |")


if __name__ == "__main__":
    main()
