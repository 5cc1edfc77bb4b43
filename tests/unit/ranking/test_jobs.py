"""run_pipeline on InMemoryStore: the leased lock, increments since the last watermark, skips, failures."""

from __future__ import annotations

import pytest

from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.records import Paper, PaperBundle
from scholargraph.graph.scoring import ScoringRun, publish_paper_scores
from scholargraph.ranking import jobs
from scholargraph.ranking.jobs import JobLocked, LeasedLock, increment, run_pipeline

WORDS = ("zorblat", "quenfir", "mavotel", "trisk", "plonko", "vendrix", "caluth", "obrenna")


def text(pid: str) -> str:
    """Pseudo-words (so that `auto` picks tfidf-svd), each shared with the papers next to this one."""
    i = int(pid[1:])
    return " ".join(WORDS[(i + k) % len(WORDS)] for k in (0, 1, 3))


def add_papers(store, *ids):
    store.write_bundles([PaperBundle(paper=Paper(p, text(p), year=2001, sources=(p,))) for p in ids])


@pytest.fixture
def store():
    s = InMemoryStore()
    add_papers(s, "p1", "p2", "p3", "p4", "p5", "p6")
    return s


@pytest.fixture
def seen(monkeypatch):
    """A citations step with the real increment and scoring run (a constant score per paper, model `m1`);
    each run appends the papers its increment named (None: a full run)."""
    calls: list[list[str] | None] = []

    def step(ctx):
        inc = increment(ctx, "citations", ctx.models_dir)
        calls.append(inc.changed)
        if inc.nothing_changed:
            return inc.skipped()
        ids, _ = ctx.store.read_nodes("Paper")
        scored = ids if inc.changed is None else inc.changed
        rows = [{"source": p, "target": "p1", "props": {"score": 1.0, "rank": 1}} for p in scored if p != "p1"]
        return publish_paper_scores(ctx.store, "citations", rows, scored, ctx.models_dir, queries=len(scored),
                                    replace_all=inc.changed is None, run_props=ctx.run_props(inc.watermark))

    monkeypatch.setitem(jobs.STEPS, "citations", step)
    return calls


def test_the_lock_refuses_a_second_holder(store):
    with LeasedLock(store, lease_seconds=60):
        with pytest.raises(JobLocked) as info:
            run_pipeline(store, "m1", only=("citations",))
        assert info.value.exit_code == 4
    assert store.acquire_lock(jobs.LOCK_NAME, "next", 60)[0]  # released on exit


def test_a_step_rescores_the_papers_changed_since_the_last_watermark(store, seen):
    first = run_pipeline(store, "m1", only=("citations",))
    assert seen == [None] and first.steps[0][1].startswith("wrote 5 RECOMMENDED_CITATION edges for 6")
    second = run_pipeline(store, "m1", only=("citations",))
    assert seen[-1] == [] and second.steps == [("citations", second.steps[0][1])]
    assert second.steps[0][1].startswith("nothing changed since run citations-")
    add_papers(store, "p7")
    add_papers(store, "p2")  # the same record again: not a change
    run_pipeline(store, "m1", only=("citations",))
    assert seen[-1] == ["p7"]
    assert store.stats()["relationships"]["RECOMMENDED_CITATION"] == 6  # p2..p6's carried, p7's new
    run_pipeline(store, "m2", only=("citations",))  # a new model version: a full run
    assert seen[-1] is None
    run_pipeline(store, "m2", only=("citations",), full=True)
    assert seen[-1] is None


def test_a_failing_step_stops_the_pipeline_and_leaves_the_previous_scores(store, seen, monkeypatch):
    run_pipeline(store, "m1", only=("citations",))
    current = store.current_run("citations")["id"]

    def failing(ctx):
        with ScoringRun(ctx.store, "rising-stars", ctx.run_props(ctx.store.server_time())):
            raise RuntimeError("the model crashed")

    monkeypatch.setitem(jobs.STEPS, "rising-stars", failing)
    add_papers(store, "p7")
    with pytest.raises(RuntimeError):
        run_pipeline(store, "m1", only=("rising-stars", "citations"))
    assert seen == [None]  # citations, after rising-stars, did not run
    assert store.current_run("citations")["id"] == current and store.current_run("rising-stars") is None
    assert store.acquire_lock(jobs.LOCK_NAME, "next", 60)[0]
    store.release_lock(jobs.LOCK_NAME, "next")
    # The failed run was marked failed on the way out: the next pipeline finds nothing to recover.
    assert [name for name, _ in run_pipeline(store, "m1", only=("citations",)).steps] == ["citations"]


def test_the_runs_of_a_dead_holder_are_recovered(store, seen):
    store.record_run("citations-dead", {"job": "citations", "status": "running", "lock_owner": "dead"})
    report = run_pipeline(store, "m1", only=("citations",))
    assert report.steps[0] == ("recovery", "marked 1 abandoned run(s) as failed (their process stopped; "
                                           "the lease expired)")


def test_the_features_step_skips_when_nothing_changed(store, tmp_path):
    models = tmp_path / "models"
    first = run_pipeline(store, models, only=("features",))
    assert first.steps[0][1].startswith("features networks,pagerank,topics,vectors on 6 papers")
    assert run_pipeline(store, models, only=("features",)).steps[0][1].startswith("features are up to date")
    add_papers(store, "p7")
    assert run_pipeline(store, models, only=("features",)).steps[0][1].startswith("features networks")


def test_a_run_reads_the_graph_once_and_its_watermark_comes_before_that_read(store, seen, tmp_path, monkeypatch):
    """The features step pulls the run's snapshot; a later step gets the same object with the vectors the
    features step wrote. A paper ingested after that pull is not in it, so the run's watermark is the one
    read before the pull: the next run finds that paper changed."""
    from scholargraph.graph.snapshot import GraphSnapshot

    pulls = []
    original = GraphSnapshot.from_store.__func__

    def counting(cls, *args, **kwargs):
        pulls.append(kwargs.get("with_text"))
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(GraphSnapshot, "from_store", classmethod(counting))
    shared = []

    def reads_the_snapshot(ctx):
        snapshot = ctx.snapshot_with_vectors(None)
        shared.append((snapshot, ctx.snapshot()))
        add_papers(ctx.store, "p9")  # ingested while the run goes on
        return f"{snapshot.n_papers} papers, topic vectors {snapshot.topic_vectors.shape}"

    monkeypatch.setitem(jobs.STEPS, "rising-stars", reads_the_snapshot)
    report = run_pipeline(store, tmp_path / "models", only=("features", "rising-stars", "citations"))
    assert pulls == [True]
    (snapshot, again), = shared
    assert snapshot is again and "p9" not in snapshot.paper_index
    assert dict(report.steps)["rising-stars"] == "6 papers, topic vectors (6, 10)"
    assert seen == [None]
    run_pipeline(store, tmp_path / "models", only=("citations",))
    assert seen[-1] == ["p9"]
