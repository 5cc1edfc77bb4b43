"""Store write throughput: one transaction per record (baseline) versus batched UNWIND writes.

Each paper carries 3 authors and 10 references, written with its authorship and citation edges.
Prints papers/s per batch size and the ratio against the per-record baseline, then the managed
server's cold-start time with the jars already cached.

    .venv/bin/python bench/store_write.py [--papers 30000] [--baseline-papers 500]

Uses SCHOLARGRAPH_NEO4J_URI when set, else a throw-away managed server in a temporary home.
The database is emptied before each measurement: do not point it at data you want to keep.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _server import bench_server  # noqa: E402

from scholargraph.config import Settings  # noqa: E402
from scholargraph.graph.neo4j_store import Neo4jStore  # noqa: E402
from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle  # noqa: E402
from scholargraph.server import local_server  # noqa: E402


def make_bundles(n: int, offset: int = 0, authors_per_paper: int = 3, refs_per_paper: int = 10,
                 author_pool: int = 20_000) -> list[PaperBundle]:
    """Deterministic bundles; references point at earlier papers so most are real, not stubs."""
    bundles = []
    for k in range(offset, offset + n):
        pid = f"bench:p{k}"
        authors = tuple(Author(id=f"bench:a{(k * 7 + j * 131) % author_pool}", name=f"Author {j}")
                        for j in range(authors_per_paper))
        refs = tuple(Citation(pid, f"bench:p{(k * 31 + r * 977) % max(k, 1)}") for r in range(refs_per_paper)
                     if k > 0)
        bundles.append(PaperBundle(
            paper=Paper(id=pid, title=f"Paper {k} on graph ranking", abstract="An abstract. " * 20,
                        year=1990 + k % 30, sources=(pid,)),
            authors=authors,
            authorships=tuple(Authorship(a.id, pid, j + 1) for j, a in enumerate(authors)),
            citations=tuple(dict.fromkeys(refs))))
    return bundles


def measure(store: Neo4jStore, bundles: list[PaperBundle], batch_size: int) -> float:
    store.reset()
    t0 = time.perf_counter()
    for start in range(0, len(bundles), batch_size):
        store.write_bundles(bundles[start:start + batch_size])
    return len(bundles) / (time.perf_counter() - t0)


def cold_start_seconds(cache: Path, repeats: int = 3) -> list[float]:
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="sg-bench-") as home:
            settings = replace(Settings.load(), home=Path(home), cache=cache, neo4j_port=17699, neo4j_uri=None)
            local_server.provision(settings, quiet=True)  # jars cached: not part of the measure
            t0 = time.perf_counter()
            local_server.start(settings, quiet=True)
            times.append(time.perf_counter() - t0)
            local_server.stop(settings)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=30_000)
    ap.add_argument("--baseline-papers", type=int, default=500)
    ap.add_argument("--batch-sizes", default="1000,5000,10000")
    ap.add_argument("--repeats", type=int, default=3, help="runs per setting; the median is reported")
    args = ap.parse_args()

    with bench_server(17698) as settings:
        with Neo4jStore(settings.uri, settings.neo4j_user, settings.password,
                        settings.neo4j_database) as store:
            store.apply_schema()
            base_bundles = make_bundles(args.baseline_papers)
            baseline = statistics.median(measure(store, base_bundles, 1) for _ in range(args.repeats))
            print(f"{'setting':<28}{'papers/s':>12}{'edges/s':>12}{'vs baseline':>14}")
            edges_per_paper = 3 + 10
            print(f"{'1 tx per record (baseline)':<28}{baseline:>12,.0f}{baseline * edges_per_paper:>12,.0f}"
                  f"{1.0:>13.1f}x")
            bundles = make_bundles(args.papers)
            for size in (int(s) for s in args.batch_sizes.split(",")):
                rate = statistics.median(measure(store, bundles, size) for _ in range(args.repeats))
                print(f"{f'batches of {size:,}':<28}{rate:>12,.0f}{rate * edges_per_paper:>12,.0f}"
                      f"{rate / baseline:>13.1f}x")
            store.reset()
    starts = cold_start_seconds(settings.cache)
    print(f"cold start with cached jars: median {statistics.median(starts):.1f}s "
          f"(runs: {', '.join(f'{s:.1f}' for s in starts)}; target < 30 s)")
    print(f"machine: {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
