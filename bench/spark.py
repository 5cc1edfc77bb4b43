"""The Spark engine against the in-process pipeline, every step of `features`: wall time, core-seconds and peak
RSS of each, and Spark's measured cost per task (partition), on the 1M-paper synthetic world.

    .venv/bin/python bench/spark.py [--corpus FILE | --papers 1000000] [--master local[2]] [--json OUT]
        [--steps export,networks,topics,vectors] [--topic-fit-sample 100000] [--encode-sample 2000]

Both paths compute each step and write it back to the same server (a throw-away managed one, bulk-loaded with
the corpus):
- in process (the baseline): snapshot pull over Bolt; SciPy networks and PageRank; gensim LDA; the pretrained
  encoder; batched Bolt write-back;
- Spark: the Parquet export (graph/parquet.py) read in `--export-workers` id ranges, beside a one-stream export
  (its baseline); DataFrame networks and PageRank (spark/graph.py); MLlib online LDA and the topic inference in
  partitions (spark/topics.py); the encoder in partitions (spark/vectors.py); write-back through the connector.

Both topic fits read the same `--topic-fit-sample` papers (at random, fixed seed): the fit is the one step whose
cost is not linear in the corpus at a fixed number of passes, and the fit on a sample is how a 100M-paper run
would train (docs/scale-out.md); the inference and the author features run on every paper. The encoder reads
the same `--encode-sample` papers in both (13-56 docs/s on 2 cores: the whole 1M world would be hours); its
per-paper cost is what the projection uses.

Core-seconds: in process, this process's CPU time (time.process_time: every thread; the Neo4j server is not
counted); on Spark, the executors' run time summed over the step's tasks (its REST API on 127.0.0.1), and for
the export (which runs on the driver) the driver's CPU time. Peak RSS is sampled every 0.2 s over this process
and all its children (the Spark JVM and its Python workers; not the Neo4j server). The parity of the outputs
(PageRank Spearman and max |diff|, topic mixtures max |diff| under the same model, text vectors' cosine) is
printed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _server import bench_server  # noqa: E402

from scholargraph.graph.features import (  # noqa: E402
    FeatureOptions,
    compute_features,
    encode_papers,
    network_features,
    write_features,
    write_text_vector_rows,
)
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
        t0, cpu0 = time.perf_counter(), time.process_time()
        figures: dict = {}
        yield figures  # the step may add its own figures (Spark's executor time)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        self.peak = max(self.peak, _tree_rss_bytes(os.getpid()))
        results[name] = {"seconds": wall, "process_cpu_s": cpu, "peak_rss_mib": self.peak / 2**20,
                         "start_rss_mib": start / 2**20, **figures}
        extra = f", executors {figures['executor_core_s']:,.0f} core-s" if "executor_core_s" in figures else ""
        print(f"  {name:<34} {wall:8.1f} s  (this process's CPU {cpu:8.1f} s{extra})   peak RSS "
              f"{self.peak / 2**20:8,.0f} MiB (at the start {start / 2**20:,.0f})", flush=True)


def _stage_totals(app_id: str) -> dict:
    """Executor run time (ms), tasks and shuffle/input sizes summed over the completed stages so far."""
    url = f"http://127.0.0.1:{UI_PORT}/api/v1/applications/{app_id}/stages?status=complete"
    with urllib.request.urlopen(url, timeout=30) as resp:
        stages = json.load(resp)
    keys = ("executorRunTime", "numCompleteTasks", "inputBytes", "shuffleReadBytes", "shuffleWriteBytes",
            "shuffleReadRecords", "memoryBytesSpilled", "diskBytesSpilled")
    return {k: sum(s.get(k, 0) for s in stages) for k in keys} | {"stages": len(stages)}


def _stage_delta(before: dict, after: dict) -> dict:
    stage = {k: after[k] - before[k] for k in after}
    tasks = max(1, stage["numCompleteTasks"])
    stage["executor_core_s"] = stage["executorRunTime"] / 1000
    stage["ms_per_task"] = stage["executorRunTime"] / tasks
    return stage


@contextmanager
def spark_step(sampler: RssSampler, name: str, results: dict, app_id: str):
    """A Spark step: RssSampler.step with the executors' run time and tasks of the stages it completed."""
    before = _stage_totals(app_id)
    with sampler.step(name, results) as figures:
        yield figures
        stage = _stage_delta(before, _stage_totals(app_id))
        figures.update({"executor_core_s": stage["executor_core_s"], "tasks": stage["numCompleteTasks"],
                        "ms_per_task": stage["ms_per_task"], "stages": stage})


