"""Scheduled scoring: the pipeline in dependency order under one leased lock, each step a ScoringRun."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scholargraph.errors import ScholargraphError, StoreUnavailable
from scholargraph.graph.features import FeatureEngine
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.store import GraphStore
from scholargraph.ranking.batch import IN_PROCESS, PartitionMapper
from scholargraph.ranking.citations import encoder as _citeomatic  # noqa: F401  registers the encoder features may load

PIPELINE = ("features", "rising-stars", "reviewers", "citations")
LOCK_NAME = "scoring-jobs"


class JobLocked(ScholargraphError):
    """Another scoring run holds the lock."""

    exit_code = 4


@dataclass
class JobContext:
    """What a step gets: the store, where models live, whether to rescore everything, and a logger."""

    store: GraphStore
    models_dir: Path
    full: bool = False
    quiet: bool = True
    log: Callable[[str], None] = lambda _msg: None
    lock_owner: str | None = None  # recorded on each ScoringRun: the next lock holder knows it is dead
    # `--engine spark`: the features engine (networks and PageRank on Spark, over its Parquet export, which is
    # then also the run's snapshot) and the mapper that runs the models' batch scoring in Spark partitions.
    engine: FeatureEngine | None = None
    mapper: PartitionMapper = IN_PROCESS
    # The graph as this run reads it: pulled once, by the first step that needs it, and shared by the others.
    _snapshot: GraphSnapshot | None = field(default=None, repr=False)
    snapshot_watermark: int | None = None  # server time read just before that pull
    _vectors_loaded: bool = field(default=False, repr=False)

    def run_props(self, watermark: int) -> dict:
        return {"watermark": watermark, "lock_owner": self.lock_owner}

    def snapshot(self) -> GraphSnapshot:
        """The run's one snapshot of the graph (papers, authors, venues, citations, texts)."""
        if self._snapshot is None:
            if self.engine is not None:
                # The engine's export read the server time just before its pull.
                self._snapshot = self.engine.read_snapshot(None, with_text=True)
                self.snapshot_watermark = self.engine.watermark
            else:
                self.snapshot_watermark = self.store.server_time()
                self._snapshot = GraphSnapshot.from_store(self.store, with_text=True, quiet=self.quiet)
        return self._snapshot

    def snapshot_with_vectors(self, semantic_encoder: str | None) -> GraphSnapshot:
        """The run's snapshot with the stored vectors loaded into it: read once per encoder key, after the
        features step has written them (steps run in dependency order)."""
        snapshot = self.snapshot()
        # A step may have loaded another encoder's vectors into it itself (the text-only citations ranker).
        if not self._vectors_loaded or (semantic_encoder is not None and snapshot.semantic_encoder != semantic_encoder):
            snapshot.load_stored_vectors(self.store, semantic_encoder=semantic_encoder, quiet=self.quiet)
            self._vectors_loaded = True
        return snapshot


@dataclass
class JobReport:
    steps: list[tuple[str, str]] = field(default_factory=list)  # (step, summary line)
    seconds: float = 0.0


class LeasedLock:
    """A lock node in the graph with a lease; a heartbeat thread renews it while the run lives, so a
    crashed run's lock expires by itself after `lease_seconds`."""

    def __init__(self, store: GraphStore, lease_seconds: int = 600, name: str = LOCK_NAME):
        self.store = store
        self.lease = lease_seconds
        self.name = name
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lost = False

    def __enter__(self) -> LeasedLock:
        acquired, owner, expires = self.store.acquire_lock(self.name, self.owner, self.lease)
        if not acquired:
            raise JobLocked(f"another scoring run is in progress ({owner}, lease until {expires}); "
                            "try again later")
        self._thread = threading.Thread(target=self._renew, name="scholargraph-lease", daemon=True)
        self._thread.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(max(1.0, self.lease / 3)):
            try:
                if not self.store.renew_lock(self.name, self.owner, self.lease):
                    self.lost = True
                    return
            except ScholargraphError:
                continue  # a transient outage: the next renewal may succeed before the lease ends

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if isinstance(exc, StoreUnavailable):
            return  # releasing would retry for the driver's whole retry time; the lease expires on its own
        try:
            self.store.release_lock(self.name, self.owner)
        except ScholargraphError:
            pass  # the lease expires on its own


