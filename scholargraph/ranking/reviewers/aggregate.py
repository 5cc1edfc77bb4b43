"""A reviewer's score from their papers' scores: the mean of their best few (RECO-Rank's first stage, CoF,
the semantic baselines)."""

from __future__ import annotations

import numpy as np


def top_mean(owner: np.ndarray, scores: np.ndarray, n_rows: int, top: int = 3, *, zero_padded: bool = False,
             empty: float = -np.inf) -> np.ndarray:
    """Per owner 0..n_rows-1, the mean of its best `top` scores (`owner[i]` owns `scores[i]`): over the
    scores it has, or with `zero_padded` over `top` (missing papers count 0, as RECO-Rank's null slot does).
    An owner without any score gets `empty`. Sums run best first in the scores' dtype (one row of a
    [n_rows, top] table summed in order), so that every caller keeps its numbers to the last bit."""
    owner = np.asarray(owner, dtype=np.int64)
    scores = np.asarray(scores)
    out = np.full(n_rows, empty, dtype=np.float64)
    if len(owner) == 0:
        return out
    order = np.lexsort((-scores, owner))
    o, s = owner[order], scores[order]
    starts = np.r_[0, np.flatnonzero(np.diff(o)) + 1]
    rank = np.arange(len(o)) - np.repeat(starts, np.diff(np.r_[starts, len(o)]))
    keep = rank < top
    best = np.zeros((n_rows, top), dtype=scores.dtype)
    best[o[keep], rank[keep]] = s[keep]
    counts = np.bincount(o[keep], minlength=n_rows)
    has = counts > 0
    divisor = np.full(n_rows, top, dtype=np.int64) if zero_padded else counts
    out[has] = best.sum(axis=1)[has] / divisor[has]
    return out
