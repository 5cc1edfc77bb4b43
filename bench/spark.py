"""The Spark engine against the in-process pipeline: wall time and peak RSS of each step, and Spark's measured
cost per task (partition), on the 1M-paper synthetic world.

    .venv/bin/python bench/spark.py [--corpus FILE | --papers 1000000] [--master local[2]] [--json OUT]

Both paths compute the networks (ACN, ACCN, VCCN), nCitation/avgCitation and the PageRank of the four networks,
and write them back to the same server (a throw-away managed one, bulk-loaded with the corpus):
- in process (the baseline): snapshot pull over Bolt, SciPy networks and PageRank, batched Bolt write-back;
- Spark: Parquet export (graph/parquet.py), Spark DataFrame networks and PageRank, write-back through the Neo4j
  Spark connector.
Peak RSS is sampled every 0.2 s over this process and all its children (the Spark JVM and its Python workers;
not the Neo4j server). Spark's per-stage executor time and task counts come from its REST API (the UI on
127.0.0.1); with them `docs/scale-out.md` projects a larger run. The Spark parity of the PageRank scores
(Spearman and max |diff| against the in-process ones) is printed for the four networks.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _server import bench_server  # noqa: E402

from scholargraph.graph.features import FeatureOptions, network_features, write_features  # noqa: E402
from scholargraph.graph.neo4j_store import Neo4jStore  # noqa: E402
from scholargraph.graph.snapshot import GraphSnapshot  # noqa: E402

UI_PORT = 4057
PAGE = os.sysconf("SC_PAGE_SIZE")


EXCLUDED: set[int] = set()  # the Neo4j server: this process starts it, but it is not the pipeline's memory


def _tree_rss_bytes(root: int) -> int:
    """RSS of `root` and every descendant (from /proc), without the EXCLUDED processes and theirs."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/statm") as fh:
                rss[int(entry)] = int(fh.read().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in EXCLUDED:
            continue
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


class RssSampler:
    """Peak RSS of this process tree while a step runs."""

    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, _tree_rss_bytes(os.getpid()))

    @contextmanager
    def step(self, name: str, results: dict):
        start = self.peak = _tree_rss_bytes(os.getpid())
        t0 = time.perf_counter()
        yield
        wall = time.perf_counter() - t0
        self.peak = max(self.peak, _tree_rss_bytes(os.getpid()))
        results[name] = {"seconds": wall, "peak_rss_mib": self.peak / 2**20, "start_rss_mib": start / 2**20}
        print(f"  {name:<34} {wall:8.1f} s   peak RSS {self.peak / 2**20:8,.0f} MiB (at the start "
              f"{start / 2**20:,.0f})", flush=True)


def _stage_totals(app_id: str) -> dict:
    """Executor run time (ms), tasks and shuffle/input sizes summed over the completed stages so far."""
    url = f"http://127.0.0.1:{UI_PORT}/api/v1/applications/{app_id}/stages?status=complete"
    with urllib.request.urlopen(url, timeout=30) as resp:
        stages = json.load(resp)
    keys = ("executorRunTime", "numCompleteTasks", "inputBytes", "shuffleReadBytes", "shuffleWriteBytes",
            "shuffleReadRecords", "memoryBytesSpilled", "diskBytesSpilled")
    return {k: sum(s.get(k, 0) for s in stages) for k in keys} | {"stages": len(stages)}


def in_process(store: Neo4jStore, options: FeatureOptions, sampler: RssSampler, results: dict):
    print("in process (baseline):", flush=True)
    with sampler.step("snapshot pull (Bolt)", results):
        snapshot = GraphSnapshot.from_store(store, quiet=True)
    with sampler.step("networks + counts + PageRank x4", results):
        f = network_features(snapshot, options)
    results["timings"] = f.timings
    for name, seconds in f.timings.items():
        print(f"      {name:<30} {seconds:8.1f} s")
    with sampler.step("write-back (Bolt)", results):
        write_features(store, snapshot, f, options, version="bench-in-process")
    # Only what the parity check needs stays: the snapshot's memory is not the Spark path's.
    expected = {"papers": (snapshot.paper_ids, f.paper_pagerank),
                "ACN": (snapshot.author_ids, f.author_pagerank_coauthor),
                "ACCN": (snapshot.author_ids, f.author_pagerank_citation),
                "VCCN": (snapshot.venue_ids, f.venue_pagerank)}
    del snapshot, f
    gc.collect()
    return expected


def on_spark(settings, store: Neo4jStore, options: FeatureOptions, sampler: RssSampler, results: dict, master: str,
             work: Path, stack: ExitStack):
    from scholargraph.spark.features import SparkFeatureEngine
    from scholargraph.spark.session import neo4j_options, spark_session

    print(f"Spark ({master}):", flush=True)
    with sampler.step("session start", results):
        spark = stack.enter_context(spark_session(settings, master, app="scholargraph-bench", extra_conf={
            "spark.ui.enabled": "true", "spark.ui.port": str(UI_PORT)}))
    app_id = spark.sparkContext.applicationId
    engine = SparkFeatureEngine(spark, store, neo4j_options(settings, settings.uri), work_dir=work / "spark")
    stack.callback(engine.close)
    with sampler.step("export parquet", results):
        manifest = engine.snapshot_path(None)
    size = sum(p.stat().st_size for p in Path(manifest).rglob("*.parquet"))
    results["parquet_bytes"] = size
    print(f"      parquet snapshot: {size / 2**20:,.0f} MiB", flush=True)
    before = _stage_totals(app_id)
    with sampler.step("networks + counts + PageRank x4 + write", results):
        counts, sizes = engine.network_features(options, "bench-spark",
                                                log=lambda m: print(f"      .. {m}", flush=True))
    after = _stage_totals(app_id)
    results["timings"] = engine.timings
    results["pagerank iterations"] = engine.pagerank_iterations
    results["network rows"] = engine.network_rows
    print(f"      network rows {engine.network_rows}; PageRank iterations {engine.pagerank_iterations}")
    for name, seconds in engine.timings.items():
        print(f"      {name:<30} {seconds:8.1f} s")
    stage = {k: after[k] - before[k] for k in after}
    results["spark stages"] = stage
    tasks = max(1, stage["numCompleteTasks"])
    print(f"      {stage['stages']} stages, {tasks:,} tasks, executor time {stage['executorRunTime'] / 1000:,.0f} "
          f"core-s: {stage['executorRunTime'] / tasks:,.0f} ms per task (partition); shuffle read "
          f"{stage['shuffleReadBytes'] / 2**30:,.2f} GiB ({stage['shuffleReadRecords']:,} records), "
          f"spilled {stage['diskBytesSpilled'] / 2**30:,.2f} GiB", flush=True)
    return engine