Step = Callable[[JobContext], str]
STEPS: dict[str, Step] = {}


def register_step(name: str):
    def wrap(fn: Step) -> Step:
        STEPS[name] = fn
        return fn
    return wrap


def run_pipeline(store: GraphStore, models_dir, only: tuple[str, ...] = PIPELINE, full: bool = False,
                 lease_seconds: int = 600, quiet: bool = True, log: Callable[[str], None] = lambda _m: None,
                 engine: FeatureEngine | None = None, mapper: PartitionMapper = IN_PROCESS) -> JobReport:
    """Run the requested steps in dependency order under the lock. A failing step stops the pipeline;
    its ScoringRun is marked failed and the previous scores stay current. `engine` and `mapper`: see
    JobContext (`jobs run --engine spark`)."""
    unknown = set(only) - set(PIPELINE)
    if unknown:
        raise ValueError(f"unknown job step(s): {', '.join(sorted(unknown))}")
    report = JobReport()
    t0 = time.perf_counter()
    with LeasedLock(store, lease_seconds) as lock:
        abandoned = store.fail_stale_runs(lease_seconds, lock.owner)
        if abandoned:
            note = f"marked {abandoned} abandoned run(s) as failed (their process stopped; the lease expired)"
            report.steps.append(("recovery", note))
            log(note)
        ctx = JobContext(store=store, models_dir=models_dir, full=full, quiet=quiet, log=log, lock_owner=lock.owner,
                         engine=engine, mapper=mapper)
        for step in (s for s in PIPELINE if s in only):
            if lock.lost:
                raise JobLocked("the scoring lock was lost (lease expired): stopping before the next step")
            log(f"[{step}] starting")
            summary = STEPS[step](ctx) if step in STEPS else "skipped: this step is not available"
            report.steps.append((step, summary))
            log(f"[{step}] {summary}")
    report.seconds = time.perf_counter() - t0
    return report


@register_step("features")
def _features_step(ctx: JobContext) -> str:
    from scholargraph.graph.features import FeatureOptions, run_features

    return run_features(ctx.store, ctx.models_dir, FeatureOptions(), force=ctx.full, quiet=ctx.quiet,
                        log=ctx.log, run_props={"lock_owner": ctx.lock_owner},
                        read_snapshot=ctx.snapshot, engine=ctx.engine).splitlines()[0]


@dataclass
class Increment:
    """What a scoring step must do this run: `watermark` (server clock, read before the graph) is recorded
    on its ScoringRun; `changed` lists the papers ingested or changed since the current run's watermark,
    or is None for a full run (`--full`, no current run yet, or a model trained since)."""

    watermark: int
    last: dict | None
    changed: list[str] | None

    @property
    def nothing_changed(self) -> bool:
        return self.changed is not None and not self.changed

    def skipped(self) -> str:
        assert self.last is not None, "only an increment on a current run skips"
        return f"nothing changed since run {self.last['id']}: its scores stay current"


def increment(ctx: JobContext, job: str, model_version: str | None) -> Increment:
    # The watermark is read before the graph the step scores: the run's snapshot when it was pulled already
    # (a paper ingested since is then changed for the next run), else now (the step pulls it after this).
    watermark = ctx.snapshot_watermark if ctx.snapshot_watermark is not None else ctx.store.server_time()
    last = ctx.store.current_run(job)
    if (ctx.full or last is None or last.get("watermark") is None
            or (model_version is not None and last.get("modelVersion") != model_version)):
        return Increment(watermark, last, None)
    return Increment(watermark, last, ctx.store.changed_papers(last["watermark"]))


@register_step("rising-stars")
def _rising_stars_step(ctx: JobContext) -> str:
    """Every young researcher is rescored when anything changed: PageRank and the per-topic percentiles
    are global, so one new paper can move anyone."""
    from scholargraph.errors import NotFitted
    from scholargraph.ranking.rising_stars import service

    try:
        inc = increment(ctx, "rising-stars", service.current_version(ctx.models_dir))
        if inc.nothing_changed:
            return inc.skipped()
        summary = service.score(ctx.store, ctx.models_dir, None, quiet=ctx.quiet,
                                run_props=ctx.run_props(inc.watermark), snapshot=ctx.snapshot(),
                                mapper=ctx.mapper).summary
    except NotFitted as exc:
        return f"skipped: {exc}"
    return summary if inc.changed is None else f"{len(inc.changed):,} papers changed: {summary}"


