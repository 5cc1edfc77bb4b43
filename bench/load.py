"""Readers of the query library while an ingest and `jobs run` write: throughput, latency, errors, mixed runs.

Issue 30 ("proven under load"). Prepares a graph on a loopback Neo4j (a throw-away managed server, or
SCHOLARGRAPH_NEO4J_URI when it is 127.0.0.1/localhost and its database is empty): a synthetic world (`synth`),
of which the first papers are ingested, `features`, a rising-star and a reviewer model trained, and one
`jobs run`; the rest of the world is kept back for the writers. Then, for each N of --readers, two phases:

- baseline: N reader threads, each with its own store (driver), run the four library queries (author_profile,
  suggested_reviewers, top_rising_stars, similar_papers) in turn with random valid parameters, no writers;
- load: the same readers while two writers run as CLI processes: `ingest aminer` of kept-back papers, a chunk
  at a time, and `jobs run` in a loop (each run after an ingest writes new scoring runs and switches them in).

Each phase stops at --seconds or --max-requests, whichever comes first; the writers are not killed (a killed
`jobs run` would leave its lock to expire) but start nothing new after it. Every answer of suggested_reviewers
and top_rising_stars is checked: all its rows carry one runId (no mix of two scoring runs), its ranks are
1..n (no run half deleted under it), and every runId seen is a run that succeeded (never one being written).
Prints a markdown table, with the ratios of each load phase to its baseline.

    .venv/bin/python bench/load.py [--papers 3000] [--readers 1,4,16] [--seconds 30] [--max-requests 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._server import bench_server  # noqa: E402
from scholargraph.config import Settings  # noqa: E402
from scholargraph.errors import ScholargraphError  # noqa: E402
from scholargraph.graph.neo4j_store import Neo4jStore  # noqa: E402
from scholargraph.server.connect import open_store  # noqa: E402

QUERIES = ("author_profile", "suggested_reviewers", "top_rising_stars", "similar_papers")
# The answers that carry scores of a scoring run, and the job whose current run they must come from.
SCORED = {"suggested_reviewers": "reviewers", "top_rising_stars": "rising-stars"}
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def cli_env(settings: Settings, home: Path) -> dict:
    """A `scholargraph` subprocess on the benchmark's server: the managed one is found (and its password
    read) through its home; an external one through the caller's own SCHOLARGRAPH_NEO4J_* variables."""
    env = dict(os.environ, SCHOLARGRAPH_HOME=str(home))
    if settings.managed:
        env.update(SCHOLARGRAPH_NEO4J_PORT=str(settings.neo4j_port), SCHOLARGRAPH_NEO4J_HTTP_PORT="0")
    return env


