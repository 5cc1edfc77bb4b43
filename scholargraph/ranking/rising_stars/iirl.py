"""IIRL: pairwise citation-increment ranking of young researchers, one linear model per research topic."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from scholargraph.errors import NotFitted
from scholargraph.ranking.rising_stars.features import FEATURE_LABELS, FEATURE_NAMES

MODEL_VERSION = 1
ALL = "all"  # the key of the model trained on every young author, whatever their topics
CONFIG_FILE = "iirl.json"
WEIGHTS_FILE = "iirl.pt"
_QUANTILES = 101  # stored score percentiles per model, for "top x%" in explanations


# --- the pairwise objective -------------------------------------------------------------------------


def pairwise_objective(w: torch.Tensor, xi: torch.Tensor, xj: torch.Tensor, l2: float) -> torch.Tensor:
    """Mean over the pairs (i better than j) of ln σ(s_i − s_j), minus λ‖ω‖² (to be maximised).

    The mean rather than the sum keeps λ and the learning rate independent of how many pairs a
    batch holds; it is the paper's objective divided by the number of pairs, with λ rescaled."""
    return torch.nn.functional.logsigmoid((xi - xj) @ w).mean() - l2 * (w @ w)


def pairwise_gradient(w: torch.Tensor, xi: torch.Tensor, xj: torch.Tensor, l2: float) -> torch.Tensor:
    """Analytic gradient of `pairwise_objective` in ω: mean of σ(−(s_i − s_j))·(f_i − f_j) − 2λω."""
    d = xi - xj
    return d.T @ torch.sigmoid(-(d @ w)) / len(d) - 2.0 * l2 * w