def _latest_papers(snapshot, full: bool, cap: int) -> list[str]:
    """A full run's queries: the dated papers of the latest year (all of them with --full), at most `cap`."""
    import numpy as np

    from scholargraph.graph.snapshot import NO_YEAR

    years = snapshot.paper_year
    dated = (years != NO_YEAR) & ~snapshot.paper_stub
    pick = np.flatnonzero(dated if full else dated & (years == snapshot.max_year))[:cap]
    return [snapshot.paper_ids[i] for i in pick]


@register_step("citations")
def _citations_step(ctx: JobContext) -> str:
    """Recommended citations for the papers changed since the last run; a full run (the first, --full,
    or a new model) takes the papers of the latest year (all with --full), bounded."""
    from scholargraph.errors import NotFitted
    from scholargraph.graph.snapshot import NO_YEAR
    from scholargraph.ranking.citations.recommender import Query
    from scholargraph.ranking.citations.service import recommend_citations, served_version

    try:
        # Without a trained model the text-only ranker serves (a library without citations), keyed by its
        # own version so that a model trained later rescores every paper.
        inc = increment(ctx, "citations", served_version(ctx.models_dir))
        if inc.nothing_changed:
            return inc.skipped()
        snapshot = ctx.snapshot()
        ids = _latest_papers(snapshot, ctx.full, MAX_JOB_QUERIES) if inc.changed is None else [
            p for p in inc.changed if p in snapshot.paper_index]
        rows = [snapshot.paper_index[p] for p in ids]
        years = snapshot.paper_year
        assert snapshot.titles is not None and snapshot.abstracts is not None, "the run's snapshot has the texts"
        queries = [Query(snapshot.paper_ids[i], snapshot.titles[i], snapshot.abstracts[i],
                         None if years[i] == NO_YEAR else int(years[i])) for i in rows]
        _, _, note = recommend_citations(ctx.store, ctx.models_dir, queries, k=20, quiet=ctx.quiet, write=True,
                                         snapshot=snapshot, replace_all=inc.changed is None,
                                         run_props=ctx.run_props(inc.watermark), mapper=ctx.mapper)
    except NotFitted as exc:
        return f"skipped: {exc}"
    return note if inc.changed is None else f"{len(inc.changed):,} papers changed: {note}"


MAX_JOB_QUERIES = 2000  # papers of a full citations run (each incremental run takes every changed paper)


@register_step("reviewers")
def _reviewers_step(ctx: JobContext) -> str:
    """Suggested reviewers for the papers changed since the last run; a full run (the first, --full, or a
    new model) takes the papers of the latest year (all with --full), bounded."""
    from scholargraph.errors import NotFitted
    from scholargraph.ranking.reviewers import service

    try:
        _, meta = service.load_model(ctx.models_dir)
        inc = increment(ctx, "reviewers", meta["version"])
        if inc.nothing_changed:
            return inc.skipped()
        index = service.index_for_model(ctx.store, ctx.models_dir, meta, ctx.quiet,
                                        read_snapshot=ctx.snapshot_with_vectors)
        snap = index.snapshot
        ids = _latest_papers(snap, ctx.full, MAX_JOB_REVIEW_QUERIES) if inc.changed is None else [
            p for p in inc.changed if p in snap.paper_index]
        # The ids are the snapshot's own, so none is left out; what is warned about (pairs without eligible
        # evidence, which are not written) goes into the step's note.
        warnings: list[str] = []
        _, note = service.recommend(ctx.store, ctx.models_dir, paper_ids=ids, write=True, quiet=ctx.quiet,
                                    index=index, replace_all=inc.changed is None,
                                    run_props=ctx.run_props(inc.watermark), mapper=ctx.mapper,
                                    warn=warnings.append)
        note = "; ".join([note, *warnings])
    except NotFitted as exc:
        return f"skipped: {exc}"
    return note if inc.changed is None else f"{len(inc.changed):,} papers changed: {note}"


MAX_JOB_REVIEW_QUERIES = 200  # papers of a full reviewers run (each scores the whole pool)