@dataclass
class Work:
    """What both paths compute, chosen once: the steps, the topic model's hyperparameters and fit sample, the
    encoder and the papers it encodes."""

    steps: tuple[str, ...]
    options: FeatureOptions
    fit_ids: list[str]
    encode_ids: list[str]
    encoder_name: str
    chunk: int

    def topic_model(self):
        from scholargraph.graph.topics import TopicModel

        return TopicModel(num_topics=self.options.num_topics, random_state=self.options.seed)


def choose_samples(store: Neo4jStore, fit_sample: int, encode_sample: int, seed: int = 7
                   ) -> tuple[list[str], list[str]]:
    """The topic fit's papers and the encoded papers: random papers with a title or abstract, in id order."""
    import numpy as np

    ids, values = store.read_nodes("Paper", ["title", "abstract"])
    with_text = [pid for pid, t, a in zip(ids, values["title"], values["abstract"]) if t or a]
    rng = np.random.default_rng(seed)

    def pick(n: int) -> list[str]:
        chosen = rng.choice(len(with_text), size=min(n, len(with_text)), replace=False)
        return sorted(with_text[int(i)] for i in chosen)

    return pick(fit_sample), pick(encode_sample)


def in_process(store: Neo4jStore, work: Work, sampler: RssSampler, results: dict) -> dict:
    import numpy as np

    from scholargraph.graph.encoders import make_encoder

    print("in process (baseline):", flush=True)
    with sampler.step("snapshot pull (Bolt)", results):
        snapshot = GraphSnapshot.from_store(store, quiet=True, with_text=bool({"topics", "vectors"} & set(work.steps)))
    expected: dict = {}
    if "networks" in work.steps:
        options = work.options
        with sampler.step("networks + counts + PageRank x4", results):
            f = network_features(snapshot, options)
        results["timings"] = f.timings
        for name, seconds in f.timings.items():
            print(f"      {name:<30} {seconds:8.1f} s")
        with sampler.step("networks write-back (Bolt)", results):
            write_features(store, snapshot, f, options, version="bench-in-process")
        # Only what the parity check needs stays: the snapshot's memory is not the Spark path's.
        expected |= {"papers": (snapshot.paper_ids, f.paper_pagerank),
                     "ACN": (snapshot.author_ids, f.author_pagerank_coauthor),
                     "ACCN": (snapshot.author_ids, f.author_pagerank_citation),
                     "VCCN": (snapshot.venue_ids, f.venue_pagerank)}
        del f
    index = snapshot.paper_index
    if "topics" in work.steps:
        with sampler.step(f"LDA fit (gensim, {len(work.fit_ids):,} papers)", results):
            model = work.topic_model().fit([snapshot.text(index[pid]) for pid in work.fit_ids])
        options = replace(work.options, only=("topics",))
        with sampler.step("LDA infer + author features (all)", results):
            f = compute_features(snapshot, options, topic_model=model)
        with sampler.step("topics write-back (Bolt)", results):
            write_features(store, snapshot, f, options, version="bench-in-process")
        expected["model"] = model
        expected["topic_vector"] = (snapshot.paper_ids, f.paper_topics)
        expected["topic_diversity"] = (snapshot.author_ids, f.topic_diversity)
        del f
    if "vectors" in work.steps:
        mask = np.zeros(snapshot.n_papers, dtype=bool)
        mask[[index[pid] for pid in work.encode_ids]] = True
        encoder = make_encoder(work.encoder_name).fit([])
        written: dict = {}  # the parity's reference: the vectors as they were written, kept by the sink

        def write(part, vectors, snapshot=snapshot):
            write_text_vector_rows(store, snapshot, encoder.key, part, vectors)
            written.update((snapshot.paper_ids[int(i)], v) for i, v in zip(part, vectors))

        with sampler.step(f"text vectors + write ({int(mask.sum()):,} papers)", results):
            encode_papers(snapshot, encoder, mask, sink=write, chunk=work.chunk)
        expected["encoder"] = encoder
        expected["semantic_vector"] = written
        store.write_node_properties("Paper", work.encode_ids, {name: [None] * len(work.encode_ids) for name in
                                                               ("semantic_vector", "semantic_encoder",
                                                                "semantic_text_hash")})
    del snapshot
    gc.collect()
    return expected


