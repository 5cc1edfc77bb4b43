"""Affinity semantics and the expertise protocol: a pair's score ignores the other candidates; the loss."""

import numpy as np
import pytest

from scholargraph.conference.submissions import ReviewerPool
from scholargraph.errors import UsageError
from scholargraph.ranking.reviewers.expertise import (
    bootstrap_interval,
    pooled_loss,
    read_expertise_qrels,
    reviewer_loss_terms,
)
from scholargraph.ranking.reviewers.reco_rank import RecoRank

from .conftest import submission


def test_a_pair_scores_the_same_whatever_the_other_candidates(world):
    model = RecoRank(self_supervised=40, reviewer_centric=20, steps=30, recent_years=6).fit(world)
    ids = ["E", "X", "J", "O", "N", "E2", "E3"]
    q = submission(world)
    whole = ReviewerPool.from_snapshot(world.snapshot, author_ids=ids)
    together = model.score(world, q, whole)
    for k, a in enumerate(ids):
        alone = ReviewerPool.from_snapshot(world.snapshot, author_ids=[a])
        assert model.score(world, q, alone)[0] == pytest.approx(together[k], abs=1e-5)
        with_two = ReviewerPool.from_snapshot(world.snapshot, author_ids=[ids[(k + 3) % 7], a])
        assert model.score(world, q, with_two)[1] == pytest.approx(together[k], abs=1e-5)
    # Through recommend's candidates path too (brute force over a candidate list).
    by_recommend = {s.reviewer_id: s.score for s in model.recommend(world, q, whole, k=7, coi=False,
                                                                     shortlist=None)}
    one = model.recommend(world, q, ReviewerPool.from_snapshot(world.snapshot, author_ids=["X"]), k=1, coi=False,
                          shortlist=None)[0]
    assert one.score == pytest.approx(by_recommend["X"], abs=1e-5)


def test_scores_of_one_reviewer_compare_across_submissions(world):
    """The calibration scale is the corpus's, not the submission's: the same evidence scores the same for two
    submissions whose background similarities differ."""
    model = RecoRank(self_supervised=40, reviewer_centric=20, steps=30, recent_years=6).fit(world)
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["E"])
    ev = world.evidence(submission(world), pool, max_papers=model.params.max_papers)
    shifted = ev.background.copy()
    shifted[0] += 0.3  # a submission that resembles everything more
    ev2 = type(ev)(**{**ev.__dict__, "background": shifted})
    assert model.score_evidence(ev2)[0] == pytest.approx(model.score_evidence(ev)[0], abs=1e-6)


def test_loss_terms_weigh_by_rating_difference_and_ties_count_half():
    wrong, total = reviewer_loss_terms([3.0, 2.0, 1.0], [1, 2, 5])  # fully reversed
    assert (wrong, total) == (8.0, 8.0)
    assert reviewer_loss_terms([1.0, 2.0, 3.0], [1, 2, 5]) == (0.0, 8.0)
    assert reviewer_loss_terms([1.0, 1.0, 3.0], [1, 2, 5]) == (0.5, 8.0)  # a tie on the pair differing by 1
    assert reviewer_loss_terms([0.0, 0.0], [4, 4]) == (0.0, 0.0)  # equal ratings carry no pair


def test_pooled_loss_and_bootstrap_interval():
    terms = np.array([[1.0, 4.0], [0.0, 4.0], [2.0, 2.0]])
    assert pooled_loss(terms) == pytest.approx(0.3)
    lo, hi = bootstrap_interval(terms, n=500, seed=1)
    assert 0.0 <= lo <= 0.3 <= hi <= 1.0 and lo < hi


def test_expertise_qrels_keep_fractional_ratings(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("p1 0 1737249 4.5\np2 0 1737249 2\n\np1 0 99 1\n", encoding="utf-8")
    assert read_expertise_qrels(str(path)) == {"1737249": {"p1": 4.5, "p2": 2.0}, "99": {"p1": 1.0}}
    path.write_text("p1 1737249 4.5\n", encoding="utf-8")
    with pytest.raises(UsageError, match="qrels.txt:1: expected `paper 0 reviewer expertise`"):
        read_expertise_qrels(str(path))


def test_submission_references_resolve_like_every_other_id():
    """A submission's references may be qualified ids or the bare ids of the source it came from."""
    from scholargraph.graph.snapshot import GraphSnapshot
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex

    papers = [{"id": pid, "year": 2020, "title": "a title", "abstract": "words"}
              for pid in ("aminer:12", "aminer:13", "s2:abc", "10.1145/x")]
    snap = GraphSnapshot.build(papers, [("s2author:1", "aminer:12", 0)], [])
    n = snap.n_papers
    index = EvidenceIndex(snap, np.ones((n, 2), np.float32), np.ones((n, 2), np.float32),
                          np.zeros((n, 2), np.float32), background=4)

    def refs(given):
        q = index.query_from_submission({"id": "draft", "title": "t", "year": 2021, "references": given},
                                        text_vector=np.ones(2, np.float32), topic_vector=np.ones(2, np.float32))
        return sorted(snap.paper_ids[i] for i in q.references)

    assert refs(["aminer:12", "s2:abc", "10.1145/X"]) == ["10.1145/x", "aminer:12", "s2:abc"]
    assert refs(["12", "abc"]) == ["aminer:12", "s2:abc"]  # bare source ids, each of one paper
    assert refs(["nowhere:1", "99"]) == []  # unknown: dropped, never a wrong link
