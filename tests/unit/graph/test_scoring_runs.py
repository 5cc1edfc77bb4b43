"""Scoring runs on InMemoryStore: a run is switched in at once; a failed one leaves the previous scores current."""

from __future__ import annotations

import pytest

from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.records import Author, Authorship, Paper, PaperBundle
from scholargraph.graph.scoring import ScoringRun, publish_paper_scores

REL = "SUGGESTED_REVIEWER"


@pytest.fixture
def store():
    s = InMemoryStore()
    s.write_bundles([PaperBundle(paper=Paper(p, "A paper", year=2000, sources=(p,)),
                                 authors=(Author("a1", "Ann"), Author("a2", "Bo")),
                                 authorships=(Authorship("a1", p, 1), Authorship("a2", p, 2))) for p in ("p1", "p2")])
    return s


def reviewer_row(author, paper, score):
    return {"source": author, "target": paper, "props": {"score": score, "rank": 1}}


def test_a_successful_run_switches_in_and_a_failed_one_changes_nothing(store):
    with ScoringRun(store, "reviewers") as first:
        assert store.current_run("reviewers") is None  # running, not current
        first.publish([reviewer_row("a1", "p1", 0.9)], node_label="Author", node_ids=["a1"],
                      node_props={"reviewer_score": [0.9]})
    current = store.current_run("reviewers")
    assert current["id"] == first.run_id and current["status"] == "succeeded" and current["watermark"] > 0
    assert store.read_nodes("Author", ["reviewer_score"])[1]["reviewer_score"][0] == 0.9
    with pytest.raises(RuntimeError):
        with ScoringRun(store, "reviewers") as broken:
            store.write_scores(REL, [reviewer_row("a2", "p1", 0.5)], broken.run_id)
            raise RuntimeError("the model crashed")
    assert store.current_run("reviewers")["id"] == first.run_id  # the previous scores stay current
    assert store.last_run("reviewers")["id"] == first.run_id
    assert store.stats()["relationships"][REL] == 2  # the failed run's edges sit beside, unseen
    with ScoringRun(store, "reviewers") as second:
        second.publish([reviewer_row("a2", "p1", 0.7)])
    assert store.current_run("reviewers")["id"] == second.run_id
    assert store.stats()["relationships"][REL] == 1  # older runs' edges are gone
    assert second.counts == {REL: 1}


def test_an_incremental_run_keeps_the_scores_of_the_other_papers(store):
    rows = [reviewer_row(a, p, 0.5) for a in ("a1", "a2") for p in ("p1", "p2")]
    note = publish_paper_scores(store, "reviewers", rows, ["p1", "p2"], "m1", queries=2, replace_all=True)
    assert note.startswith("wrote 4 SUGGESTED_REVIEWER edges for 2 in-graph papers")
    note = publish_paper_scores(store, "reviewers", [reviewer_row("a1", "p2", 0.8)], ["p2"], "m1", queries=1)
    assert note.endswith("kept 2 of 1 other papers")
    assert store.stats()["relationships"][REL] == 3  # p1's two carried, p2's one new
    assert store.current_run("reviewers")["modelVersion"] == "m1"
