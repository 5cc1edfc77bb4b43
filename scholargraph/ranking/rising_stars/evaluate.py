"""IIRL evaluation protocol: Pre@k% per topic for IIRL and baselines, feature-group ablations, cross-topic transfer."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from scholargraph.ranking.metrics import precision_at_k_percent
from scholargraph.ranking.rising_stars.baselines import (
    CurrentCitations,
    LambdaRankGBM,
    NaiveBayesTopK,
    RecentExternalIncrement,
    RecentIncrement,
)
from scholargraph.ranking.rising_stars.features import EXTENDED_FEATURE_GROUPS, RisingStarData, feature_indices
from scholargraph.ranking.rising_stars.iirl import ALL, IIRL
from scholargraph.tables import text_table

DEFAULT_KS = (5, 10, 20)
CURVE_KS = (1, 2, 5, 10, 15, 20, 25, 30)


class Competitor(Protocol):
    """What a Method makes: fit(X, y, feature_names) -> self, then score(X)."""

    def fit(self, X: np.ndarray, y: np.ndarray, feature_names: Sequence[str]) -> Competitor: ...

    def score(self, X: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Method:
    """A competitor in the harness. `make(k)` returns an unfitted model with fit(X, y, feature_names)
    and score(X); `per_k` methods (trained on top-k% membership) get one model per k."""

    name: str
    make: Callable[[float], Competitor]
    per_k: bool = False


def default_baselines(seed: int = 0, lightgbm: bool = True, lightgbm_params: Mapping | None = None) -> list[Method]:
    methods = [Method("Base-1", lambda k: CurrentCitations()), Method("Base-2", lambda k: RecentIncrement()),
               Method("NaiveBayes", lambda k: NaiveBayesTopK(k), per_k=True)]
    if lightgbm:
        params = {"seed": seed, **(lightgbm_params or {})}
        methods.append(Method("LightGBM", lambda k: LambdaRankGBM(**params)))
    return methods


def split_authors(n: int, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random train/test split of the young researchers (sorted row indices)."""
    perm = np.random.default_rng(seed).permutation(n)
    n_test = int(round(test_size * n))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def _pre(scores: np.ndarray, truth: np.ndarray, ks: Iterable[float]) -> dict[float, float]:
    return {k: precision_at_k_percent(scores, truth, k) for k in ks}


def _mean_dicts(items: Sequence[Mapping[float, float]]) -> dict[float, float]:
    if not items:
        return {}
    return {k: float(np.mean([d[k] for d in items])) for k in items[0]}


def _tasks(data: RisingStarData, top_m: int) -> dict[str, np.ndarray]:
    groups = data.topic_groups(top_m)
    return groups if groups else {ALL: np.arange(len(data))}


