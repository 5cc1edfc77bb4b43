"""Ranking metrics: P@k soft/hard, Pre@k%, F1@k, Recall@k, MRR, weighted Kendall loss; TREC qrels."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from scholargraph.user_files import Repeats, Warn, bad_line, data_lines, no_warning, parse_int

Qrels = Mapping[str, Mapping[str, int]]  # query id -> {doc id: relevance grade}
Run = Mapping[str, Sequence[str]]  # query id -> ranked doc ids, best first


def precision_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int, min_grade: int = 1) -> float:
    """Share of the top k that has a grade >= min_grade (divides by k even when fewer are ranked).
    Soft P@k in the reviewer papers is min_grade=2, hard P@k is min_grade=3."""
    if k <= 0:
        raise ValueError("k must be positive")
    return sum(1 for d in ranked[:k] if relevant.get(d, 0) >= min_grade) / k


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int, min_grade: int = 1) -> float:
    gold = {d for d, g in relevant.items() if g >= min_grade}
    if not gold:
        return 0.0
    return len(gold.intersection(ranked[:k])) / len(gold)


def f1_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int, min_grade: int = 1) -> float:
    """F1 of the top k against the relevant set (precision over the k returned, as in Citeomatic)."""
    gold = {d for d, g in relevant.items() if g >= min_grade}
    top = list(ranked[:k])
    hits = len(gold.intersection(top))
    if hits == 0:
        return 0.0
    precision = hits / len(top)
    recall = hits / len(gold)
    return 2 * precision * recall / (precision + recall)


def reciprocal_rank(ranked: Sequence[str], relevant: Mapping[str, int], min_grade: int = 1) -> float:
    for rank, d in enumerate(ranked, start=1):
        if relevant.get(d, 0) >= min_grade:
            return 1.0 / rank
    return 0.0


def mean_over_queries(metric, run: Run, qrels: Qrels, **kwargs) -> float:
    """Mean of `metric(ranked, relevant, **kwargs)` over the queries that have judgments."""
    values = [metric(run.get(q, []), rel, **kwargs) for q, rel in qrels.items() if rel]
    return float(np.mean(values)) if values else 0.0


def precision_at_k_percent(scores: np.ndarray, truth: np.ndarray, k_percent: float) -> float:
    """Pre@k% (IIRL): overlap between the predicted and the true top k% of a population, divided by
    the size of that top. `scores` are predictions, `truth` the true values (e.g. citation increments);
    ties in the truth are broken by order, which is the usual protocol."""
    n = len(scores)
    if n != len(truth):
        raise ValueError("scores and truth must have the same length")
    if n == 0:
        return 0.0
    m = max(1, int(math.ceil(n * k_percent / 100.0)))
    predicted = set(np.argsort(-np.asarray(scores), kind="stable")[:m].tolist())
    actual = set(np.argsort(-np.asarray(truth), kind="stable")[:m].tolist())
    return len(predicted & actual) / m


def weighted_kendall_loss(scores: np.ndarray, truth: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Share of discordant pairs (weighted), in [0, 1]; 0 is a perfect order. O(n^2): for evaluation sets."""
    s = np.asarray(scores, dtype=float)
    t = np.asarray(truth, dtype=float)
    w = np.ones(len(s)) if weights is None else np.asarray(weights, dtype=float)
    ds = np.sign(s[:, None] - s[None, :])
    dt = np.sign(t[:, None] - t[None, :])
    pair_w = w[:, None] * w[None, :]
    mask = dt != 0
    total = pair_w[mask].sum()
    if total == 0:
        return 0.0
    return float(pair_w[mask & (ds != dt)].sum() / total)


# --- TREC files ---------------------------------------------------------------------------------


def read_qrels(path: str, what: str = "--qrels", warn: Warn = no_warning) -> dict[str, dict[str, int]]:
    """TREC qrels `qid 0 doc grade`, or two columns `qid doc` (grade 1). A bad line is a UsageError naming
    `what`, the file and the line; a judgment repeated is kept once (`warn` says so), one repeated with
    another grade is a UsageError."""
    qrels: dict[str, dict[str, int]] = {}
    repeats = Repeats(what, path, "judgment")
    for n, parts in data_lines(path, what):
        if len(parts) >= 4:
            qid, doc, grade = parts[0], parts[2], parse_int(parts[3], what, path, n, "the grade")
        elif len(parts) == 2:
            qid, doc, grade = parts[0], parts[1], 1
        else:
            raise bad_line(what, path, n, f"expected `qid 0 doc grade` or `qid doc`, got {len(parts)} fields")
        if repeats.first((qid, doc), n, grade):
            qrels.setdefault(qid, {})[doc] = grade
    if not qrels:
        raise bad_line(what, path, None, "holds no judgments (expected `qid 0 doc grade` lines)")
    repeats.report(warn)
    return qrels