def parity(spark_store: Neo4jStore, expected_scores: dict, results: dict) -> None:
    import numpy as np
    from scipy.stats import spearmanr

    print("Spark scores against the in-process ones:")
    cases = (("papers", "Paper", "pagerank"), ("ACN", "Author", "pagerank_coauthor"),
             ("ACCN", "Author", "pagerank_citation"), ("VCCN", "Venue", "pagerank_citation"))
    out = {}
    for name, label, prop in cases:
        ids, expected = expected_scores[name]
        got_ids, values = spark_store.read_nodes(label, [prop])
        got = dict(zip(got_ids, values[prop]))
        spark_scores = np.array([got[i] for i in ids], dtype=np.float64)
        rho = float(spearmanr(spark_scores, expected).statistic)
        diff = float(np.abs(spark_scores - expected).max())
        out[name] = {"spearman": rho, "max_abs_diff": diff}
        print(f"  PageRank {name:<6} Spearman {rho:.7f}, max |diff| {diff:.3g}")
    results["parity"] = out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=None, help="an AMiner JSON-lines corpus (default: generate --papers)")
    ap.add_argument("--papers", type=int, default=1_000_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--work", default=None, help="work directory (default: a temp dir)")
    ap.add_argument("--json", default=None, help="write the figures to this file")
    ap.add_argument("--with-edges", action="store_true",
                    help="also write the COAUTHOR / CITES_AUTHOR / CITES_VENUE edges back (the `networks` step: "
                         "ACCN has ~100 edges per paper, 9.8M at 100k papers)")
    args = ap.parse_args()

    work = Path(args.work or tempfile.mkdtemp(prefix="sg-bench-spark-"))
    corpus = Path(args.corpus) if args.corpus else work / "corpus.aminer.jsonl"
    if not corpus.exists():
        from scholargraph.synth import SynthParams, generate

        t0 = time.perf_counter()
        generate(SynthParams(papers=args.papers, seed=7, reviewer_queries=0, citation_queries=0), work)
        print(f"generated {args.papers:,} papers in {time.perf_counter() - t0:.0f}s", flush=True)
    # Without --with-edges the networks are computed (PageRank needs them) but only the node properties are
    # written: the `pagerank` step, as `features --only pagerank` runs it.
    options = FeatureOptions(only=("networks", "pagerank") if args.with_edges else ("pagerank",))
    results: dict = {"master": args.master, "cores": os.cpu_count()}
    sampler = RssSampler()
    with bench_server(17697, heap="4g", pagecache="2g") as settings:
        settings = replace(settings, spark_driver_memory=args.driver_memory)
        from scholargraph.ingest.bulk_load import bulk_ingest

        t0 = time.perf_counter()
        bulk_ingest(settings, "aminer", [str(corpus)], quarantine_path=work / "q.jsonl", import_root=work / "import",
                    quiet=True, parse_workers=2)
        print(f"bulk-loaded {corpus} in {time.perf_counter() - t0:.0f}s", flush=True)
        from scholargraph.server import local_server

        server_pid = local_server.running_pid(settings)
        if server_pid:
            EXCLUDED.add(server_pid)
        with Neo4jStore(settings.uri, settings.neo4j_user, settings.neo4j_password, settings.neo4j_database) as store:
            stats = store.stats()
            results["graph"] = {"papers": stats["nodes"]["Paper"], "authors": stats["nodes"]["Author"],
                                "venues": stats["nodes"]["Venue"], "citations": stats["relationships"]["CITES"],
                                "authorships": stats["relationships"]["AUTHORED"]}
            print(f"graph: {results['graph']}", flush=True)
            steps: dict = {}
            expected = in_process(store, options, sampler, steps)
            results["in_process"] = steps
            steps = {}
            with ExitStack() as stack:
                on_spark(settings, store, options, sampler, steps, args.master, work, stack)
            results["spark"] = steps
            parity(store, expected, results)

    def steps_of(path: str) -> list[dict]:
        return [v for k, v in results[path].items() if isinstance(v, dict) and "seconds" in v]

    base = sum(v["seconds"] for v in steps_of("in_process"))
    ours = sum(v["seconds"] for k, v in results["spark"].items()
               if isinstance(v, dict) and "seconds" in v and k != "session start")
    print(f"end to end: in process {base:,.0f} s, Spark {args.master} {ours:,.0f} s (session start excluded): "
          f"Spark takes {ours / base:.2f}x the in-process time; peak RSS in process "
          f"{max(v['peak_rss_mib'] for v in steps_of('in_process')):,.0f} MiB, Spark tree "
          f"{max(v['peak_rss_mib'] for v in steps_of('spark')):,.0f} MiB")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=float))


if __name__ == "__main__":
    main()
