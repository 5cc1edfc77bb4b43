"""RECO-Rank on hand-built evidence: calibration, shortlist, gate and reliability, loss, explanations, persistence."""

import json

import numpy as np
import pytest
import torch

from scholargraph.conference.submissions import ReviewerPool
from scholargraph.errors import NotFitted, UsageError
from scholargraph.ranking.reviewers.reco_rank import RecoRank
from scholargraph.ranking.reviewers.reco_rank_net import NO_HISTORY_SCORE, RecoRankNet, evidence_batch
from scholargraph.ranking.reviewers.training import TrainingQuery, pairwise_loss, self_supervised_queries

from .conftest import make_evidence, submission

# A semantic match with weak other evidence; a semantic near-miss that the submission cites twice, on its
# topic; a reviewer whose only other-evidence is one paper's topic, contradicted by its citations.
SEMANTIC = [dict(sem=0.9, top=0.8, vec=0.2)] * 3
NEAR_MISS = [dict(sem=0.45, top=0.85, vec=0.5, direct=1)] * 2
NOISY = [dict(sem=0.3, top=0.95, vec=0.0), dict(sem=0.3, top=0.2), dict(sem=0.3, top=0.2)]


def untrained(**params) -> RecoRank:
    """The model at its initial parameters: the architecture's behaviour, before any data."""
    model = RecoRank(**params)
    torch.manual_seed(0)
    model.net_ = RecoRankNet(model.params).eval()
    return model


def test_calibration_is_monotone_query_aware_and_masks_missing():
    model = untrained()
    ev = make_evidence([[dict(sem=s, top=0.5, vec=0.1) for s in (0.1, 0.3, 0.6, 0.9)],
                        [dict(sem=0.9, top=0.5, has=(False, True, True))]])
    c = model.forward_evidence(ev)["calibrated"]
    assert np.all(np.diff(c[0, :4, 0]) > 0) and np.all((c >= 0) & (c <= 1))
    assert c[1, 0, 0] == 0  # missing semantic evidence stays out, whatever its raw value
    # The same cosine stands out less against a query whose background similarity is higher.
    high_bg = make_evidence([[dict(sem=0.6, top=0.5)]], background=(0.4, 0.1, 0.0, 0.1, 0.0, 0.1, 0.0, 1.0))
    assert model.forward_evidence(high_bg)["calibrated"][0, 0, 0] < c[0, 2, 0]
    out = model.forward_evidence(ev)
    assert (out["tau"] > model.params.tau_min).all()


def test_shortlist_keeps_any_evidence_best_and_bridges():
    model = untrained(k_shortlist=1, k_bridge=1)
    papers = [dict(sem=0.9, top=0.3), dict(sem=0.2, top=0.95), dict(sem=0.2, top=0.2, vec=0.6, direct=1),
              dict(sem=0.1, top=0.1), dict(sem=0.15, top=0.15)]
    out = model.forward_evidence(make_evidence([papers]))
    short, bridge = out["shortlist"][0], out["bridge"][0]
    assert list(short) == [True, True, True, False, False]
    assert bridge.sum() == 1 and not bridge[0]  # a bridge sits well above its semantic score


def test_near_miss_with_topic_and_citation_evidence_is_recovered():
    ev = make_evidence([SEMANTIC, NEAR_MISS, NOISY])
    full = untrained().forward_evidence(ev)
    assert full["score"][1] > full["score"][0]
    assert full["compensation"][1] > 0.3 and full["reliability"][1] > 0.5
    without = untrained(compensation=False).forward_evidence(ev)
    assert without["score"][1] < without["score"][0]  # main path alone keeps the semantic reviewer first


