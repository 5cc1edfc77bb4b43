"""Scoring runs in the graph: each run writes beside the current one, then is switched in at once.

Readers (the Cypher library) follow `(:ScoringRun {current: true})` of a job and read only the score
edges carrying its `runId`, so a run being written, or one that failed half way, is never visible.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from scholargraph.errors import StoreUnavailable
from scholargraph.graph.store import GraphStore

JOB_EDGE = {"rising-stars": "RISING_STAR_IN", "reviewers": "SUGGESTED_REVIEWER", "citations": "RECOMMENDED_CITATION",
            "assignment": "ASSIGNED_TO"}


def new_run_id(job: str) -> str:
    return f"{job}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}"


@dataclass
class ScoringRun:
    """One run of a scoring job; use `with ScoringRun(store, job) as run:` so a failure is recorded."""

    store: GraphStore
    job: str
    props: dict = field(default_factory=dict)
    run_id: str = ""
    counts: dict = field(default_factory=dict)  # what publish() wrote and carried

    def __enter__(self) -> ScoringRun:
        self.run_id = self.run_id or new_run_id(self.job)
        # The watermark (server clock) says which papers the next incremental run must rescore; a job
        # passes the time it read the graph, before computing, so nothing ingested meanwhile is missed.
        watermark = self.props.get("watermark") or self.store.server_time()
        self.store.record_run(self.run_id, {"id": self.run_id, "job": self.job, "status": "running",
                                            "started_at": datetime.now(UTC),
                                            "heartbeat_at": datetime.now(UTC), **self.props,
                                            "watermark": watermark})
        return self

    def publish(self, rows: Iterable[dict], counts: dict | None = None, node_label: str | None = None,
                node_ids: Sequence[str] = (), node_props: dict[str, Sequence | np.ndarray] | None = None,
                extra: dict | None = None, rescored: Sequence[str] | None = None) -> int:
        """Write this run's score edges, switch it in, then drop older runs' edges and set node scores.
        An incremental run gives `rescored`, the papers it scored: the current run's edges of every other
        paper are carried into this run before the switch, so readers still see them afterwards."""
        rel = JOB_EDGE[self.job]
        written = self.store.write_scores(rel, rows, self.run_id)
        counts = {**(counts or {}), rel: written}
        if rescored is not None:
            edges, papers = self.store.carry_forward_scores(rel, self.run_id, rescored)
            counts.update({"carriedEdges": edges, "carriedPapers": papers})
        self.counts = counts
        self.store.record_run(self.run_id, {"counts": json.dumps(counts), **(extra or {})})
        self.store.switch_run(self.run_id)
        self.store.delete_old_scores(rel, self.run_id)
        if node_label and node_props:
            # One transaction, so node scores too change all at once.
            self.store.write_node_properties(node_label, list(node_ids), node_props,
                                             batch_size=max(1, len(node_ids)))
        return written

    def __exit__(self, exc_type, exc, tb) -> None:
        # With the store gone, a write would only retry for the driver's whole retry time before failing
        # too: the lease expiry marks the run failed later.
        if exc is not None and not isinstance(exc, StoreUnavailable):
            try:
                self.store.record_run(self.run_id, {"status": "failed", "finished_at": datetime.now(UTC),
                                                    "error": f"{type(exc).__name__}: {exc}"[:500]})
            except Exception:  # the store itself may be what failed; the lease expiry marks the run later
                pass


def publish_paper_scores(store: GraphStore, job: str, rows: list[dict], scored: Sequence[str], model_version: str, *,
                         queries: int, replace_all: bool = False, run_props: dict | None = None) -> str:
    """One scoring run of per-paper scores (`rows` {source, target, props}) for the papers `scored`: an
    incremental run keeps the current scores of every other paper, `replace_all` keeps only these.
    Returns the summary line."""
    with ScoringRun(store, job, {"model_version": model_version, **(run_props or {})}) as run:
        for row in rows:
            row["props"]["run_id"] = run.run_id
        n = run.publish(rows, counts={"queries": queries}, rescored=None if replace_all else scored)
    note = f"wrote {n:,} {JOB_EDGE[job]} edges for {len(scored):,} in-graph papers (run {run.run_id})"
    if not replace_all:
        note += f"; kept {run.counts['carriedEdges']:,} of {run.counts['carriedPapers']:,} other papers"
    return note