def sample_pairs(y: np.ndarray, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """About `count` ordered pairs (i, j) with y[i] > y[j], drawn uniformly among the pairs that are
    not tied (ties say nothing about the order and are dropped)."""
    n = len(y)
    if n < 2:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    i = rng.integers(0, n, size=count)
    j = rng.integers(0, n, size=count)
    keep = y[i] != y[j]
    i, j = i[keep], j[keep]
    swap = y[i] < y[j]
    i[swap], j[swap] = j[swap], i[swap]
    return i, j


# --- the model ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IIRLParams:
    """Hyperparameters (all saved in the JSON config)."""

    l2: float = 1e-3  # λ per pair (see pairwise_objective)
    lr: float = 0.1
    momentum: float = 0.9
    batch_size: int = 512
    pairs_per_epoch: int = 20_000
    max_epochs: int = 100
    patience: int = 8  # epochs without a better validation log-likelihood before stopping
    val_fraction: float = 0.2
    val_pairs: int = 20_000
    init_std: float = 0.01
    min_authors: int = 20  # a topic with fewer training authors uses the `all` model
    seed: int = 0


class Explanation(list):
    """A list of (feature name, ω_k·f_ak) contributions, largest in magnitude first, with the total
    `score`, its `percentile` among the training population of the topic, and a readable `sentence`.

    Features enter standardised, so a contribution is measured against the average young researcher
    of the training population: positive pushes the prediction up, negative holds it back."""

    def __init__(self, contributions: Sequence[tuple[str, float]], score: float, percentile: float,
                 topic: str, sentence: str):
        super().__init__(contributions)
        self.score = score
        self.percentile = percentile
        self.topic = topic
        self.sentence = sentence


class IIRL:
    """Linear pairwise ranker s_a = ω·f_a (Zhang et al., "Identifying the Academic Rising Stars"), with
    one ω per research topic plus `all`.

    `fit(X, y, topics)`: X holds ln(f + 1) features (n x k, columns `feature_names`), y the citation
    increments, `topics` maps a topic key to the row indices of its authors. Features are standardised
    with the mean and scale of all rows given to fit (kept with the model). Each ω maximises
    `pairwise_objective` by minibatch SGD with momentum over freshly sampled pairs every epoch, from a
    Gaussian initialisation, and stops early on the log-likelihood of fixed pairs from a held-out
    validation share of the topic's authors (the best ω is kept).
    """

    def __init__(self, **params):
        self.params = IIRLParams(**params)

    # --- training ----------------------------------------------------------------------------------

    def fit(self, X: np.ndarray, y: np.ndarray, topics: Mapping[str, np.ndarray] | None = None,
            feature_names: Sequence[str] = FEATURE_NAMES) -> IIRL:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if X.ndim != 2 or len(X) != len(y):
            raise ValueError(f"X must be (n, k) with one label per row: got {X.shape} and {y.shape}")
        if X.shape[1] != len(feature_names):
            raise ValueError(f"X has {X.shape[1]} columns but {len(feature_names)} feature names")
        if ALL in (topics or {}):
            raise ValueError(f"'{ALL}' is reserved for the model over every author")
        self.feature_names_ = list(feature_names)
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0)
        self.scale_ = np.where(scale > 1e-12, scale, 1.0)
        Z = (X - self.mean_) / self.scale_
        self.weights_: dict[str, np.ndarray] = {}
        self.quantiles_: dict[str, np.ndarray] = {}
        self.history_: dict[str, dict] = {}
        self.fallback_: list[str] = []
        groups = {ALL: np.arange(len(y))} | {str(t): np.asarray(ix, dtype=np.int64) for t, ix in (topics or {}).items()}
        for key, rows in groups.items():
            if key != ALL and len(rows) < self.params.min_authors:
                self.fallback_.append(key)
                continue
            # One stream per topic, derived from the seed and the key, so a topic's ω does not depend on
            # which other topics were fitted before it.
            seed = [self.params.seed, *key.encode()]
            threads = torch.get_num_threads()
            # 18-wide products are too small to split: torch's intra-op threads only add overhead.
            torch.set_num_threads(1)
            try:
                w, info = self._fit_one(Z[rows], y[rows], np.random.default_rng(seed))
            finally:
                torch.set_num_threads(threads)
            self.weights_[key] = w
            self.history_[key] = info
            self.quantiles_[key] = np.quantile(Z[rows] @ w, np.linspace(0, 1, _QUANTILES))
        return self

    def _fit_one(self, Z: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict]:
        p = self.params
        n, k = Z.shape
        perm = rng.permutation(n)
        n_val = int(round(p.val_fraction * n)) if n >= 10 else 0
        val, tr = perm[:n_val], perm[n_val:]
        Zt = torch.from_numpy(Z)
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        w = torch.randn(k, dtype=torch.float64, generator=gen) * p.init_std
        vi, vj = sample_pairs(y[val], p.val_pairs, rng) if n_val else (np.empty(0, int), np.empty(0, int))
        vi, vj = val[vi], val[vj]
        if len(vi) == 0:
            # No usable validation pairs (tiny or all-tied topic): train on everything, no early stopping.
            tr = perm
        zvi, zvj = Zt[torch.from_numpy(vi)], Zt[torch.from_numpy(vj)]
        best_w, best_ll, best_epoch, epochs = w.clone(), -math.inf, 0, 0
        velocity = torch.zeros_like(w)
        for epoch in range(p.max_epochs):
            epochs = epoch + 1
            ti, tj = sample_pairs(y[tr], p.pairs_per_epoch, rng)
            if len(ti) == 0:
                break
            zi, zj = Zt[torch.from_numpy(tr[ti])], Zt[torch.from_numpy(tr[tj])]
            for b in range(0, len(ti), p.batch_size):
                g = pairwise_gradient(w, zi[b:b + p.batch_size], zj[b:b + p.batch_size], p.l2)
                velocity = p.momentum * velocity + p.lr * g  # ascent: the objective is maximised
                w = w + velocity
            if len(vi):
                ll = float(torch.nn.functional.logsigmoid((zvi - zvj) @ w).mean())
                if ll > best_ll + 1e-6:
                    best_w, best_ll, best_epoch = w.clone(), ll, epochs
                elif epochs - best_epoch >= p.patience:
                    break
            else:
                best_w, best_epoch = w.clone(), epochs
        info = {"authors": int(n), "validation_authors": int(n_val), "epochs": epochs, "best_epoch": best_epoch,
                "validation_loglik": None if best_ll == -math.inf else best_ll}
        return best_w.numpy().copy(), info

    # --- using it ----------------------------------------------------------------------------------

    def _check(self) -> None:
        if not hasattr(self, "weights_"):
            raise NotFitted("IIRL model is not fitted: call fit() or load() first")

    @property
    def topics_(self) -> list[str]:
        self._check()
        return [t for t in self.weights_ if t != ALL] + list(self.fallback_)

    def _key(self, topic: str | int) -> str:
        key = str(topic)
        if key in self.weights_:
            return key
        if key in self.fallback_:
            return ALL
        raise KeyError(f"no IIRL model for topic {key!r} (known: {', '.join(self.weights_)})")

    def _standardise(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.shape[-1] != len(self.feature_names_):
            raise ValueError(f"expected {len(self.feature_names_)} features, got {X.shape[-1]}")
        return (X - self.mean_) / self.scale_

    def weights(self, topic: str | int = ALL) -> dict[str, float]:
        """ω of a topic's model per feature, on standardised features."""
        self._check()
        return dict(zip(self.feature_names_, self.weights_[self._key(topic)].tolist()))

    def score(self, X: np.ndarray, topic: str | int = ALL) -> np.ndarray:
        """s_a = ω·f_a for each row of X (ln(f + 1) features), with the topic's ω."""
        self._check()
        return self._standardise(X) @ self.weights_[self._key(topic)]

    def percentile(self, scores: np.ndarray, topic: str | int = ALL) -> np.ndarray:
        """Share (0-100) of the topic's training authors scoring below each score."""
        self._check()
        q = self.quantiles_[self._key(topic)]
        return np.interp(np.asarray(scores, dtype=np.float64), q, np.linspace(0, 100, len(q)))

    def explain(self, author_features: np.ndarray, topic: str | int = ALL, name: str | None = None,
                top: int = 3) -> Explanation:
        """Why a young researcher scores as they do: each feature's ω_k·f_ak (standardised), largest
        magnitude first, and a sentence naming the main reasons for and against."""
        self._check()
        key = self._key(topic)
        z = self._standardise(np.asarray(author_features, dtype=np.float64).reshape(-1))
        parts = self.weights_[key] * z
        order = np.argsort(-np.abs(parts), kind="stable")
        contributions = [(self.feature_names_[k], float(parts[k])) for k in order]
        score = float(parts.sum())
        pct = float(self.percentile(np.array([score]), key)[0])
        who = name or "This researcher"
        where = "all young researchers" if str(topic) == ALL else f"young researchers in topic {topic}"
        ups = [(f, v) for f, v in contributions if v > 0.05][:top]
        downs = [(f, v) for f, v in contributions if v < -0.05][:max(1, top - 1)]

        def said(items):
            return ", ".join(f"{FEATURE_LABELS.get(f, f)} ({v:+.2f})" for f, v in items)

        sentence = f"{who} ranks above {pct:.0f}% of {where} (score {score:+.2f})"
        if ups:
            sentence += f", mainly for {said(ups)}"
        if downs:
            sentence += f"; held back by {said(downs)}" if ups else f", held back by {said(downs)}"
        sentence += ". Contributions compare each feature with the average young researcher."
        return Explanation(contributions, score, pct, str(topic), sentence)

    # --- persistence -------------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """JSON config + torch state dict (tensors only) in directory `path`."""
        self._check()
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        config = {"model": "IIRL", "version": MODEL_VERSION, "params": asdict(self.params),
                  "feature_names": self.feature_names_, "topics": list(self.weights_),
                  "fallback": self.fallback_, "history": self.history_}
        (out / CONFIG_FILE).write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
        state = {"mean": torch.from_numpy(self.mean_), "scale": torch.from_numpy(self.scale_)}
        for key, w in self.weights_.items():
            state[f"omega.{key}"] = torch.from_numpy(w)
            state[f"quantiles.{key}"] = torch.from_numpy(self.quantiles_[key])
        torch.save(state, out / WEIGHTS_FILE)
        return out

    @classmethod
    def load(cls, path: str | Path) -> IIRL:
        src = Path(path)
        try:
            config = json.loads((src / CONFIG_FILE).read_text(encoding="utf-8"))
            state = torch.load(src / WEIGHTS_FILE, weights_only=True)
        except FileNotFoundError as exc:
            raise NotFitted(f"no saved IIRL model in {src} ({exc.filename} missing)") from None
        if config.get("model") != "IIRL" or config.get("version") != MODEL_VERSION:
            raise NotFitted(f"{src} holds model {config.get('model')!r} version {config.get('version')!r}; "
                            f"this code reads IIRL version {MODEL_VERSION}: retrain it")
        model = cls(**config["params"])
        model.feature_names_ = list(config["feature_names"])
        model.mean_ = state["mean"].numpy()
        model.scale_ = state["scale"].numpy()
        model.weights_ = {k: state[f"omega.{k}"].numpy() for k in config["topics"]}
        model.quantiles_ = {k: state[f"quantiles.{k}"].numpy() for k in config["topics"]}
        model.fallback_ = list(config["fallback"])
        model.history_ = config.get("history", {})
        return model