def evaluate(data: RisingStarData, *, ks: Sequence[float] = DEFAULT_KS, test_size: float = 0.3, repeats: int = 1,
             seed: int = 0, top_m: int = 3, iirl_params: Mapping | None = None,
             methods: Sequence[Method] | None = None, lightgbm: bool = True, ablation: bool = True,
             transfer: bool = True, transfer_k: float = 10, curve_ks: Sequence[float] = CURVE_KS,
             plot_path: str | None = None) -> dict:
    """IIRL's protocol on `data` (features as of T, labels in (T, T + D]): the young researchers are split
    into training and test sets (`repeats` random splits, results averaged); each topic is one task
    (its authors: those with the topic among their top `top_m`); every method is trained on the topic's
    training authors and ranks its test authors; Pre@k% is taken per topic and averaged over topics.
    Without topics there is one task, `all`.

    Rows of the main table: IIRL (one ω per topic), IIRL-all (the single ω trained on every training
    author, applied to each topic) and each baseline. `pooled` is the same on all test authors at once.
    Returns plain dicts (see `format_report`), and writes the Pre@k%-vs-k plot to `plot_path` if given."""
    if data.labels is None:
        raise ValueError("evaluation needs labels: build the data with a horizon")
    X, y = data.X, np.asarray(data.labels, dtype=np.float64)
    names = list(data.feature_names)
    methods = list(methods) if methods is not None else default_baselines(seed, lightgbm)
    iirl_params = {"seed": seed, **(iirl_params or {})}
    tasks = _tasks(data, top_m)
    all_ks = sorted(set(ks) | set(curve_ks))
    method_names = ["IIRL", "IIRL-all"] + [m.name for m in methods]
    per_topic: dict[str, dict[str, list]] = {m: {t: [] for t in tasks} for m in method_names}
    pooled: dict[str, list] = {m: [] for m in method_names}
    seconds: dict[str, float] = dict.fromkeys(method_names, 0.0)
    ablation_runs: dict[str, list] = {}
    transfer_runs: list[dict[str, dict[str, float]]] = []
    sizes = []

    for r in range(repeats):
        train, test = split_authors(len(y), test_size, seed + r)
        in_train = np.zeros(len(y), bool)
        in_train[train] = True
        tr = {t: rows[in_train[rows]] for t, rows in tasks.items()}
        te = {t: rows[~in_train[rows]] for t, rows in tasks.items()}
        topic_train = {t: rows for t, rows in tr.items() if t != ALL}
        sizes.append({t: (len(tr[t]), len(te[t])) for t in tasks})

        t0 = time.perf_counter()
        model = IIRL(**iirl_params).fit(X[train], y[train], _local(topic_train, train), feature_names=names)
        seconds["IIRL"] += time.perf_counter() - t0
        for t in tasks:
            if len(te[t]):
                per_topic["IIRL"][t].append(_pre(model.score(X[te[t]], t if t in model.topics_ else ALL),
                                                 y[te[t]], all_ks))
                per_topic["IIRL-all"][t].append(_pre(model.score(X[te[t]], ALL), y[te[t]], all_ks))
        pooled["IIRL"].append(_pre(model.score(X[test], ALL), y[test], all_ks))
        pooled["IIRL-all"].append(pooled["IIRL"][-1])

        for m in methods:
            t0 = time.perf_counter()
            for t, rows in list(tasks.items()) + [("__pooled__", None)]:
                fit_rows, test_rows = (train, test) if rows is None else (tr[t], te[t])
                if not len(test_rows):
                    continue
                if m.per_k:
                    res = {k: precision_at_k_percent(
                        m.make(k).fit(X[fit_rows], y[fit_rows], names).score(X[test_rows]), y[test_rows], k)
                        for k in all_ks}
                else:
                    res = _pre(m.make(0).fit(X[fit_rows], y[fit_rows], names).score(X[test_rows]),
                               y[test_rows], all_ks)
                (pooled[m.name] if rows is None else per_topic[m.name][t]).append(res)
            seconds[m.name] += time.perf_counter() - t0

        if ablation:
            for label, cols in _ablations(names):
                sub = [names[c] for c in cols]
                abl = IIRL(**iirl_params).fit(X[train][:, cols], y[train], _local(topic_train, train),
                                              feature_names=sub)
                abl_res = [_pre(abl.score(X[te[t]][:, cols], t if t in abl.topics_ else ALL), y[te[t]], ks)
                           for t in tasks if len(te[t])]
                ablation_runs.setdefault(label, []).append(_mean_dicts(abl_res))

        if transfer and len(topic_train) > 1:
            matrix = {}
            for a in topic_train:
                if a not in model.weights_:
                    continue
                matrix[a] = {b: precision_at_k_percent(model.score(X[te[b]], a), y[te[b]], transfer_k)
                             for b in topic_train if len(te[b])}
            transfer_runs.append(matrix)

    main = {}
    for name in method_names:
        topic_means = {t: _mean_dicts(v) for t, v in per_topic[name].items() if v}
        per_repeat = [_mean_dicts([per_topic[name][t][r] for t in tasks if len(per_topic[name][t]) > r])
                      for r in range(repeats)]
        main[name] = {"mean": _mean_dicts(per_repeat),
                      "std_over_repeats": {k: float(np.std([d[k] for d in per_repeat])) for k in all_ks},
                      "per_topic": topic_means, "pooled": _mean_dicts(pooled[name]), "train_seconds": seconds[name]}
    y_nonzero = int((y > 0).sum())
    results = {
        "setup": {"as_of": data.as_of, "horizon": data.horizon, "window": data.window,
                  "young_authors": len(y), "nonzero_labels": y_nonzero, "test_size": test_size,
                  "repeats": repeats, "seed": seed, "top_m": top_m, "tasks": list(tasks),
                  "task_sizes": {t: [int(np.mean([s[t][0] for s in sizes])), int(np.mean([s[t][1] for s in sizes]))]
                                 for t in tasks},
                  "label_mean": float(y.mean()) if len(y) else 0.0,
                  "label_median": float(np.median(y)) if len(y) else 0.0,
                  "iirl_params": dict(iirl_params)},
        "ks": list(ks), "curve_ks": list(curve_ks), "main": main,
        "weights_all": model.weights(ALL),
    }
    if ablation:
        results["ablation"] = {label: _mean_dicts(v) for label, v in ablation_runs.items()}
    if transfer_runs:
        results["transfer"] = _transfer_summary(transfer_runs, transfer_k)
    if plot_path:
        results["plot"] = plot_curve(results, plot_path)
    return results