def test_noisy_single_paper_evidence_is_gated_off():
    ev = make_evidence([SEMANTIC, NEAR_MISS, NOISY])
    full = untrained().forward_evidence(ev)
    assert full["reliability"][2] < 0.1 and full["compensation"][2] < 0.02
    assert full["score"][2] < full["score"][0]
    ungated = untrained(gate_reliability=False).forward_evidence(ev)
    # Without the gate the noisy reviewer keeps half a point of compensation and closes most of the gap.
    assert ungated["compensation"][2] > 0.4
    assert ungated["score"][0] - ungated["score"][2] < 0.5 * (full["score"][0] - full["score"][2])


def test_pairwise_loss_top_k_only_counts_pairs_touching_the_top():
    score = torch.tensor([[3.0, 2.0, 1.0, 0.0]])
    grades = torch.tensor([[0.0, 0.0, 0.0, 1.0]])  # the one relevant reviewer is ranked last
    reviewer, w = torch.ones(1, 4, dtype=torch.bool), torch.ones(1)
    sp = torch.nn.functional.softplus
    top2 = pairwise_loss(score, grades, reviewer, w, 2, 1.0)
    every = pairwise_loss(score, grades, reviewer, w, None, 1.0)
    # With k=2 the pair against the 3rd (neither in the top 2) drops out.
    assert top2 == pytest.approx(float(sp(torch.tensor(3.0)) + sp(torch.tensor(2.0))) / 2)
    assert every == pytest.approx(float(sp(torch.tensor(3.0)) + sp(torch.tensor(2.0)) + sp(torch.tensor(1.0))) / 3)
    assert pairwise_loss(score, torch.zeros(1, 4), reviewer, w, 2, 1.0) == 0  # no graded pair, no loss


def test_training_learns_to_rank_and_reduces_loss():
    rng = np.random.default_rng(0)
    training = []
    for _ in range(24):
        good = [dict(sem=rng.uniform(0.3, 0.5), top=0.9, vec=0.5, direct=1)] * 2
        good_sem = [dict(sem=rng.uniform(0.8, 0.9), top=0.9, vec=0.3)] * 3
        bad = [dict(sem=rng.uniform(0.5, 0.7), top=0.3, vec=0.1)] * 2
        training.append(TrainingQuery(make_evidence([good, good_sem, bad]), np.array([3.0, 3.0, 0.0], np.float32)))
    model = RecoRank(steps=60, lr=0.05, batch_size=8).train_on(training)
    assert np.mean(model.history_[-10:]) < np.mean(model.history_[:10])
    s = model.score_evidence(training[0].evidence)
    assert s[0] > s[2] and s[1] > s[2]


def test_loss_mixture_adds_the_weighted_all_pairs_term():
    rng = np.random.default_rng(1)
    reviewers = lambda: [[dict(sem=rng.uniform(0.2, 0.9), top=0.5, vec=0.2)] * 2 for _ in range(4)]  # noqa: E731
    training = [TrainingQuery(make_evidence(reviewers()), np.array([3.0, 1.0, 0.0, 2.0], np.float32))
                for _ in range(12)]

    def first_loss(**params):  # the loss of the first step, before any update: same seed, same parameters
        return RecoRank(steps=1, batch_size=0, loss_k=2, **params).train_on(training).history_[0]

    top_k = first_loss(loss_all_pairs=0.0)
    all_pairs = first_loss(topk_loss=False)
    assert top_k > 0 and all_pairs > 0 and abs(all_pairs - top_k) > 1e-3
    assert first_loss(loss_all_pairs=0.5) == pytest.approx(top_k + 0.5 * all_pairs, rel=1e-5)


