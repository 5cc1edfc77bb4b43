"""Rising-star baselines in IIRL's harness: Base-1, Base-2, Gaussian Naive Bayes and LightGBM LambdaRank."""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from scholargraph.ranking.rising_stars.features import FEATURE_NAMES


class _FeatureScore:
    """Ranks by one feature. ln(f + 1) is monotone, so ranking the transformed column is ranking f."""

    feature = ""

    def fit(self, X: np.ndarray, y: np.ndarray, feature_names: Sequence[str] = FEATURE_NAMES):
        self.column_ = list(feature_names).index(self.feature)
        return self

    def score(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(X, dtype=np.float64)[:, self.column_]


class CurrentCitations(_FeatureScore):
    """Base-1: the citations the author has as of T."""

    name = "Base-1"
    feature = "citations"


class RecentIncrement(_FeatureScore):
    """Base-2: the average yearly citation increment over the two years up to T."""

    name = "Base-2"
    feature = "citation_increment_avg_2y"


class RecentExternalIncrement(_FeatureScore):
    """Base-2 without self-citations: the average yearly increment of citations from papers that share no
    author with the cited one, over the two years up to T (needs `build_dataset(external_features=True)`)."""

    name = "Base-2-ext"
    feature = "external_citation_increment_avg_2y"


def top_share(y: np.ndarray, k_percent: float) -> np.ndarray:
    """1 for the true top k% of y (ceil, ties broken by order as in Pre@k%), else 0."""
    n = len(y)
    m = max(1, int(math.ceil(n * k_percent / 100.0)))
    out = np.zeros(n, dtype=np.int64)
    out[np.argsort(-np.asarray(y), kind="stable")[:m]] = 1
    return out


class NaiveBayesTopK:
    """Gaussian Naive Bayes on 'in the top k% of the training labels' (the paper's classification
    baseline); scores are the log-odds of the positive class, which ranks without ties."""

    name = "NaiveBayes"

    def __init__(self, k_percent: float = 10.0):
        self.k_percent = k_percent

    def fit(self, X: np.ndarray, y: np.ndarray, feature_names: Sequence[str] = FEATURE_NAMES):
        from sklearn.naive_bayes import GaussianNB

        target = top_share(y, self.k_percent)
        self.model_ = GaussianNB().fit(X, target) if 0 < target.sum() < len(target) else None
        return self

    def score(self, X: np.ndarray) -> np.ndarray:
        if self.model_ is None:
            return np.zeros(len(X))
        logp = self.model_.predict_joint_log_proba(np.asarray(X, dtype=np.float64))
        return logp[:, 1] - logp[:, 0]


def relevance_grades(y: np.ndarray, cuts: Sequence[float] = (50, 70, 80, 90, 95, 98)) -> np.ndarray:
    """Integer grades for a ranker: how many percentile cuts of y an author's label reaches, so that the
    top of the distribution (what Pre@k% judges) has the finest grades."""
    y = np.asarray(y, dtype=np.float64)
    thresholds = np.percentile(y, cuts)
    return (y[:, None] > thresholds[None, :]).sum(axis=1).astype(np.int64)


class LambdaRankGBM:
    """Gradient-boosted LambdaRank (LightGBM), the modern peer.

    Labels become percentile grades (`relevance_grades`); authors are cut into random queries of
    `group_size`, because LambdaRank ranks within a query and one query of thousands of authors makes
    its pairwise work quadratic. A validation share stops boosting early, as IIRL's does."""

    name = "LightGBM"

    def __init__(self, n_estimators: int = 300, learning_rate: float = 0.05, num_leaves: int = 15,
                 min_child_samples: int = 20, group_size: int = 100, val_fraction: float = 0.2,
                 early_stopping: int = 30, n_jobs: int = 1, seed: int = 0):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.group_size = group_size
        self.val_fraction = val_fraction
        self.early_stopping = early_stopping
        self.n_jobs = n_jobs
        self.seed = seed

    def _groups(self, n: int) -> list[int]:
        sizes = [self.group_size] * (n // self.group_size)
        if n % self.group_size:
            sizes.append(n % self.group_size)
        return sizes

    def fit(self, X: np.ndarray, y: np.ndarray, feature_names: Sequence[str] = FEATURE_NAMES):
        import lightgbm as lgb

        X = np.asarray(X, dtype=np.float64)
        grades = relevance_grades(y)
        rng = np.random.default_rng(self.seed)
        perm = rng.permutation(len(y))
        n_val = int(round(self.val_fraction * len(y))) if len(y) >= 5 * self.group_size else 0
        val, tr = perm[:n_val], perm[n_val:]
        if grades[tr].max(initial=0) == 0:
            self.model_ = None
            return self
        self.model_ = lgb.LGBMRanker(
            objective="lambdarank", n_estimators=self.n_estimators, learning_rate=self.learning_rate,
            num_leaves=self.num_leaves, min_child_samples=self.min_child_samples,
            lambdarank_truncation_level=self.group_size, label_gain=[float(2**g - 1) for g in range(32)],
            n_jobs=self.n_jobs, random_state=self.seed, verbose=-1)
        kwargs: dict[str, Any] = {}
        if n_val:
            # LightGBM 4.6 renamed eval_set to eval_X/eval_y (the old name warns); accept both versions.
            new_api = "eval_X" in inspect.signature(lgb.LGBMRanker.fit).parameters
            data = {"eval_X": (X[val],), "eval_y": (grades[val],)} if new_api else {"eval_set": [(X[val], grades[val])]}
            kwargs = {**data, "eval_group": [self._groups(n_val)],
                      "eval_at": [max(1, self.group_size // 5)],
                      "callbacks": [lgb.early_stopping(self.early_stopping, verbose=False)]}
        self.model_.fit(X[tr], grades[tr], group=self._groups(len(tr)), **kwargs)
        return self

    def score(self, X: np.ndarray) -> np.ndarray:
        if self.model_ is None:
            return np.zeros(len(X))
        return cast(np.ndarray, self.model_.predict(np.asarray(X, dtype=np.float64)))
