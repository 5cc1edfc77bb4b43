"""Rising-star baselines: Base-1, Base-2, Naive Bayes on top-k% membership, LightGBM LambdaRank."""

import numpy as np

from scholargraph.ranking.metrics import precision_at_k_percent
from scholargraph.ranking.rising_stars.baselines import (
    CurrentCitations,
    LambdaRankGBM,
    NaiveBayesTopK,
    RecentIncrement,
    relevance_grades,
    top_share,
)
from scholargraph.ranking.rising_stars.features import FEATURE_NAMES


def planted(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    X = np.abs(rng.normal(size=(n, len(FEATURE_NAMES)))) * 2
    signal = X[:, FEATURE_NAMES.index("citation_increment_avg_2y")] + 0.5 * X[:, FEATURE_NAMES.index("n_papers")]
    y = np.floor(np.exp(signal + rng.normal(scale=0.3, size=n)))
    return X, y


def test_base_1_and_2_rank_by_their_feature():
    X, y = planted(50)
    np.testing.assert_array_equal(CurrentCitations().fit(X, y).score(X), X[:, FEATURE_NAMES.index("citations")])
    np.testing.assert_array_equal(RecentIncrement().fit(X, y).score(X),
                                  X[:, FEATURE_NAMES.index("citation_increment_avg_2y")])
    assert (CurrentCitations.name, RecentIncrement.name) == ("Base-1", "Base-2")


def test_top_share_and_grades():
    assert top_share(np.array([3, 9, 9, 1, 0, 5, 2, 8, 7, 6]), 20).tolist() == [0, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    assert top_share(np.array([1.0, 2.0, 3.0]), 10).sum() == 1  # at least one
    g = relevance_grades(np.arange(100))
    assert g[0] == 0 and g[-1] == 6 and (np.diff(g) >= 0).all()


def test_naive_bayes_learns_the_top_share():
    X, y = planted()
    nb = NaiveBayesTopK(10).fit(X[:800], y[:800])
    assert precision_at_k_percent(nb.score(X[800:]), y[800:], 10) > 0.4
    flat = NaiveBayesTopK(100).fit(X[:50], y[:50])  # one class only: no model, constant scores
    assert not flat.score(X[:5]).any()


def test_lambdarank_learns_the_order():
    X, y = planted()
    model = LambdaRankGBM(n_estimators=60, group_size=50).fit(X[:800], y[:800])
    assert precision_at_k_percent(model.score(X[800:]), y[800:], 10) > 0.4
    assert not LambdaRankGBM(n_estimators=5).fit(X[:100], np.zeros(100)).score(X[:3]).any()
