"""IIRL: the pairwise gradient, training on a planted ranking, save/load, explanations."""

import json

import numpy as np
import pytest
import torch

from scholargraph.errors import NotFitted
from scholargraph.ranking.metrics import precision_at_k_percent
from scholargraph.ranking.rising_stars.features import FEATURE_NAMES
from scholargraph.ranking.rising_stars.iirl import (
    ALL,
    IIRL,
    pairwise_gradient,
    pairwise_objective,
    sample_pairs,
)


def planted(n=1500, seed=0):
    """Features with a known linear truth: y ranks by X @ w_true plus a little noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(FEATURE_NAMES))) * rng.uniform(0.5, 3.0, len(FEATURE_NAMES)) + 2.0
    w_true = np.zeros(len(FEATURE_NAMES))
    w_true[[1, 15, 9]] = [1.0, 2.0, -0.7]
    y = np.round(np.exp((X - X.mean(0)) / X.std(0) @ w_true / 2 + rng.normal(scale=0.2, size=n)) * 5)
    return X, y, w_true


def test_analytic_gradient_matches_autograd():
    gen = torch.Generator().manual_seed(3)
    w = torch.randn(18, dtype=torch.float64, generator=gen, requires_grad=True)
    xi = torch.randn(64, 18, dtype=torch.float64, generator=gen)
    xj = torch.randn(64, 18, dtype=torch.float64, generator=gen)
    for l2 in (0.0, 0.01, 0.5):
        obj = pairwise_objective(w, xi, xj, l2)
        (auto,) = torch.autograd.grad(obj, w)
        analytic = pairwise_gradient(w.detach(), xi, xj, l2)
        torch.testing.assert_close(analytic, auto, rtol=1e-10, atol=1e-12)


def test_objective_is_mean_log_sigmoid_minus_penalty():
    w = torch.tensor([1.0, -2.0], dtype=torch.float64)
    xi = torch.tensor([[1.0, 0.0], [0.0, 0.0]], dtype=torch.float64)
    xj = torch.tensor([[0.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    # s_i - s_j = 1 and 2
    expected = (np.log(1 / (1 + np.exp(-1))) + np.log(1 / (1 + np.exp(-2)))) / 2 - 0.1 * 5
    assert float(pairwise_objective(w, xi, xj, 0.1)) == pytest.approx(expected)


def test_pairs_are_ordered_and_untied():
    y = np.array([0, 0, 1, 5, 5, 2])
    i, j = sample_pairs(y, 5000, np.random.default_rng(0))
    assert len(i) > 3000 and (y[i] > y[j]).all()
    assert sample_pairs(np.array([3]), 10, np.random.default_rng(0))[0].size == 0


def test_fit_recovers_a_planted_ranking():
    X, y, w_true = planted()
    model = IIRL(seed=1).fit(X[:1000], y[:1000])
    w = np.array([model.weights()[f] for f in FEATURE_NAMES])
    assert np.corrcoef(w, w_true)[0, 1] > 0.9
    assert w[15] > w[1] > 0 > w[9]
    assert precision_at_k_percent(model.score(X[1000:]), y[1000:], 10) >= 0.7
    info = model.history_[ALL]
    assert info["best_epoch"] <= info["epochs"] <= model.params.max_epochs


def test_one_model_per_topic_and_fallback_for_small_topics():
    X, y, _ = planted(600)
    topics = {"0": np.arange(0, 300), "1": np.arange(250, 600), "2": np.arange(5)}
    model = IIRL(seed=0, max_epochs=20, l2_grid=()).fit(X, y, topics)
    assert set(model.weights_) == {ALL, "0", "1"} and model.fallback_ == ["2"]
    assert sorted(model.topics_) == ["0", "1", "2"]
    np.testing.assert_allclose(model.score(X[:10], "2"), model.score(X[:10], ALL))
    assert not np.allclose(model.score(X[:10], "0"), model.score(X[:10], "1"))
    with pytest.raises(KeyError):
        model.score(X[:3], "9")
    with pytest.raises(ValueError):
        IIRL().fit(X, y, {ALL: np.arange(10)})


def test_training_is_deterministic_per_seed():
    X, y, _ = planted(400)
    a = IIRL(seed=5, max_epochs=10).fit(X, y).score(X)
    b = IIRL(seed=5, max_epochs=10).fit(X, y).score(X)
    np.testing.assert_array_equal(a, b)


def test_not_fitted_errors():
    with pytest.raises(NotFitted):
        IIRL().score(np.zeros((2, 18)))
    with pytest.raises(NotFitted):
        IIRL().save("/nonexistent-never-written")


def test_save_load_round_trip_gives_identical_scores(tmp_path):
    X, y, _ = planted(500)
    model = IIRL(seed=2, max_epochs=15, l2=0.01).fit(X, y, {"3": np.arange(200)})
    model.save(tmp_path / "m")
    config = json.loads((tmp_path / "m" / "iirl.json").read_text())
    assert config["params"]["l2"] == 0.01 and config["feature_names"] == list(FEATURE_NAMES)
    loaded = IIRL.load(tmp_path / "m")
    for topic in (ALL, "3"):
        np.testing.assert_array_equal(loaded.score(X, topic), model.score(X, topic))
    assert loaded.explain(X[0], "3").sentence == model.explain(X[0], "3").sentence
    assert loaded.params == model.params


def test_load_refuses_missing_or_incompatible_models(tmp_path):
    with pytest.raises(NotFitted):
        IIRL.load(tmp_path / "nothing")
    X, y, _ = planted(200)
    IIRL(max_epochs=3).fit(X, y).save(tmp_path / "m")
    path = tmp_path / "m" / "iirl.json"
    config = json.loads(path.read_text())
    config["version"] = 999
    path.write_text(json.dumps(config))
    with pytest.raises(NotFitted, match="version"):
        IIRL.load(tmp_path / "m")


def test_explain_sums_to_the_score_and_reads_as_a_sentence():
    X, y, _ = planted()
    model = IIRL(seed=0, max_epochs=20, l2_grid=()).fit(X, y)
    best = int(np.argmax(model.score(X)))
    ex = model.explain(X[best], name="Dr. Ada")
    assert [f for f, _ in ex] and {f for f, _ in ex} == set(FEATURE_NAMES)
    assert sum(v for _, v in ex) == pytest.approx(model.score(X[best:best + 1])[0])
    assert abs(ex[0][1]) >= abs(ex[-1][1])
    assert ex.percentile > 95
    assert ex.sentence.startswith("Dr. Ada is predicted to be in the top") and "recent citation growth" in ex.sentence


def test_gradient_with_a_prior_centre_matches_autograd():
    gen = torch.Generator().manual_seed(4)
    w = torch.randn(5, dtype=torch.float64, generator=gen, requires_grad=True)
    center = torch.randn(5, dtype=torch.float64, generator=gen)
    xi, xj = torch.randn(2, 32, 5, dtype=torch.float64, generator=gen)
    (auto,) = torch.autograd.grad(pairwise_objective(w, xi, xj, 0.3, center), w)
    torch.testing.assert_close(pairwise_gradient(w.detach(), xi, xj, 0.3, center), auto)


def test_lambda_is_chosen_per_model_on_validation_pairs():
    X, y, _ = planted(800)
    model = IIRL(seed=0, max_epochs=15, l2_grid=(1e-3, 10.0)).fit(X, y, {"0": np.arange(400)})
    assert {h["l2"] for h in model.history_.values()} == {1e-3}  # λ = 10 flattens ω: worse on validation
    fixed = IIRL(seed=0, max_epochs=15, l2_grid=(), l2=1e-3).fit(X, y)
    np.testing.assert_array_equal(fixed.weights_[ALL], model.weights_[ALL])
    pulled = IIRL(seed=0, max_epochs=15, prior="all", l2_grid=(), l2=10.0).fit(X, y, {"0": np.arange(400)})
    np.testing.assert_allclose(pulled.weights_["0"], pulled.weights_[ALL], atol=0.05)
    with pytest.raises(ValueError):
        IIRL(prior="nope")


def test_tied_labels_teach_nothing():
    X, y, _ = planted(300)
    tied = np.where(np.arange(300) < 100, 0.0, y)  # topic "0" is all zeros
    model = IIRL(max_epochs=5, l2_grid=()).fit(X, tied, {"0": np.arange(100)})
    assert model.fallback_ == ["0"]
    flat = IIRL(max_epochs=5, l2_grid=()).fit(X, np.zeros(300))
    assert not flat.score(X).any()