def test_not_fitted_and_save_load_round_trip(tmp_path, world):
    with pytest.raises(NotFitted):
        RecoRank().score_evidence(make_evidence([SEMANTIC]))
    with pytest.raises(NotFitted):
        RecoRank.load(tmp_path / "none")
    pool = ReviewerPool.from_snapshot(world.snapshot, min_papers=1)
    model = RecoRank(steps=20, self_supervised=20, recent_years=30, hard_negatives=3, random_negatives=2)
    model.fit(world, pool)
    assert model.fit_info_["self_supervised"] > 0
    ev = make_evidence([SEMANTIC, NEAR_MISS, NOISY])
    model.save(tmp_path / "m")
    loaded = RecoRank.load(tmp_path / "m")
    assert loaded.params == model.params
    np.testing.assert_allclose(loaded.score_evidence(ev), model.score_evidence(ev), rtol=0, atol=0)
    meta = json.loads((tmp_path / "m" / "config.json").read_text())
    meta["version"] = 999
    (tmp_path / "m" / "config.json").write_text(json.dumps(meta))
    with pytest.raises(NotFitted, match="version"):
        RecoRank.load(tmp_path / "m")


def test_self_supervised_queries_hide_papers_and_grade_authors(world):
    pool = ReviewerPool.from_snapshot(world.snapshot, min_papers=1)
    qs = self_supervised_queries(world, pool, 10, hard=3, random=2, recent_years=30, seed=0)
    assert qs
    for t in qs:
        assert (t.grades[t.grades >= 2] > 0).all() and (t.grades == 0).any() or (t.grades == 1).any()
        hidden = world.snapshot.paper_index[t.evidence.query_id]
        assert hidden not in set(t.evidence.papers[t.evidence.valid].tolist())
        assert len(t.grades) == len(t.evidence.reviewer_ids)


def test_explanations_add_up_and_history_less_reviewers_come_last(world):
    q = submission(world)
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["E", "X", "J", "O", "N", "ghost"])
    model = untrained()
    sugg = model.recommend(world, q, pool, k=6, papers_per_reviewer=2)
    assert [s.rank for s in sugg] == list(range(1, 7))
    assert sugg[-1].reviewer_id == "ghost" and sugg[-1].no_history and sugg[-1].score == NO_HISTORY_SCORE
    for s in sugg:
        assert s.score == pytest.approx(s.main + s.compensation, abs=1e-6)
        assert s.main == pytest.approx(sum(p.main for p in s.papers) + s.other_main, abs=1e-6)
        assert s.compensation == pytest.approx(sum(p.compensation for p in s.papers) + s.other_compensation,
                                               abs=1e-6)
        assert len(s.papers) <= 2 and s.to_dict()["reviewer_id"] == s.reviewer_id
    x = next(s for s in sugg if s.reviewer_id == "X")
    assert any(p.direct_link for p in x.papers) and x.compensation > 0
    scores = [s.score for s in sugg]
    assert scores == sorted(scores, reverse=True)
    # Excluded rows are never suggested; the cheap first stage keeps cited reviewers.
    assert "X" not in [s.reviewer_id for s in model.recommend(world, q, pool, k=6, exclude=[1])]
    staged = model.recommend(world, q, pool, k=2, shortlist=1)
    assert "X" in [s.reviewer_id for s in staged]


def test_batch_pads_queries_of_different_sizes():
    a = make_evidence([SEMANTIC])
    b = make_evidence([SEMANTIC, NEAR_MISS, NOISY])
    batch = evidence_batch([a, b], [np.array([1.0]), np.array([1.0, 2.0, 0.0])])
    assert batch["sem_x"].shape[:3] == (2, 3, 3) and batch["grades"][0, 1] == -1
    out = untrained().net_(batch)
    assert out["score"][0, 1] == NO_HISTORY_SCORE
    single = untrained().forward_evidence(b)["score"]
    np.testing.assert_allclose(out["score"][1].detach().numpy(), single, atol=1e-6)


def test_fit_on_graded_judgments_alone(world):
    q = submission(world)
    model = RecoRank(steps=10, self_supervised=0).fit(world, judged=[(q, {"E": 3, "X": 3, "O": 0, "N": 1})])
    assert model.fit_info_["judged"] == 1 and model.fit_info_["self_supervised"] == 0
    with pytest.raises(UsageError):
        RecoRank(steps=1, self_supervised=0).fit(world)
