"""Scoring jobs against the real Neo4j: the lock (exit 4, lease expiry), atomic switch of scores."""

from __future__ import annotations

import time

import pytest

from scholargraph.graph.records import Author, Authorship, Paper, PaperBundle
from scholargraph.graph.scoring import ScoringRun
from scholargraph.ranking.jobs import JobLocked, LeasedLock
from tests.cli import run
from tests.conftest import cli_env


def test_second_run_exits_4_while_the_lock_is_held(store, neo4j_settings):
    with LeasedLock(store, lease_seconds=120):
        with pytest.raises(JobLocked) as info:
            with LeasedLock(store, lease_seconds=120):
                pass
        assert info.value.exit_code == 4
        env = cli_env(neo4j_settings, neo4j_settings.home)
        proc = run(env, "jobs", "run", "--only", "features", check=False)
        assert proc.returncode == 4 and "another scoring run is in progress" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_a_crashed_runs_lock_expires_with_its_lease(store):
    crashed = LeasedLock(store, lease_seconds=30)
    assert store.acquire_lock(crashed.name, "dead-process", 2)[0]  # a run that died without releasing
    with pytest.raises(JobLocked):
        LeasedLock(store, lease_seconds=30).__enter__()
    time.sleep(2.5)
    with LeasedLock(store, lease_seconds=30):
        pass  # the lease ran out: the next run takes over


def test_scores_switch_in_one_step_and_a_failed_run_changes_nothing(store):
    store.write_bundles([PaperBundle(paper=Paper("p1", "A paper", year=2000, sources=("p1",)),
                                     authors=(Author("a1", "Ann"), Author("a2", "Bo")),
                                     authorships=(Authorship("a1", "p1", 1), Authorship("a2", "p1", 2)))])

    def visible():
        _, rows = store.run_library_query("suggested_reviewers", {"paperId": "p1", "limit": 10})
        return [(r[1], r[3]) for r in rows]

    with ScoringRun(store, "reviewers") as first:
        first.publish([{"source": "a1", "target": "p1", "props": {"score": 0.9, "rank": 1}}])
    assert visible() == [("a1", 0.9)]
    with pytest.raises(RuntimeError):
        with ScoringRun(store, "reviewers") as broken:
            store.write_scores("SUGGESTED_REVIEWER", [{"source": "a2", "target": "p1",
                                                       "props": {"score": 0.5, "rank": 1}}], broken.run_id)
            assert visible() == [("a1", 0.9)]  # written beside, not visible before the switch
            raise RuntimeError("the model crashed")
    assert visible() == [("a1", 0.9)]  # the failed run left the previous scores in place
    history = {r["id"]: r["status"] for r in store.run_history()}
    assert history[broken.run_id] == "failed" and history[first.run_id] == "succeeded"
    with ScoringRun(store, "reviewers") as second:
        second.publish([{"source": "a2", "target": "p1", "props": {"score": 0.7, "rank": 1}}])
    assert visible() == [("a2", 0.7)]
    assert store.stats()["relationships"]["SUGGESTED_REVIEWER"] == 1  # older runs' edges are gone
