"""Scheduled scoring: the pipeline in dependency order under one leased lock, each step a ScoringRun."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from scholargraph.errors import ScholargraphError

PIPELINE = ("features", "rising-stars", "reviewers", "citations")
LOCK_NAME = "scoring-jobs"


class JobLocked(ScholargraphError):
    """Another scoring run holds the lock."""

    exit_code = 4


@dataclass
class JobContext:
    """What a step gets: the store, where models live, whether to rescore everything, and a logger."""

    store: object
    models_dir: object
    full: bool = False
    quiet: bool = True
    log: Callable[[str], None] = lambda _msg: None
    heartbeat: Callable[[], None] = lambda: None


@dataclass
class JobReport:
    steps: list[tuple[str, str]] = field(default_factory=list)  # (step, summary line)
    seconds: float = 0.0


class LeasedLock:
    """A lock node in the graph with a lease; a heartbeat thread renews it while the run lives, so a
    crashed run's lock expires by itself after `lease_seconds`."""

    def __init__(self, store, lease_seconds: int = 600, name: str = LOCK_NAME):
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

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
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


def run_pipeline(store, models_dir, only: tuple[str, ...] = PIPELINE, full: bool = False,
                 lease_seconds: int = 600, quiet: bool = True, log: Callable[[str], None] = lambda _m: None
                 ) -> JobReport:
    """Run the requested steps in dependency order under the lock. A failing step stops the pipeline;
    its ScoringRun is marked failed and the previous scores stay current."""
    unknown = set(only) - set(PIPELINE)
    if unknown:
        raise ValueError(f"unknown job step(s): {', '.join(sorted(unknown))}")
    report = JobReport()
    t0 = time.perf_counter()
    with LeasedLock(store, lease_seconds) as lock:
        abandoned = store.fail_stale_runs(lease_seconds)
        if abandoned:
            log(f"marked {abandoned} abandoned run(s) as failed (their lease expired)")
        ctx = JobContext(store=store, models_dir=models_dir, full=full, quiet=quiet, log=log)
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
                        log=ctx.log).splitlines()[0]


@register_step("rising-stars")
def _rising_stars_step(ctx: JobContext) -> str:
    from scholargraph.errors import NotFitted
    from scholargraph.ranking.rising_stars.cli import score_rising_stars

    try:
        return score_rising_stars(ctx.store, ctx.models_dir, None, quiet=ctx.quiet)
    except NotFitted as exc:
        return f"skipped: {exc}"


@register_step("citations")
def _citations_step(ctx: JobContext) -> str:
    """Recommended citations for the papers of the latest year (all papers with --full), bounded."""
    import numpy as np

    from scholargraph.errors import NotFitted
    from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot
    from scholargraph.ranking.citations.cli import recommend_citations
    from scholargraph.ranking.citations.recommender import Query

    snapshot = GraphSnapshot.from_store(ctx.store, with_text=True, quiet=ctx.quiet)
    years = snapshot.paper_year
    dated = (years != NO_YEAR) & ~snapshot.paper_stub
    pick = np.flatnonzero(dated if ctx.full else dated & (years == snapshot.max_year))[:MAX_JOB_QUERIES]
    queries = [Query(snapshot.paper_ids[i], snapshot.titles[i], snapshot.abstracts[i], int(years[i])) for i in pick]
    try:
        _, _, note = recommend_citations(ctx.store, ctx.models_dir, queries, k=20, quiet=ctx.quiet, write=True,
                                         snapshot=snapshot)
    except NotFitted as exc:
        return f"skipped: {exc}"
    return note


MAX_JOB_QUERIES = 2000  # papers per scoring run; a bigger backlog is worked off over several runs


@register_step("reviewers")
def _reviewers_step(ctx: JobContext) -> str:
    """Suggested reviewers for the papers of the latest year (all papers with --full), bounded."""
    import numpy as np

    from scholargraph.errors import NotFitted
    from scholargraph.graph.snapshot import NO_YEAR
    from scholargraph.ranking.reviewers.cli import index_for_model, load_model, recommend_reviewers

    try:
        _, meta = load_model(ctx.models_dir)
        index = index_for_model(ctx.store, ctx.models_dir, meta, ctx.quiet)
        snap = index.snapshot
        dated = (snap.paper_year != NO_YEAR) & ~snap.paper_stub
        latest = dated if ctx.full else dated & (snap.paper_year == snap.max_year)
        pick = np.flatnonzero(latest)[:MAX_JOB_REVIEW_QUERIES]
        _, note = recommend_reviewers(ctx.store, ctx.models_dir, paper_ids=[snap.paper_ids[i] for i in pick],
                                      write=True, quiet=ctx.quiet, index=index)
    except NotFitted as exc:
        return f"skipped: {exc}"
    return note


MAX_JOB_REVIEW_QUERIES = 200  # submissions per scoring run (each scores the whole pool)