def on_spark(settings, store: Neo4jStore, work: Work, sampler: RssSampler, results: dict, master: str,
             work_dir: Path, stack: ExitStack, expected: dict, export_workers: int):
    from scholargraph.graph import parquet
    from scholargraph.spark import topics as st
    from scholargraph.spark.features import SparkFeatureEngine
    from scholargraph.spark.session import neo4j_options, spark_session
    from scholargraph.spark.vectors import encode_to_neo4j

    print(f"Spark ({master}):", flush=True)
    with sampler.step("session start", results):
        spark = stack.enter_context(spark_session(settings, master, app="scholargraph-bench", extra_conf={
            "spark.ui.enabled": "true", "spark.ui.port": str(UI_PORT)}))
    app_id = spark.sparkContext.applicationId
    engine = SparkFeatureEngine(spark, store, neo4j_options(settings, settings.uri), work_dir=work_dir / "spark",
                                export_workers=export_workers)
    stack.callback(engine.close)
    if "export" in work.steps:
        # The baseline of the export: the same tables read as one Bolt stream (export parquet --workers 1).
        with sampler.step("export parquet (1 stream, baseline)", results):
            parquet.export_parquet(store, work_dir / "export-1", with_text=True, workers=1)
        shutil.rmtree(work_dir / "export-1", ignore_errors=True)
    with sampler.step(f"export parquet (id ranges x{export_workers})", results):
        manifest = engine.snapshot_path(None)
    size = sum(p.stat().st_size for p in Path(manifest).rglob("*.parquet"))
    results["parquet_bytes"] = size
    print(f"      parquet snapshot: {size / 2**20:,.0f} MiB", flush=True)
    if "networks" in work.steps:
        with spark_step(sampler, "networks + counts + PageRank x4 + write", results, app_id):
            engine.network_features(work.options, "bench-spark", log=lambda m: print(f"      .. {m}", flush=True))
        results["timings"] = dict(engine.timings)
        results["pagerank iterations"] = engine.pagerank_iterations
        results["network rows"] = engine.network_rows
        print(f"      network rows {engine.network_rows}; PageRank iterations {engine.pagerank_iterations}")
    if "topics" in work.steps:
        papers = spark.read.parquet(str(engine.snapshot_path(None) / "papers")).select("id", "title", "abstract")
        sample = spark.createDataFrame([(pid,) for pid in work.fit_ids], "id string")
        with spark_step(sampler, f"LDA fit (MLlib online, {len(work.fit_ids):,} papers)", results, app_id):
            model, stages = st.fit_topic_model(spark, papers.join(sample, "id"), work.topic_model())
        results["LDA stages"] = stages
        # The in-process model's mixtures are the reference of the inference: the same model on both sides.
        with spark_step(sampler, "LDA infer + author features + write (all)", results, app_id):
            engine.topic_features(work.options, expected["model"], "bench-spark", log=lambda m: print(f"      .. {m}"))
        results["spark_model_top_words"] = [[w for w, _ in ws] for ws in model.top_words(5)]
    if "vectors" in work.steps:
        with spark_step(sampler, f"text vectors + write ({len(work.encode_ids):,} papers)", results, app_id):
            stats = encode_to_neo4j(spark, engine.snapshot_path(None) / "papers", expected["encoder"],
                                    work.encode_ids, engine.connector_options, work_dir / "encoders", work.chunk)
        results["encode"] = stats
    return engine


def parity(store: Neo4jStore, work: Work, expected: dict, results: dict) -> None:
    import numpy as np
    from scipy.stats import spearmanr

    print("Spark's outputs against the in-process ones:")
    out: dict = {}
    if "networks" in work.steps:
        cases = (("papers", "Paper", "pagerank"), ("ACN", "Author", "pagerank_coauthor"),
                 ("ACCN", "Author", "pagerank_citation"), ("VCCN", "Venue", "pagerank_citation"))
        for name, label, prop in cases:
            ids, want = expected[name]
            got_ids, values = store.read_nodes(label, [prop])
            got = dict(zip(got_ids, values[prop]))
            spark_scores = np.array([got[i] for i in ids], dtype=np.float64)
            rho = float(spearmanr(spark_scores, want).statistic)
            diff = float(np.abs(spark_scores - want).max())
            out[name] = {"spearman": rho, "max_abs_diff": diff}
            print(f"  PageRank {name:<6} Spearman {rho:.7f}, max |diff| {diff:.3g}")
    if "topics" in work.steps:
        for prop, label in (("topic_vector", "Paper"), ("topic_diversity", "Author")):
            ids, want = expected[prop]
            got_ids, values = store.read_nodes(label, [prop])
            got = dict(zip(got_ids, values[prop]))
            diff = float(np.abs(np.array([got[i] for i in ids], dtype=np.float64) - want).max())
            out[prop] = {"max_abs_diff": diff}
            print(f"  {label}.{prop} under the same model: max |diff| {diff:.3g} over {len(ids):,}")
    if "vectors" in work.steps:
        got_ids, values = store.read_nodes("Paper", ["semantic_vector"])
        got = dict(zip(got_ids, values["semantic_vector"]))
        cosines = []
        for pid, want in expected["semantic_vector"].items():
            a, b = np.asarray(want, dtype=np.float64), np.asarray(got[pid], dtype=np.float64)
            cosines.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
        out["semantic_vector"] = {"papers": len(cosines), "min_cosine": min(cosines)}
        print(f"  Paper.semantic_vector: {len(cosines):,} papers, cosine min {min(cosines):.6f}")
    results["parity"] = out