def _local(topic_rows: Mapping[str, np.ndarray], train: np.ndarray) -> dict[str, np.ndarray]:
    """Topic rows (indices into all authors) as indices into the training subset."""
    position = np.full(int(train.max(initial=-1)) + 1, -1, dtype=np.int64)
    position[train] = np.arange(len(train))
    return {t: position[rows] for t, rows in topic_rows.items()}


def _ablations(names: Sequence[str]) -> list[tuple[str, np.ndarray]]:
    out = [("all features", np.arange(len(names)))]
    for group, members in EXTENDED_FEATURE_GROUPS.items():
        keep = [f for f in members if f in names]
        if not keep:
            continue
        out.append((f"only {group}", feature_indices(keep, names)))
        rest = [f for f in names if f not in members]
        out.append((f"without {group}", feature_indices(rest, names)))
    return out


def _transfer_summary(runs: list[dict[str, dict[str, float]]], k: float) -> dict:
    topics_ = sorted({a for m in runs for a in m}, key=_topic_order)
    matrix = {a: {b: float(np.mean([m[a][b] for m in runs if a in m and b in m[a]]))
                  for b in topics_ if any(a in m and b in m[a] for m in runs)} for a in topics_}
    diag = [matrix[a][a] for a in topics_ if a in matrix[a]]
    off = [v for a in topics_ for b, v in matrix[a].items() if b != a]
    return {"k": k, "matrix": matrix, "in_topic_mean": float(np.mean(diag)) if diag else 0.0,
            "cross_topic_mean": float(np.mean(off)) if off else 0.0}


def forward_baselines(feature_names: Sequence[str], seed: int = 0, lightgbm: bool = True) -> list[Method]:
    """`default_baselines`, plus Base-2 without self-citations when the data has that column."""
    methods = default_baselines(seed, lightgbm)
    if RecentExternalIncrement.feature in feature_names:
        methods.insert(2, Method("Base-2-ext", lambda k: RecentExternalIncrement()))
    return methods


def _fit_score(m: Method, k: float, X_fit, y_fit, X_score, names) -> np.ndarray:
    return m.make(k).fit(X_fit, y_fit, names).score(X_score)


