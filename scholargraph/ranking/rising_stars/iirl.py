"""IIRL: pairwise citation-increment ranking of young researchers, one linear model per research topic."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from scholargraph.errors import NotFitted
from scholargraph.ranking.rising_stars.features import FEATURE_LABELS, FEATURE_NAMES
from scholargraph.ranking.torch_threads import torch_threads
from scholargraph.registry import load_state, read_config, save_state, write_config

MODEL_VERSION = 1
ALL = "all"  # the key of the model trained on every young author, whatever their topics
CONFIG_FILE = "iirl.json"
WEIGHTS_FILE = "iirl.pt"
_QUANTILES = 101  # stored score percentiles per model, for "top x%" in explanations


# --- the pairwise objective -------------------------------------------------------------------------


def pairwise_objective(w: torch.Tensor, xi: torch.Tensor, xj: torch.Tensor, l2: float,
                       center: torch.Tensor | None = None) -> torch.Tensor:
    """Mean over the pairs (i better than j) of ln σ(s_i − s_j), minus λ‖ω − ω₀‖² (to be maximised);
    ω₀ = `center`, 0 by default (the paper's λ‖ω‖²).

    The mean rather than the sum keeps λ and the learning rate independent of how many pairs a
    batch holds; it is the paper's objective divided by the number of pairs, with λ rescaled."""
    r = w if center is None else w - center
    return torch.nn.functional.logsigmoid((xi - xj) @ w).mean() - l2 * (r @ r)


def pairwise_gradient(w: torch.Tensor, xi: torch.Tensor, xj: torch.Tensor, l2: float,
                      center: torch.Tensor | None = None) -> torch.Tensor:
    """Analytic gradient of `pairwise_objective` in ω: mean of σ(−(s_i − s_j))·(f_i − f_j) − 2λ(ω − ω₀)."""
    d = xi - xj
    r = w if center is None else w - center
    return d.T @ torch.sigmoid(-(d @ w)) / len(d) - 2.0 * l2 * r


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

    l2: float = 1e-3  # λ per pair (see pairwise_objective); used when l2_grid is empty
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
    # "zero": the paper's λ‖ω‖². "all": a topic's ω is pulled towards the `all` model's, λ‖ω − ω_all‖²,
    # which helps topics with few authors (an option; not in the paper).
    prior: str = "zero"
    # Candidate λ values: each model keeps the one whose ω has the best validation log-likelihood
    # (empty: always `l2`). Small topics want a larger λ than large ones.
    l2_grid: tuple[float, ...] = (1e-3, 1e-2, 1e-1)
    seed: int = 0


def _num(v: float) -> str:
    return f"{v:.0f}" if abs(v - round(v)) < 0.05 or abs(v) >= 100 else f"{v:.2g}" if abs(v) < 1 else f"{v:.1f}"


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
    validation share of the topic's authors (the best ω is kept). The same validation pairs choose λ
    among `l2_grid`, per model. Topics with fewer than `min_authors` authors use the `all` model.
    """

    def __init__(self, **params):
        if "l2_grid" in params:  # JSON gives a list back
            params["l2_grid"] = tuple(params["l2_grid"])
        self.params = IIRLParams(**params)
        if self.params.prior not in ("zero", "all"):
            raise ValueError(f"prior must be 'zero' or 'all', not {self.params.prior!r}")

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
            if key != ALL and (len(rows) < self.params.min_authors or len(np.unique(y[rows])) < 2):
                # Too few authors, or labels all tied (no ordered pair to learn from): the `all` model.
                self.fallback_.append(key)
                continue
            # One stream per topic, derived from the seed and the key, so a topic's ω does not depend on
            # which other topics were fitted before it.
            seed = [self.params.seed, *key.encode()]
            center = self.weights_[ALL] if key != ALL and self.params.prior == "all" else None
            # 18-wide products are too small to split: torch's intra-op threads only add overhead.
            with torch_threads(1):
                best = None
                for l2 in self.params.l2_grid or (self.params.l2,):
                    # The same seed for every λ: the same validation authors judge them all.
                    w_l2, info_l2 = self._fit_one(Z[rows], y[rows], np.random.default_rng(seed), center, l2)
                    ll = info_l2["validation_loglik"]
                    if best is None or (ll is not None and (best[1]["validation_loglik"] is None
                                                            or ll > best[1]["validation_loglik"])):
                        best = (w_l2, info_l2)
                assert best is not None, "the l2 grid has at least one value"
                w, info = best
            self.weights_[key] = w
            self.history_[key] = info
            self.quantiles_[key] = np.quantile(Z[rows] @ w, np.linspace(0, 1, _QUANTILES))
        return self

    def _fit_one(self, Z: np.ndarray, y: np.ndarray, rng: np.random.Generator,
                 center: np.ndarray | None = None, l2: float | None = None) -> tuple[np.ndarray, dict]:
        p = self.params
        l2 = p.l2 if l2 is None else l2
        n, k = Z.shape
        perm = rng.permutation(n)
        n_val = int(round(p.val_fraction * n)) if n >= 10 else 0
        val, tr = perm[:n_val], perm[n_val:]
        Zt = torch.from_numpy(Z)
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        c = None if center is None else torch.from_numpy(center)
        w = torch.randn(k, dtype=torch.float64, generator=gen) * p.init_std + (0.0 if c is None else c)
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
                if epochs == 1:  # every label tied: nothing to rank by, so no preference at all
                    best_w = torch.zeros_like(w) if c is None else c.clone()
                break
            zi, zj = Zt[torch.from_numpy(tr[ti])], Zt[torch.from_numpy(tr[tj])]
            for b in range(0, len(ti), p.batch_size):
                g = pairwise_gradient(w, zi[b:b + p.batch_size], zj[b:b + p.batch_size], l2, c)
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
        info = {"authors": int(n), "validation_authors": int(n_val), "l2": l2, "epochs": epochs,
                "best_epoch": best_epoch,
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
        where = "young researchers" if str(topic) == ALL else f"young researchers in topic {topic}"
        ups = [k for k in order if parts[k] > 0.05][:top]
        downs = [k for k in order if parts[k] < -0.05][:top]
        x = np.expm1(np.maximum(z * self.scale_ + self.mean_, 0.0))  # back to raw values
        typical = np.expm1(np.maximum(self.mean_, 0.0))  # the geometric-style mean of ln(f + 1)

        def said(ks):
            return ", ".join(f"{FEATURE_LABELS.get(self.feature_names_[k], self.feature_names_[k])} "
                             f"({_num(x[k])} vs typical {_num(typical[k])})" for k in ks)

        place = f"the top {max(1.0, 100.0 - pct):.0f}%" if pct >= 50 else f"the bottom {max(1.0, pct):.0f}%"
        sentence = f"{who} is predicted to be in {place} of {where} for citation growth (score {score:+.2f})."
        if ups:
            sentence += f" Working for them: {said(ups)}."
        if downs:
            sentence += f" Working against them: {said(downs)}."
        return Explanation(contributions, score, pct, str(topic), sentence)

    # --- persistence -------------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """JSON config + torch state dict (tensors only) in directory `path`."""
        self._check()
        out = write_config(path, "IIRL", MODEL_VERSION,
                           {"params": asdict(self.params), "feature_names": self.feature_names_,
                            "topics": list(self.weights_), "fallback": self.fallback_, "history": self.history_},
                           filename=CONFIG_FILE)
        state = {"mean": torch.from_numpy(self.mean_), "scale": torch.from_numpy(self.scale_)}
        for key, w in self.weights_.items():
            state[f"omega.{key}"] = torch.from_numpy(w)
            state[f"quantiles.{key}"] = torch.from_numpy(self.quantiles_[key])
        save_state(state, out / WEIGHTS_FILE)
        return out

    @classmethod
    def load(cls, path: str | Path) -> IIRL:
        src = Path(path)
        config = read_config(src, "IIRL", MODEL_VERSION, filename=CONFIG_FILE, required=(WEIGHTS_FILE,),
                             known_params=IIRLParams.__dataclass_fields__)
        state = load_state(src / WEIGHTS_FILE, "IIRL")
        model = cls(**config["params"])
        model.feature_names_ = list(config["feature_names"])
        try:
            model.mean_ = state["mean"].numpy()
            model.scale_ = state["scale"].numpy()
            model.weights_ = {k: state[f"omega.{k}"].numpy() for k in config["topics"]}
            model.quantiles_ = {k: state[f"quantiles.{k}"].numpy() for k in config["topics"]}
        except (KeyError, AttributeError, TypeError) as exc:  # a torch file, but not this config's weights
            raise NotFitted(f"{src / WEIGHTS_FILE} does not hold the weights {src / CONFIG_FILE} names "
                            f"({exc!r})") from exc
        model.fallback_ = list(config["fallback"])
        model.history_ = config.get("history", {})
        return model