def _per_step_table(results: dict) -> None:
    """The markdown table of the two paths' steps and the ratios that compare like with like."""
    print("\n| path | step | wall s | core-s | peak RSS MiB |")
    print("|---|---|---|---|---|")
    for path in ("in_process", "spark"):
        for name, v in results[path].items():
            if isinstance(v, dict) and "peak_rss_mib" in v:
                core = v.get("executor_core_s", v["process_cpu_s"])
                print(f"| {path.replace('_', ' ')} | {name} | {v['seconds']:,.1f} | {core:,.1f} | "
                      f"{v['peak_rss_mib']:,.0f} |")

    def find(path: str, prefix: str) -> float | None:
        hits = [v["seconds"] for k, v in results[path].items()
                if isinstance(v, dict) and "peak_rss_mib" in v and k.startswith(prefix)]
        return sum(hits) if hits else None

    pairs = (("read the graph", ("in_process", "snapshot pull"), ("spark", "export parquet (id")),
             ("export: id ranges / 1 stream", ("spark", "export parquet (1"), ("spark", "export parquet (id")),
             ("networks + PageRank + write", ("in_process", "networks"), ("spark", "networks")),
             ("LDA fit", ("in_process", "LDA fit"), ("spark", "LDA fit")),
             ("LDA inference + write", ("in_process", "LDA infer"), ("spark", "LDA infer")),
             ("text vectors + write", ("in_process", "text vectors"), ("spark", "text vectors")))
    print("\n| step | baseline s | Spark s | Spark / baseline |")
    print("|---|---|---|---|")
    for label, (bp, bk), (sp_, sk) in pairs:
        base = find(bp, bk)
        if label.startswith("LDA inference") and base is not None:
            base += find("in_process", "topics write-back") or 0.0
        ours = find(sp_, sk)
        if base and ours:
            print(f"| {label} | {base:,.1f} | {ours:,.1f} | {ours / base:.2f}x |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=None, help="an AMiner JSON-lines corpus (default: generate --papers)")
    ap.add_argument("--papers", type=int, default=1_000_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--steps", default="export,networks,topics,vectors",
                    help="comma-separated: export (the one-stream baseline export; the ranged export always runs), "
                         "networks (with PageRank), topics, vectors")
    ap.add_argument("--export-workers", type=int, default=4)
    ap.add_argument("--topic-fit-sample", type=int, default=100_000, help="papers both topic fits read")
    ap.add_argument("--encode-sample", type=int, default=2_000, help="papers both encoders encode")
    ap.add_argument("--encoder", default=None, help="default: the pretrained encoder (minilm-onnx-int8)")
    ap.add_argument("--commit-every", type=int, default=250,
                    help="papers per encoding chunk in both paths (a Spark partition holds whole chunks: 2,000 "
                         "papers in chunks of 250 are 8 partitions)")
    ap.add_argument("--work", default=None, help="work directory (default: a temp dir)")
    ap.add_argument("--json", default=None, help="write the figures to this file")
    ap.add_argument("--with-edges", action="store_true",
                    help="also write the COAUTHOR / CITES_AUTHOR / CITES_VENUE edges back (the `networks` step: "
                         "ACCN has ~100 edges per paper, 9.8M at 100k papers)")
    args = ap.parse_args()
    from scholargraph.graph.encoders import PRETRAINED_ENCODER

    steps = tuple(s.strip() for s in args.steps.split(",") if s.strip())
    unknown = set(steps) - {"export", "networks", "topics", "vectors"}
    if unknown:
        ap.error(f"unknown steps: {', '.join(sorted(unknown))}")
    work_dir = Path(args.work or tempfile.mkdtemp(prefix="sg-bench-spark-"))
    corpus = Path(args.corpus) if args.corpus else work_dir / "corpus.aminer.jsonl"
    if not corpus.exists():
        from scholargraph.synth import SynthParams, generate

        t0 = time.perf_counter()
        generate(SynthParams(papers=args.papers, seed=7, reviewer_queries=0, citation_queries=0), work_dir)
        print(f"generated {args.papers:,} papers in {time.perf_counter() - t0:.0f}s", flush=True)
    # Without --with-edges the networks are computed (PageRank needs them) but only the node properties are
    # written: the `pagerank` step, as `features --only pagerank` runs it.
    options = FeatureOptions(only=("networks", "pagerank") if args.with_edges else ("pagerank",))
    results: dict = {"master": args.master, "cores": os.cpu_count(), "steps": steps}
    sampler = RssSampler()
    with bench_server(17697, heap="4g", pagecache="2g") as settings:
        settings = replace(settings, spark_driver_memory=args.driver_memory)
        from scholargraph.ingest.bulk_load import bulk_ingest

        t0 = time.perf_counter()
        bulk_ingest(settings, "aminer", [str(corpus)], quarantine_path=work_dir / "q.jsonl",
                    import_root=work_dir / "import", quiet=True, parse_workers=2)
        print(f"bulk-loaded {corpus} in {time.perf_counter() - t0:.0f}s", flush=True)
        from scholargraph.server import local_server

        server_pid = local_server.running_pid(settings)
        if server_pid:
            EXCLUDED.add(server_pid)
        with Neo4jStore(settings.uri, settings.neo4j_user, settings.password, settings.neo4j_database) as store:
            stats = store.stats()
            results["graph"] = {"papers": stats["nodes"]["Paper"], "authors": stats["nodes"]["Author"],
                                "venues": stats["nodes"]["Venue"], "citations": stats["relationships"]["CITES"],
                                "authorships": stats["relationships"]["AUTHORED"]}
            print(f"graph: {results['graph']}", flush=True)
            fit_ids, encode_ids = choose_samples(store, args.topic_fit_sample, args.encode_sample)
            work = Work(steps, options, fit_ids, encode_ids, args.encoder or PRETRAINED_ENCODER, args.commit_every)
            print(f"topic fit sample {len(fit_ids):,} papers, encode sample {len(encode_ids):,} papers "
                  f"({work.encoder_name})", flush=True)
            steps_out: dict = {}
            expected = in_process(store, work, sampler, steps_out)
            results["in_process"] = steps_out
            steps_out = {}
            with ExitStack() as stack:
                on_spark(settings, store, work, sampler, steps_out, args.master, work_dir, stack, expected,
                         args.export_workers)
            results["spark"] = steps_out
            parity(store, work, expected, results)

    def steps_of(path: str) -> list[dict]:
        return [v for k, v in results[path].items() if isinstance(v, dict) and "peak_rss_mib" in v
                and k != "session start" and not k.startswith("export parquet (1")]

    base = sum(v["seconds"] for v in steps_of("in_process"))
    ours = sum(v["seconds"] for v in steps_of("spark"))
    _per_step_table(results)
    if "vectors" in steps and "encode" in results["spark"]:
        enc = results["spark"]["encode"]
        print(f"\nper-partition cost of encoding: {enc['partitions']} partitions, "
              f"{1000 * enc['encode_core_seconds'] / max(enc['papers'], 1):.1f} ms per paper of task time")
    if "topics" in steps:
        infer = results["spark"]["LDA infer + author features + write (all)"]
        fit = next(v for k, v in results["spark"].items() if k.startswith("LDA fit"))
        n = results["graph"]["papers"]
        print(f"per-partition cost of LDA: fit {1000 * fit['executor_core_s'] / max(len(fit_ids), 1):.2f} ms of "
              f"executor time per sampled paper ({fit['tasks']:,} tasks), inference + author features + write "
              f"{1000 * infer['executor_core_s'] / n:.2f} ms per paper ({infer['tasks']:,} tasks, "
              f"{infer['ms_per_task']:,.0f} ms per task)")
    print(f"end to end (the one-stream export and the session start excluded): in process {base:,.0f} s, "
          f"Spark {args.master} {ours:,.0f} s: Spark takes {ours / base:.2f}x the in-process time; peak RSS in "
          f"process {max(v['peak_rss_mib'] for v in steps_of('in_process')):,.0f} MiB, Spark tree "
          f"{max(v['peak_rss_mib'] for v in steps_of('spark')):,.0f} MiB")
    if args.json:
        results["in_process"].pop("model", None)
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