def evaluate_forward(train: RisingStarData, test: RisingStarData, *, ks: Sequence[float] = DEFAULT_KS,
                     seeds: Sequence[int] = (0,), top_m: int = 3, iirl_params: Mapping | None = None,
                     methods: Sequence[Method] | None = None, lightgbm: bool = True, ablation: bool = True,
                     bootstrap: int = 1000, references: Mapping[str, np.ndarray] | None = None) -> dict:
    """The forward (dev) protocol: every method is trained on `train` (features as of T0, labels in
    (T0, T0 + D]) and ranks the young researchers of `test` (features as of T1 ≥ T0 + D, labels in
    (T1, T1 + D]), per topic and overall. Unlike `evaluate` no author is held out at random: the test
    population is a later cohort, so this asks whether what was learnt then still holds.

    Both data sets must come from the same paper topics (one LDA) so that topic keys mean the same.
    "overall" ranks all test authors at once (IIRL: the `all` ω); per topic, each method is trained on
    the topic's training authors. `seeds` re-run the stochastic methods (IIRL, LightGBM): ± is the
    standard deviation over seeds. `bootstrap` resamples the test authors to give a 95% interval of
    IIRL − Base-2 overall (seed `seeds[0]`), the uncertainty that comes from the cohort's size.
    `references`: named scores of the test authors (ceilings such as a hindsight ranking), reported
    beside the methods but never trained."""
    if train.labels is None or test.labels is None:
        raise ValueError("the forward protocol needs labels on both the training and the test data")
    if tuple(train.feature_names) != tuple(test.feature_names):
        raise ValueError("training and test data must have the same features")
    names = list(train.feature_names)
    Xtr, ytr = train.X, np.asarray(train.labels, dtype=np.float64)
    Xte, yte = test.X, np.asarray(test.labels, dtype=np.float64)
    own_methods = methods is None
    methods = list(methods) if methods is not None else forward_baselines(names, seeds[0], lightgbm)
    tr_groups, te_groups = train.topic_groups(top_m), test.topic_groups(top_m)
    if set(tr_groups) != set(te_groups):
        raise ValueError("training and test data must share their topics (fit one topic model for both)")
    tasks = {t: rows for t, rows in te_groups.items() if len(rows)}
    all_ks = list(ks)
    runs: dict[str, dict[str, list]] = {}

    def record(name: str, key: str, scores: np.ndarray, truth: np.ndarray) -> None:
        runs.setdefault(name, {}).setdefault(key, []).append(_pre(scores, truth, all_ks))

    iirl_scores_first = None
    for seed in seeds:
        params = {**(iirl_params or {}), "seed": seed}
        model = IIRL(**params).fit(Xtr, ytr, tr_groups, feature_names=names)
        overall = model.score(Xte, ALL)
        iirl_scores_first = overall if iirl_scores_first is None else iirl_scores_first
        for name in ("IIRL", "IIRL-all"):
            record(name, "overall", overall, yte)
        for t, rows in tasks.items():
            record("IIRL", t, model.score(Xte[rows], t if t in model.topics_ else ALL), yte[rows])
            record("IIRL-all", t, model.score(Xte[rows], ALL), yte[rows])
        # Deterministic baselines run once; LightGBM (seeded bagging, validation share) once per seed.
        if seed == seeds[0]:
            seeded = methods
        elif own_methods:
            seeded = [m for m in forward_baselines(names, seed, lightgbm) if m.name == "LightGBM"]
        else:
            seeded = []
        for m in seeded:
            for key, fit_rows, test_rows in [("overall", slice(None), slice(None))] + [
                    (t, tr_groups[t], rows) for t, rows in tasks.items()]:
                if m.per_k:
                    res = {k: precision_at_k_percent(_fit_score(m, k, Xtr[fit_rows], ytr[fit_rows], Xte[test_rows],
                                                                names), yte[test_rows], k) for k in all_ks}
                    runs.setdefault(m.name, {}).setdefault(key, []).append(res)
                else:
                    record(m.name, key, _fit_score(m, 0, Xtr[fit_rows], ytr[fit_rows], Xte[test_rows], names),
                           yte[test_rows])
    for name, scores in (references or {}).items():
        record(name, "overall", np.asarray(scores, dtype=np.float64), yte)
        for t, rows in tasks.items():
            record(name, t, np.asarray(scores, dtype=np.float64)[rows], yte[rows])

    main = {}
    for name, by_key in runs.items():
        n_runs = len(by_key["overall"])
        topic_mean_per_run = [_mean_dicts([by_key[t][r] for t in tasks]) for r in range(n_runs)]
        main[name] = {"overall": _mean_dicts(by_key["overall"]),
                      "overall_std": {k: float(np.std([d[k] for d in by_key["overall"]])) for k in all_ks},
                      "topics": _mean_dicts(topic_mean_per_run),
                      "topics_std": {k: float(np.std([d[k] for d in topic_mean_per_run])) for k in all_ks},
                      "per_topic": {t: _mean_dicts(by_key[t]) for t in tasks}, "runs": n_runs}
    results = {
        "setup": {"train_as_of": train.as_of, "test_as_of": test.as_of, "horizon": test.horizon,
                  "window": test.window, "train_authors": len(ytr), "test_authors": len(yte),
                  "train_nonzero": int((ytr > 0).sum()), "test_nonzero": int((yte > 0).sum()),
                  "labels_without_self_citations": [train.labels_without_self_citations,
                                                    test.labels_without_self_citations],
                  "features": names, "seeds": list(seeds), "top_m": top_m, "tasks": list(tasks),
                  "task_sizes": {t: [len(tr_groups[t]), len(rows)] for t, rows in tasks.items()},
                  "references": list(references or {})},
        "ks": all_ks, "main": main,
    }
    base2 = "Base-2" if any(m.name == "Base-2" for m in methods) else None
    if bootstrap and base2:
        b2 = _fit_score(next(m for m in methods if m.name == base2), 0, Xtr, ytr, Xte, names)
        assert iirl_scores_first is not None, "there is at least one seed"
        results["bootstrap"] = {"vs": base2, "samples": bootstrap,
                                **bootstrap_difference(iirl_scores_first, b2, yte, all_ks, bootstrap, seeds[0])}
    if ablation:
        params = {**(iirl_params or {}), "seed": seeds[0]}
        abl = {}
        for label, cols in _ablations(names):
            sub = [names[c] for c in cols]
            model = IIRL(**params).fit(Xtr[:, cols], ytr, tr_groups, feature_names=sub)
            per_topic = [_pre(model.score(Xte[rows][:, cols], t if t in model.topics_ else ALL), yte[rows], all_ks)
                         for t, rows in tasks.items()]
            abl[label] = {"overall": _pre(model.score(Xte[:, cols], ALL), yte, all_ks),
                          "topics": _mean_dicts(per_topic)}
        results["ablation"] = abl
    return results