def cli(env: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "scholargraph.cli", "-q", *args], env=env,
                          capture_output=True, text=True)
    if check and proc.returncode:
        sys.exit(f"scholargraph {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return proc


# --- the graph ------------------------------------------------------------------------------------------------


@dataclass
class World:
    chunks: list[list[Path]]  # per load phase, the kept-back papers as files of --chunk papers


def prepare(env: dict, work: Path, papers: int, keep: float, phases: int, chunk: int, seed: int) -> World:
    """Synthesise, ingest all but the kept-back share, compute features, train, score once."""
    t0 = time.perf_counter()
    out = work / "synth"
    cli(env, "synth", "--papers", str(papers), "--seed", str(seed), "--out", str(out))
    # The corpus is in publication order: the kept-back papers are the newest, as a live feed's would be.
    lines = (out / "corpus.aminer.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    cut = len(lines) - int(len(lines) * keep)
    base = work / "base.jsonl"
    base.write_text("".join(lines[:cut]), encoding="utf-8")
    rest = lines[cut:]
    per_phase = len(rest) // phases
    world = World([])
    for p in range(phases):
        part = rest[p * per_phase:(p + 1) * per_phase]
        files = []
        for c in range(0, len(part), chunk):
            f = work / f"phase{p}-{c // chunk:03d}.jsonl"
            f.write_text("".join(part[c:c + chunk]), encoding="utf-8")
            files.append(f)
        world.chunks.append(files)
    last_year = max(json.loads(line).get("year") or 0 for line in lines[:cut])
    cli(env, "db", "init")
    cli(env, "ingest", "aminer", str(base))
    cli(env, "features")
    cli(env, "rising-stars", "train", "--as-of", str(last_year - 3), "--horizon", "3")
    # A small reviewer model: the benchmark measures serving, not model quality.
    cli(env, "reviewers", "train", "--training-queries", "100", "--steps", "50")
    cli(env, "jobs", "run")
    print(f"prepared: {cut:,} papers ingested, {len(rest):,} kept back for the writers, "
          f"in {time.perf_counter() - t0:.0f} s", flush=True)
    return world


@dataclass
class Params:
    authors: list[str]
    topics: list[str]
    papers: list[str]  # non-stub papers (similar_papers)
    reviewed: list[str]  # papers with suggested reviewers in the current run

    def draw(self, name: str, rng: random.Random) -> dict:
        if name == "author_profile":
            return {"authorId": rng.choice(self.authors)}
        if name == "suggested_reviewers":
            return {"paperId": rng.choice(self.reviewed), "limit": 10}
        if name == "top_rising_stars":
            return {"topic": rng.choice(self.topics), "limit": 10}
        return {"paperId": rng.choice(self.papers), "limit": 10}


def valid_params(store: Neo4jStore) -> Params:
    """Ids that name nodes, and for suggested_reviewers the papers the current run has scored (found by
    the library query itself, so the pool follows whatever the jobs chose to score)."""
    authors, _ = store.read_nodes("Author")
    topics, _ = store.read_nodes("Topic")
    ids, props = store.read_nodes("Paper", ["stub", "year"])
    papers = [i for i, stub in zip(ids, props["stub"]) if not stub]
    years = sorted({y for y, stub in zip(props["year"], props["stub"]) if y is not None and not stub})
    recent = [i for i, y, stub in zip(ids, props["year"], props["stub"]) if not stub and y in years[-2:]]
    reviewed = [p for p in recent if store.run_library_query("suggested_reviewers", {"paperId": p, "limit": 1})[1]]
    if not (authors and topics and papers and reviewed):
        sys.exit("the prepared graph has no authors, topics, papers or suggested reviewers: nothing to read")
    return Params(authors, topics, papers, reviewed)


# --- readers and writers --------------------------------------------------------------------------------------


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)  # seconds, every completed request
    per_query: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter = field(default_factory=Counter)  # first words of the error line -> count
    checked: int = 0  # answers carrying scores, with at least one row
    mixed: int = 0  # answers whose rows carry two runIds or more
    incomplete: int = 0  # answers whose ranks are not 1..n
    runs_seen: dict[str, set[str]] = field(default_factory=dict)  # job -> runIds seen
    lock: threading.Lock = field(default_factory=threading.Lock)


def check_answer(name: str, columns: list[str], rows: list[list]) -> tuple[str | None, bool, bool]:
    """(its runId, mixes runs, ranks not 1..n) of a scored answer."""
    runs = {r[columns.index("runId")] for r in rows}
    ranks = [r[columns.index("rank")] for r in rows]
    run = next(iter(runs)) if len(runs) == 1 else None
    return run, len(runs) > 1, ranks != list(range(1, len(ranks) + 1))


def reader(settings: Settings, params: Params, tally: Tally, stop: threading.Event, budget: list[int],
           seed: int) -> None:
    rng = random.Random(seed)
    store = open_store(settings)
    try:
        k = rng.randrange(len(QUERIES))
        while not stop.is_set():
            with tally.lock:
                if budget[0] <= 0:
                    stop.set()
                    break
                budget[0] -= 1
            name = QUERIES[k % len(QUERIES)]
            k += 1
            bound = params.draw(name, rng)
            t0 = time.perf_counter()
            try:
                columns, rows = store.run_library_query(name, bound)
            except ScholargraphError as exc:
                with tally.lock:
                    tally.errors[f"{name}: {str(exc)[:120]}"] += 1
                continue
            dt = time.perf_counter() - t0
            verdict = check_answer(name, columns, rows) if name in SCORED and rows else None
            with tally.lock:
                tally.latencies.append(dt)
                tally.per_query.setdefault(name, []).append(dt)
                if verdict is not None:
                    run, mixed, incomplete = verdict
                    tally.checked += 1
                    tally.mixed += mixed
                    tally.incomplete += incomplete
                    if run is not None:
                        tally.runs_seen.setdefault(SCORED[name], set()).add(run)
    finally:
        store.close()


@dataclass
class Writers:
    ingests: int = 0
    jobs_runs: int = 0
    failures: list[str] = field(default_factory=list)


def ingest_writer(env: dict, files: list[Path], stop: threading.Event, out: Writers) -> None:
    for f in files:
        if stop.is_set():
            return
        proc = cli(env, "ingest", "aminer", str(f), "--batch-size", "10", check=False)
        if proc.returncode:
            out.failures.append(f"ingest {f.name}: exit {proc.returncode}: {proc.stderr.strip()[-200:]}")
        out.ingests += 1


def jobs_writer(env: dict, stop: threading.Event, out: Writers) -> None:
    while not stop.is_set():
        proc = cli(env, "jobs", "run", check=False)
        if proc.returncode:
            out.failures.append(f"jobs run: exit {proc.returncode}: {proc.stderr.strip()[-200:]}")
        out.jobs_runs += 1


@dataclass
class Phase:
    readers: int
    writers: bool
    seconds: float
    tally: Tally
    written: Writers | None


def run_phase(settings: Settings, env: dict, params: Params, n: int, seconds: float, max_requests: int,
              files: list[Path] | None, seed: int) -> Phase:
    tally, stop, budget = Tally(), threading.Event(), [max_requests]
    written = Writers() if files is not None else None
    writers = []
    if written is not None:
        assert files is not None
        writers = [threading.Thread(target=ingest_writer, args=(env, files, stop, written)),
                   threading.Thread(target=jobs_writer, args=(env, stop, written))]
    threads = [threading.Thread(target=reader, args=(settings, params, tally, stop, budget, seed * 1000 + i))
               for i in range(n)]
    for t in writers:
        t.start()
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    for t in writers:  # each finishes the command it is in
        t.join()
    return Phase(n, written is not None, elapsed, tally, written)


def not_succeeded(store: Neo4jStore, phases: list[Phase]) -> list[str]:
    """RunIds some answer came from that are not a succeeded run: a run being written or a failed one."""
    status = {r["id"]: r["status"] for r in store.run_history(limit=100_000)}
    seen = {run for p in phases for runs in p.tally.runs_seen.values() for run in runs}
    return sorted(run for run in seen if status.get(run) != "succeeded")


# --- the report -----------------------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def row(phase: Phase, baseline: Phase | None) -> str:
    t = phase.tally
    qps = len(t.latencies) / phase.seconds
    p50, p95, p99 = (percentile(t.latencies, q) * 1000 for q in (50, 95, 99))
    runs = "/".join(str(len(t.runs_seen.get(job, ()))) for job in ("rising-stars", "reviewers"))
    writers = "none (baseline)" if phase.written is None else (
        f"{phase.written.ingests} ingests, {phase.written.jobs_runs} jobs runs")
    if baseline is None:
        ratio = "1.00x / 1.00x"
    else:
        b_qps = len(baseline.tally.latencies) / baseline.seconds
        ratio = f"{qps / b_qps:.2f}x / {p95 / (percentile(baseline.tally.latencies, 95) * 1000):.2f}x"
    return (f"| {phase.readers} | {writers} | {len(t.latencies):,} | {phase.seconds:.1f} | {qps:,.1f} | "
            f"{p50:.1f} | {p95:.1f} | {p99:.1f} | {sum(t.errors.values())} | {t.checked:,} | {t.mixed} | "
            f"{t.incomplete} | {runs} | {ratio} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=3000, help="papers of the synthetic world")
    ap.add_argument("--keep-back", type=float, default=0.3, help="share of the world the writers ingest")
    ap.add_argument("--chunk", type=int, default=25, help="papers per ingest command of the writers")
    ap.add_argument("--readers", default="1,4,16", help="comma-separated reader counts N")
    ap.add_argument("--seconds", type=float, default=30.0, help="time limit of each phase")
    ap.add_argument("--max-requests", type=int, default=20_000, help="request limit of each phase")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--port", type=int, default=17787, help="Bolt port of the throw-away managed server")
    args = ap.parse_args()
    counts = [int(x) for x in args.readers.split(",")]

    probe = Settings.load()
    if not probe.managed and urlparse(probe.neo4j_uri or "").hostname not in LOOPBACK:
        sys.exit(f"bench/load.py runs on a loopback Neo4j only, not {probe.neo4j_uri}")
    with tempfile.TemporaryDirectory(prefix="sg-load-") as tmp, bench_server(args.port) as settings:
        work = Path(tmp)
        # A managed server's home is the one bench_server made; an external server gets a home for models.
        env = cli_env(settings, settings.home if settings.managed else work / "home")
        with open_store(settings) as store:
            if store.has_data():
                sys.exit(f"the database at {settings.uri} is not empty: bench/load.py needs an empty one")
        world = prepare(env, work, args.papers, args.keep_back, len(counts), args.chunk, args.seed)
        with open_store(settings) as store:
            params = valid_params(store)
        print(f"parameters: {len(params.authors):,} authors, {len(params.topics)} topics, "
              f"{len(params.papers):,} papers, {len(params.reviewed):,} with suggested reviewers", flush=True)
        phases: list[tuple[Phase, Phase | None]] = []
        for i, n in enumerate(counts):
            base = run_phase(settings, env, params, n, args.seconds, args.max_requests, None, args.seed + i)
            print(row(base, None), flush=True)
            load = run_phase(settings, env, params, n, args.seconds, args.max_requests, world.chunks[i],
                             args.seed + i)
            print(row(load, base), flush=True)
            phases += [(base, None), (load, base)]
        with open_store(settings) as store:
            unpublished = not_succeeded(store, [p for p, _ in phases])
            stats = store.stats()["nodes"]

    print(f"\n{args.papers:,}-paper synthetic world (seed {args.seed}), {stats.get('Paper', 0):,} papers at the end; "
          f"each phase {args.seconds:g} s or {args.max_requests:,} requests; baseline = the same readers, no writers\n")
    print("| readers N | writers | requests | s | queries/s | p50 ms | p95 ms | p99 ms | errors | scored answers "
          "checked | mixed runs | ranks not 1..n | runs seen (rising-stars/reviewers) | q/s, p95 vs baseline |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for phase, base in phases:
        print(row(phase, base))
    print("\np50 ms per query (baseline -> load):")
    for (base, _), (load, _) in zip(phases[::2], phases[1::2]):
        cells = [f"{q} {percentile(base.tally.per_query.get(q, []), 50) * 1000:.1f} -> "
                 f"{percentile(load.tally.per_query.get(q, []), 50) * 1000:.1f}" for q in QUERIES]
        print(f"  N={base.readers}: " + ", ".join(cells))
    errors = Counter()
    for phase, _ in phases:
        errors.update(phase.tally.errors)
    for message, count in errors.most_common(10):
        print(f"error x{count}: {message}")
    failures = [f for phase, _ in phases if phase.written for f in phase.written.failures]
    for failure in failures:
        print(f"writer failed: {failure}")
    print(f"runIds seen that are not a succeeded run: {len(unpublished)}" +
          (f" ({', '.join(unpublished[:5])})" if unpublished else ""))
    bad = sum(p.tally.mixed + p.tally.incomplete + sum(p.tally.errors.values()) for p, _ in phases)
    if bad or unpublished or failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
