"""`scholargraph jobs run`: how often one run reads the graph, and its wall time.

Issue 16 ("a `jobs run` reads the graph once"): on a home whose graph and models exist already (e.g. after
`DEMO_PAPERS=5000 make demo`), runs `jobs run --full` (every step rescoring) `--repeats` times and prints, per
run, the snapshots pulled (GraphSnapshot.from_store calls), the stored-vector reads (load_stored_vectors), the
rows read through the store's paged and streamed reads, and the wall time; then the medians. The counters wrap
the store and snapshot classes of whichever scholargraph is first on sys.path, so the same file measures an
older checkout (PYTHONPATH=/path/to/checkout) and this one, as a before/after pair on the same graph.

    SCHOLARGRAPH_HOME=.scholargraph-demo .venv/bin/python bench/jobs.py [--repeats 3] [--only features,...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _count(counter: Counter, cls, name: str, rows: bool = False) -> None:
    """Wrap `cls.name` so that each call (or, with `rows`, each row it yields) counts under `name`."""
    raw = cls.__dict__[name]
    original = raw.__func__ if isinstance(raw, classmethod) else raw

    if rows:
        def wrapper(self, *args, **kwargs):
            for item in original(self, *args, **kwargs):
                counter[f"rows:{name}"] += len(item) if name == "pages" else 1
                yield item
    else:
        def wrapper(*args, **kwargs):
            counter[name] += 1
            return original(*args, **kwargs)
    setattr(cls, name, classmethod(wrapper) if isinstance(raw, classmethod) else wrapper)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated steps (default: the whole pipeline)")
    args = ap.parse_args()

    import scholargraph
    from scholargraph.cli import main as cli
    from scholargraph.graph.neo4j_store import Neo4jStore
    from scholargraph.graph.snapshot import GraphSnapshot

    print(f"scholargraph from {Path(scholargraph.__file__).parent}; home {os.environ.get('SCHOLARGRAPH_HOME')}")
    counter: Counter = Counter()
    _count(counter, GraphSnapshot, "from_store")
    _count(counter, GraphSnapshot, "load_stored_vectors")
    _count(counter, Neo4jStore, "pages", rows=True)
    _count(counter, Neo4jStore, "stream", rows=True)
    command = ["-q", "jobs", "run", "--full"] + (["--only", args.only] if args.only else [])
    walls, snapshots, vector_reads, rows = [], [], [], []
    for k in range(args.repeats):
        counter.clear()
        t0 = time.perf_counter()
        try:
            cli.main(command, standalone_mode=False)
        except SystemExit as exc:
            if exc.code:
                raise
        wall = time.perf_counter() - t0
        read = counter["rows:pages"] + counter["rows:stream"]
        print(f"run {k + 1}: {wall:.1f} s, snapshots pulled {counter['from_store']}, stored-vector reads "
              f"{counter['load_stored_vectors']}, rows read {read:,}")
        walls.append(wall)
        snapshots.append(counter["from_store"])
        vector_reads.append(counter["load_stored_vectors"])
        rows.append(read)
    print(f"median of {args.repeats}: {statistics.median(walls):.1f} s, snapshots pulled "
          f"{statistics.median(snapshots):g}, stored-vector reads {statistics.median(vector_reads):g}, rows read "
          f"{statistics.median(rows):,.0f}")


if __name__ == "__main__":
    main()