def bootstrap_difference(a: np.ndarray, b: np.ndarray, truth: np.ndarray, ks: Sequence[float], samples: int,
                         seed: int = 0) -> dict:
    """Pre@k%(a) − Pre@k%(b) on resamples (with replacement) of the ranked population: mean, 95% interval,
    and the share of resamples where a is ahead."""
    rng = np.random.default_rng(seed)
    n = len(truth)
    diffs: dict[float, list[float]] = {k: [] for k in ks}
    for _ in range(samples):
        ix = rng.integers(0, n, n)
        for k in ks:
            diffs[k].append(precision_at_k_percent(a[ix], truth[ix], k) - precision_at_k_percent(b[ix], truth[ix], k))
    return {"mean": {k: float(np.mean(v)) for k, v in diffs.items()},
            "low": {k: float(np.percentile(v, 2.5)) for k, v in diffs.items()},
            "high": {k: float(np.percentile(v, 97.5)) for k, v in diffs.items()},
            "ahead": {k: float(np.mean(np.asarray(v) > 0)) for k, v in diffs.items()}}


def label_noise_ceiling(truth: np.ndarray, ks: Sequence[float], draws: int = 200, seed: int = 0) -> dict[float, float]:
    """How well the observed counts rank a Poisson redraw of themselves: Pre@k%(y, y′), y′ ~ Poisson(y).
    A rough ceiling for any predictor of the expected count, since counts of a few citations are noisy."""
    rng = np.random.default_rng(seed)
    y = np.asarray(truth, dtype=np.float64)
    return _mean_dicts([_pre(y, rng.poisson(y).astype(np.float64), ks) for _ in range(draws)])


