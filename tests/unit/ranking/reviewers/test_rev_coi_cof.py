"""Conflicts of interest and the Chain-of-Factors baseline."""

import numpy as np

from scholargraph.conference.conflicts import AUTHOR, COAUTHOR, ConflictChecker
from scholargraph.conference.submissions import ReviewerPool
from scholargraph.ranking.reviewers.cof import CoF

from .conftest import make_evidence, submission


def test_authors_and_recent_coauthors_are_excluded(world):
    # "jose  PEREZ" is E (José Pérez) by folded name; E2 co-authored e0 (2016), E3 co-authored e_old (2005).
    q = submission(world, authors=("jose  PEREZ",), year=2021)
    found = ConflictChecker(world.snapshot, coauthor_years=5).conflicts(q)
    assert found == {"E": AUTHOR, "E2": COAUTHOR}
    assert ConflictChecker(world.snapshot, coauthor_years=None).conflicts(q) == {"E": AUTHOR, "E2": COAUTHOR,
                                                                                  "E3": COAUTHOR}
    assert ConflictChecker(world.snapshot, coauthor_years=0).conflicts(q) == {"E": AUTHOR}
    assert ConflictChecker(world.snapshot, enabled=False).conflicts(q) == {}


def test_conflicts_by_id_and_in_a_pool(world):
    q = submission(world, authors=("Someone Else",))
    q.author_ids = ("X",)
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["E", "X", "O", "ghost"])
    pool.names[3] = "Someone Else"  # a reviewer the graph does not know, matched by name
    rows = ConflictChecker(world.snapshot).pool_rows(pool, q)
    assert [pool.author_ids[r] for r in rows] == ["X", "ghost"]
    held = world.query_for_paper("e0")  # an in-graph paper: its authors are known from the graph
    assert set(ConflictChecker(world.snapshot).conflicts(held)) >= {"E", "E2"}


def test_recommend_with_coi_never_suggests_a_conflict(world):
    from scholargraph.ranking.reviewers.reco_rank import RecoRank
    from scholargraph.ranking.reviewers.reco_rank_net import RecoRankNet

    model = RecoRank()
    model.net_ = RecoRankNet(model.params).eval()
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["E", "E2", "X", "J", "O"])
    q = submission(world, authors=("José Pérez",))
    ids = [s.reviewer_id for s in model.recommend(world, q, pool, k=5)]  # conflicts are out by default
    assert set(ids) == {"X", "J", "O"}
    ids = [s.reviewer_id for s in model.recommend(world, q, pool, k=5, coi=False)]
    assert {"E", "E2"} <= set(ids)
    strict = ConflictChecker(world.snapshot, coauthor_years=0)
    assert "E2" in [s.reviewer_id for s in model.recommend(world, q, pool, k=5, coi=strict)]


def test_cof_chain_filters_semantic_misses_before_other_factors():
    strong_sem = [dict(sem=0.9, top=0.5, vec=0.1)] * 3
    near_miss = [dict(sem=0.4, top=0.95, vec=0.6, direct=1)] * 3
    weak = [dict(sem=0.5, top=0.2, vec=0.0)] * 3
    ev = make_evidence([strong_sem, near_miss, weak])
    # Keep 6 of 9 papers by semantics (near-miss papers drop out), then all of those by citation.
    scores = CoF(n1=6, n2=6).score_evidence(ev)
    assert scores[0] > scores[2] > scores[1]
    assert scores[1] < -2  # nothing kept: below every reviewer with a kept paper
    total, kept = CoF(n1=6, n2=6).paper_scores(ev)
    assert kept[0].all() and not kept[1].any()
    np.testing.assert_allclose(scores[0], total[0, :3].mean(), rtol=1e-6)
    # Let everything through and the factor sum prefers the near-miss.
    everything = CoF(n1=1.0, n2=1.0).score_evidence(ev)
    assert everything[1] > everything[0]


def test_cof_citation_step_keeps_the_best_cited_of_the_semantic_top():
    ev = make_evidence([[dict(sem=0.9, vec=0.0)], [dict(sem=0.8, vec=0.9, direct=1)], [dict(sem=0.1, vec=1.0)]])
    _, kept = CoF(n1=2, n2=1).paper_scores(ev)
    assert kept[:, 0].tolist() == [False, True, False]


def test_a_name_keyed_author_without_a_name_is_found_by_its_id():
    from types import SimpleNamespace

    from scholargraph.graph.snapshot import GraphSnapshot

    snap = GraphSnapshot.build([{"id": "p1", "year": 2020}],
                               [("name:ann_lee", "p1", 1), ("name:bob k", "p1", 2)])  # new and old id forms
    q = SimpleNamespace(author_ids=(), author_names=("Ann Lee", "Bob K."), paper_index=None, year=2021,
                        submission_year=2021)
    assert ConflictChecker(snap).conflicts(q) == {"name:ann_lee": AUTHOR, "name:bob k": AUTHOR}
