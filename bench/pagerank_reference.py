"""The networkx references for scholargraph's PageRank: the benchmark's baseline (bench/features.py) and the
unit tests' ground truth (tests/unit/graph/test_pagerank.py). Not part of the package: it never serves."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from scholargraph.graph.pagerank import _as_vector


def to_networkx(adjacency, weighted: bool = True):
    """A networkx DiGraph with nodes 0..n-1 and one edge per stored non-zero (`weight` attribute)."""
    import networkx as nx

    a = sp.csr_matrix(adjacency, dtype=np.float64, copy=True)
    a.sum_duplicates()
    a.eliminate_zeros()
    if not weighted:
        a.data[:] = 1.0
    return nx.from_scipy_sparse_array(a, create_using=nx.DiGraph)


def pagerank_networkx_python(adjacency, damping: float = 0.85, max_iter: int = 100, tol: float = 1e-6,
                             weighted: bool = True, personalization=None) -> np.ndarray:
    """networkx's pure-Python reference PageRank (`_pagerank_python`) on a DiGraph built from the matrix:
    the benchmark's baseline. Same arguments and result layout as `pagerank` (strict only)."""
    from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python

    g = to_networkx(adjacency, weighted=weighted)
    n = g.number_of_nodes()
    if n == 0:
        return np.zeros(0)
    pers = None
    if personalization is not None:
        vec = _as_vector(personalization, n, "personalization")
        assert vec is not None, "a given personalization is a vector"
        pers = {i: float(v) for i, v in enumerate(vec)}
    # Unweighted graphs were built with unit weights, so "weight" is right either way.
    scores = _pagerank_python(g, alpha=damping, personalization=pers, max_iter=max_iter, tol=tol, weight="weight")
    return np.array([scores[i] for i in range(n)], dtype=np.float64)
