"""PageRank pipeline end to end on a synthetic graph: export over Bolt, compute, write back.

Prints transfer, compute and write-back time, the ratio against networkx's pure-Python PageRank on the
same citation graph (the baseline) and against Neo4j GDS when the server has it, and peak RSS.

    .venv/bin/python bench/features.py [--papers 1000000] [--gds] [--skip-baseline]

The graph is a synthetic world (about 10 references per paper) generated into --work and ingested into
a throw-away managed server (or SCHOLARGRAPH_NEO4J_URI; its database is emptied first unless --reuse).
LDA on ACM-CR has its own bench: bench/lda.py.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _server import bench_server  # noqa: E402
from pagerank_reference import pagerank_networkx_python  # noqa: E402

from scholargraph.graph.neo4j_store import Neo4jStore  # noqa: E402
from scholargraph.graph.pagerank import pagerank  # noqa: E402
from scholargraph.graph.snapshot import GraphSnapshot  # noqa: E402


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=1_000_000)
    ap.add_argument("--work", default=None, help="directory for the synthetic corpus (default: a temp dir)")
    ap.add_argument("--gds", action="store_true", help="managed server with the GDS plugin; compare with it")
    ap.add_argument("--reuse", action="store_true", help="the database already holds the corpus: do not ingest")
    ap.add_argument("--skip-baseline", action="store_true", help="skip networkx's pure-Python PageRank")
    args = ap.parse_args()

    work = Path(args.work or tempfile.mkdtemp(prefix="sg-bench-features-"))
    with bench_server(17696, heap="4g", pagecache="2g", plugins="apoc,gds" if args.gds else "apoc") as settings:
        with Neo4jStore(settings.uri, settings.neo4j_user, settings.password,
                        settings.neo4j_database) as store:
            store.apply_schema()
            if not args.reuse:
                from scholargraph.ingest.loader import ingest
                from scholargraph.synth import SynthParams, generate

                corpus = work / "corpus.aminer.jsonl"
                if not corpus.exists():
                    t0 = time.perf_counter()
                    generate(SynthParams(papers=args.papers, seed=5, reviewer_queries=0, citation_queries=0), work)
                    print(f"generated {args.papers:,} papers in {time.perf_counter() - t0:.0f}s")
                store.reset()
                t0 = time.perf_counter()
                summary = ingest(store, "aminer", [str(corpus)], quarantine_path=work / "q.jsonl",
                                 checkpoint_dir=work / "ckpt", restart=True, quiet=True)
                print(f"ingested {summary.written:,} papers, {summary.citations:,} citations in "
                      f"{time.perf_counter() - t0:.0f}s ({summary.written / (time.perf_counter() - t0):,.0f} papers/s)")
            t0 = time.perf_counter()
            snap = GraphSnapshot.from_store(store, quiet=True)
            transfer = time.perf_counter() - t0
            print(f"graph: {snap.n_papers:,} papers, {snap.citations.nnz:,} citations, {snap.n_authors:,} authors")
            t0 = time.perf_counter()
            scores = pagerank(snap.citations, damping=0.85, max_iter=100, tol=1e-6)
            compute = time.perf_counter() - t0
            t0 = time.perf_counter()
            store.write_node_properties("Paper", snap.paper_ids, {"pagerank": scores})
            write = time.perf_counter() - t0
            total = transfer + compute + write
            print(f"PageRank pipeline (SciPy backend): transfer {transfer:.1f}s + compute {compute:.1f}s + "
                  f"write-back {write:.1f}s = {total:.1f}s (target < 120 s on 10M edges)")
            if not args.skip_baseline:
                t0 = time.perf_counter()
                pagerank_networkx_python(snap.citations, damping=0.85, max_iter=100, tol=1e-6)
                baseline = time.perf_counter() - t0
                print(f"networkx pure-Python PageRank (baseline, graph build included): {baseline:.1f}s -> "
                      f"compute ratio {baseline / compute:.0f}x, whole pipeline ratio {baseline / total:.1f}x")
            if store.has_gds():
                t0 = time.perf_counter()
                store.gds_pagerank("CITES", 0.85, 100, 1e-6)
                gds = time.perf_counter() - t0
                print(f"GDS PageRank (project + stream + drop, on the server): {gds:.1f}s -> "
                      f"SciPy transfer+compute is {(transfer + compute) / gds:.2f}x of it")
            else:
                print("GDS not available on this server (use --gds with the managed server)")
            print(f"peak RSS of this process: {rss_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
