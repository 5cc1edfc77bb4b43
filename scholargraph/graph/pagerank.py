"""PageRank by power iteration straight on a SciPy sparse matrix: networkx's algorithm, without a networkx graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from scholargraph.errors import ScholargraphError


class PageRankNotConverged(ScholargraphError):
    """The power iteration did not reach `n * tol` in `max_iter` iterations (networkx's
    PowerIterationFailedConvergence). `last` holds the last iterate, `error` its L1 change."""

    exit_code = 1

    def __init__(self, max_iter: int, error: float, tol: float, last: np.ndarray):
        self.max_iter = max_iter
        self.error = error
        self.last = last
        super().__init__(f"PageRank did not converge in {max_iter} iterations "
                         f"(L1 change {error:.3g}, needed < {len(last) * tol:.3g}); "
                         f"raise max_iter or pass strict=False to accept the last iterate")


def _as_vector(values, n: int, name: str) -> np.ndarray | None:
    if values is None:
        return None
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.shape != (n,):
        raise ValueError(f"{name} must have one entry per node ({n}), not shape {np.shape(values)}")
    if not np.all(np.isfinite(v)) or (v < 0).any():
        raise ValueError(f"{name} must be finite and non-negative")
    total = v.sum()
    if total == 0:
        raise ValueError(f"{name} must have at least one positive entry")
    return v / total


def transition_matrix(adjacency, weighted: bool = True) -> tuple[sp.csr_matrix, np.ndarray]:
    """The transposed row-stochastic matrix P^T (CSR, float64) and the dangling-node mask.

    Row i of `adjacency` holds i's out-edges; explicit zeros are not edges (networkx drops them too).
    With `weighted=False` every stored non-zero counts 1. Negative weights are refused.
    """
    a = sp.csr_matrix(adjacency, dtype=np.float64, copy=True)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"adjacency must be square, not shape {a.shape}")
    a.sum_duplicates()
    a.eliminate_zeros()
    if a.nnz and (a.data < 0).any():
        raise ValueError("adjacency has negative weights")
    if not weighted:
        a.data[:] = 1.0
    out = np.asarray(a.sum(axis=1)).ravel()
    dangling = out == 0
    inv = np.zeros_like(out)
    inv[~dangling] = 1.0 / out[~dangling]
    # Scale rows in place (same arithmetic as networkx's Q @ A), then transpose once so that every
    # iteration is a plain CSR mat-vec, the fastest SciPy product.
    a.data *= np.repeat(inv, np.diff(a.indptr))
    return a.T.tocsr(), dangling


def pagerank(adjacency, damping: float = 0.85, max_iter: int = 100, tol: float = 1e-6, weighted: bool = True,
             personalization=None, dangling=None, nstart=None, strict: bool = True) -> np.ndarray:
    """PageRank of every node of a graph given as an n x n sparse matrix, `[i, j]` = weight of edge i -> j.

    The same iteration as `networkx.pagerank` (its `_pagerank_scipy`), so the scores agree to
    floating-point rounding:
    - P is `adjacency` row-normalised (by weight, or by count when `weighted=False`);
    - x starts uniform (or `nstart`, normalised); each step is
      `x' = damping * (x P + sum(x[dangling]) * d) + (1 - damping) * p`, where p is the
      personalization vector (uniform when None) and d the dangling distribution (p when None —
      i.e. uniform by default, as networkx);
    - it stops when the L1 change `sum |x' - x| < n * tol`.
    `personalization`, `dangling` and `nstart` are arrays of length n (any non-negative scale).
    An undirected graph (the co-author network) is passed as its symmetric matrix; a self-loop counts
    once, as in networkx. Returns an array of length n that sums to 1 (empty for n = 0).

    When the iteration has not converged after `max_iter` steps: with `strict=True` (default) raises
    PageRankNotConverged (its `.last` holds the last iterate); with `strict=False` returns the last iterate.
    """
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), not {damping}")
    pt, is_dangling = transition_matrix(adjacency, weighted=weighted)
    n = pt.shape[0]
    if n == 0:
        return np.zeros(0)
    uniform = np.full(n, 1.0 / n)
    p = _as_vector(personalization, n, "personalization")
    p = uniform if p is None else p
    d = _as_vector(dangling, n, "dangling")
    d = p if d is None else d
    x = _as_vector(nstart, n, "nstart")
    x = uniform if x is None else x
    dangling_idx = np.flatnonzero(is_dangling)
    teleport = (1.0 - damping) * p
    err = float("inf")
    for _ in range(max_iter):
        xlast = x
        x = damping * (pt @ xlast + xlast[dangling_idx].sum() * d) + teleport
        err = float(np.abs(x - xlast).sum())
        if err < n * tol:
            return x
    if strict:
        raise PageRankNotConverged(max_iter, err, tol, x)
    return x