def _topic_order(t: str):
    return (0, int(t), "") if t.isdigit() else (1, 0, t)


# --- presentation ----------------------------------------------------------------------------------


def plot_curve(results: Mapping, path: str) -> str:
    """Pre@k% against k for every method (mean over topics), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = results["curve_ks"]
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for name, row in results["main"].items():
        ax.plot(ks, [row["mean"][k] for k in ks], marker="o", ms=3,
                lw=2.2 if name == "IIRL" else 1.2, label=name)
    s = results["setup"]
    ax.set_xlabel("k (% of young researchers)")
    ax.set_ylabel("Pre@k% (mean over topics)")
    ax.set_title(f"Rising stars as of {s['as_of']}, horizon {s['horizon']} ({s['young_authors']} young authors)",
                 fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return str(path)


def format_report(results: Mapping) -> str:
    """The evaluation as plain-text tables (the CLI prints this)."""
    s, ks = results["setup"], results["ks"]
    out = [f"Young researchers as of {s['as_of']} (first first-author paper in the last {s['window']} years): "
           f"{s['young_authors']}, {s['nonzero_labels']} with a non-zero citation increment in "
           f"({s['as_of']}, {s['as_of'] + s['horizon']}]; test share {s['test_size']}, {s['repeats']} split(s), "
           f"{len(s['tasks'])} task(s)."]
    main = results["main"]
    pk = [f"Pre@{k}%" for k in ks]
    rows = []
    for name, r in main.items():
        sd = r["std_over_repeats"]
        rows.append([name, *(f"{r['mean'][k]:.3f}" + (f"±{sd[k]:.3f}" if s["repeats"] > 1 else "") for k in ks),
                     *(f"{r['pooled'][k]:.3f}" for k in ks), f"{r['train_seconds']:.1f}"])
    out += ["", "Mean over topics | pooled (all test authors)",
            text_table(["method", *pk, *(f"pooled {p}" for p in pk), "fit s"], rows)]
    base = {n: main[n]["mean"] for n in main}
    if "IIRL" in base:
        margins = [[n, *(f"{base['IIRL'][k] - base[n][k]:+.3f}" for k in ks)] for n in base if n != "IIRL"]
        out += ["", "IIRL minus each method (mean over topics)", text_table(["vs", *pk], margins)]
    tasks = [t for t in s["tasks"]]
    if len(tasks) > 1:
        k = 10 if 10 in ks else ks[0]
        rows = [[t, f"{s['task_sizes'][t][0]}/{s['task_sizes'][t][1]}",
                 *(f"{main[n]['per_topic'].get(t, {}).get(k, float('nan')):.3f}" for n in main)] for t in tasks]
        out += ["", f"Pre@{k}% per topic", text_table(["topic", "train/test", *main], rows)]
    if "ablation" in results:
        rows = [[label, *(f"{v[k]:.3f}" for k in ks)] for label, v in results["ablation"].items()]
        out += ["", "IIRL feature-group ablation (mean over topics)", text_table(["features", *pk], rows)]
    if "transfer" in results:
        tr = results["transfer"]
        topics_ = list(tr["matrix"])
        rows = [[a, *(f"{tr['matrix'][a].get(b, float('nan')):.2f}" for b in topics_)] for a in topics_]
        out += ["", f"Cross-topic transfer, Pre@{tr['k']}% (row: topic trained on, column: topic tested on); "
                f"in-topic mean {tr['in_topic_mean']:.3f}, cross-topic mean {tr['cross_topic_mean']:.3f}",
                text_table(["train\\test", *topics_], rows)]
    if "weights_all" in results:
        w = sorted(results["weights_all"].items(), key=lambda kv: -abs(kv[1]))
        out += ["", "IIRL-all ω (standardised features), largest first: "
                + ", ".join(f"{f} {v:+.2f}" for f, v in w[:8])]
    if "plot" in results:
        out += ["", f"Plot: {results['plot']}"]
    return "\n".join(out)


def format_forward_report(results: Mapping) -> str:
    """`evaluate_forward` as plain-text tables."""
    s, ks = results["setup"], results["ks"]
    no_self = s["labels_without_self_citations"]
    out = [f"Trained as of {s['train_as_of']} ({s['train_authors']} young researchers, {s['train_nonzero']} with a "
           f"non-zero label), tested as of {s['test_as_of']} ({s['test_authors']}, {s['test_nonzero']} non-zero); "
           f"horizon {s['horizon']}; self-citations in the labels: "
           f"{'excluded' if no_self[0] else 'included'} (train), {'excluded' if no_self[1] else 'included'} (test); "
           f"{len(s['features'])} features; {len(s['tasks'])} topics; seeds {s['seeds']}."]
    pk = [f"Pre@{k}%" for k in ks]

    def cell(row, part, k):
        sd = row[f"{part}_std"][k]
        return f"{row[part][k]:.3f}" + (f"±{sd:.3f}" if row["runs"] > 1 else "")

    refs = set(s["references"])
    rows = [[name, *(cell(r, "overall", k) for k in ks), *(cell(r, "topics", k) for k in ks)]
            for name, r in results["main"].items() if name not in refs]
    rows += [[f"({name})", *(f"{r['overall'][k]:.3f}" for k in ks), *(f"{r['topics'][k]:.3f}" for k in ks)]
             for name, r in results["main"].items() if name in refs]
    out += ["", "Overall (all test authors ranked at once) | mean over topics; (references) are ceilings, not methods",
            text_table(["method", *(f"overall {p}" for p in pk), *(f"topics {p}" for p in pk)], rows)]
    main = results["main"]
    if "IIRL" in main:
        margins = [[n, *(f"{main['IIRL']['overall'][k] - main[n]['overall'][k]:+.3f}" for k in ks),
                    *(f"{main['IIRL']['topics'][k] - main[n]['topics'][k]:+.3f}" for k in ks)]
                   for n in main if n != "IIRL" and n not in refs]
        out += ["", "IIRL minus each method", text_table(["vs", *(f"overall {p}" for p in pk),
                                                      *(f"topics {p}" for p in pk)], margins)]
    if "bootstrap" in results:
        b = results["bootstrap"]
        out += ["", f"Bootstrap over test authors ({b['samples']} resamples), IIRL − {b['vs']} overall: "
                + "; ".join(f"Pre@{k}% {b['mean'][k]:+.3f} [{b['low'][k]:+.3f}, {b['high'][k]:+.3f}], "
                            f"ahead in {100 * b['ahead'][k]:.0f}%" for k in ks)]
    k = 10 if 10 in ks else ks[0]
    rows = [[t, f"{s['task_sizes'][t][0]}/{s['task_sizes'][t][1]}",
             *(f"{main[n]['per_topic'][t][k]:.3f}" for n in main)] for t in s["tasks"]]
    out += ["", f"Pre@{k}% per topic", text_table(["topic", "train/test", *main], rows)]
    if "ablation" in results:
        rows = [[label, *(f"{v['overall'][k]:.3f}" for k in ks), *(f"{v['topics'][k]:.3f}" for k in ks)]
                for label, v in results["ablation"].items()]
        out += ["", f"IIRL feature-group ablation (seed {s['seeds'][0]})",
                text_table(["features", *(f"overall {p}" for p in pk), *(f"topics {p}" for p in pk)], rows)]
    return "\n".join(out)
