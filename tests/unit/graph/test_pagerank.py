"""PageRank on sparse matrices agrees with networkx (scipy and pure-Python implementations)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from bench.pagerank_reference import pagerank_networkx_python, to_networkx
from scholargraph.graph.pagerank import PageRankNotConverged, pagerank


def _nx(adjacency, weighted=True, **kwargs) -> np.ndarray:
    g = to_networkx(adjacency, weighted=weighted)
    scores = nx.pagerank(g, weight="weight", **kwargs)
    return np.array([scores[i] for i in range(adjacency.shape[0])])


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra = np.argsort(np.argsort(a, kind="stable"), kind="stable")
    rb = np.argsort(np.argsort(b, kind="stable"), kind="stable")
    return float(np.corrcoef(ra, rb)[0, 1])


def _random(n: int, m: int, seed: int, symmetric: bool = False, weighted: bool = True) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    w = rng.integers(1, 6, keep.sum()).astype(float) if weighted else np.ones(keep.sum())
    a = sp.csr_matrix((w, (src[keep], dst[keep])), shape=(n, n))
    return (a + a.T).tocsr() if symmetric else a


HAND_BUILT = {
    # 0 -> 1 -> 2 -> 0 cycle plus 3 -> 0 and 4 dangling (cited by 3)
    "cycle_dangling": sp.csr_matrix(([1, 1, 1, 1, 1], ([0, 1, 2, 3, 3], [1, 2, 0, 0, 4])), shape=(5, 5)),
    # weighted: 0 sends 3x more to 1 than to 2; 1 and 2 dangling
    "weighted_star": sp.csr_matrix(([3.0, 1.0], ([0, 0], [1, 2])), shape=(3, 3)),
    # all dangling: uniform
    "no_edges": sp.csr_matrix((4, 4)),
    # undirected path 0-1-2-3 as a symmetric matrix with weights
    "undirected_path": sp.csr_matrix(([2, 2, 1, 1, 5, 5], ([0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2])), shape=(4, 4)),
    # a self-loop and an isolated node
    "self_loop": sp.csr_matrix(([1, 2, 1], ([0, 0, 1], [0, 1, 0])), shape=(3, 3)),
}


@pytest.mark.parametrize("name", sorted(HAND_BUILT))
@pytest.mark.parametrize("weighted", [True, False])
def test_hand_built_graphs_match_networkx(name, weighted):
    a = HAND_BUILT[name]
    ours = pagerank(a, weighted=weighted)
    assert ours.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(ours, _nx(a, weighted=weighted), rtol=0, atol=1e-8)


def test_known_values():
    # No edges: every node keeps 1/n. Two nodes pointing at each other: symmetric, 1/2 each.
    np.testing.assert_allclose(pagerank(HAND_BUILT["no_edges"]), np.full(4, 0.25))
    np.testing.assert_allclose(pagerank(sp.csr_matrix([[0, 1], [1, 0]])), [0.5, 0.5])
    # Weighted star: 1 gets 3/4 of 0's vote, 2 gets 1/4.
    pr = pagerank(HAND_BUILT["weighted_star"])
    assert pr[1] > pr[2] > pr[0]
    assert pagerank(sp.csr_matrix((0, 0))).shape == (0,)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("symmetric", [False, True])
def test_random_graphs_match_networkx(seed, symmetric):
    a = _random(300, 1200, seed, symmetric=symmetric)
    ours = pagerank(a)
    ref = _nx(a)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-8)
    assert _spearman(ours, ref) >= 0.999
    unweighted = pagerank(a, weighted=False)
    np.testing.assert_allclose(unweighted, _nx(a, weighted=False), rtol=0, atol=1e-8)


def test_matches_networkx_pure_python_reference():
    a = _random(200, 900, 7)
    ours, ref = pagerank(a), pagerank_networkx_python(a)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-8)
    assert _spearman(ours, ref) >= 0.999


def test_undirected_graph_matches_networkx_graph():
    g = nx.gnm_random_graph(150, 400, seed=3)
    for u, v in g.edges:
        g.edges[u, v]["weight"] = 1 + (u * v) % 4
    ref = nx.pagerank(g)
    a = nx.to_scipy_sparse_array(g, nodelist=range(150), weight="weight")
    np.testing.assert_allclose(pagerank(a), [ref[i] for i in range(150)], rtol=0, atol=1e-8)


def test_personalization_dangling_nstart_and_damping():
    a = _random(100, 300, 11)
    g = to_networkx(a)
    rng = np.random.default_rng(0)
    pers, dang = rng.random(100), rng.random(100)
    pers[:50] = 0
    ref = nx.pagerank(g, alpha=0.7, personalization=dict(enumerate(pers)), dangling=dict(enumerate(dang)),
                      nstart=dict(enumerate(dang)), tol=1e-10, max_iter=500)
    ours = pagerank(a, damping=0.7, personalization=pers, dangling=dang, nstart=dang, tol=1e-10, max_iter=500)
    np.testing.assert_allclose(ours, [ref[i] for i in range(100)], rtol=0, atol=1e-8)
    np.testing.assert_allclose(pagerank_networkx_python(a, damping=0.7, personalization=pers, tol=1e-10,
                                                        max_iter=500),
                               pagerank(a, damping=0.7, personalization=pers, tol=1e-10, max_iter=500),
                               rtol=0, atol=1e-8)


def test_explicit_zeros_and_duplicates_are_handled_like_networkx():
    a = sp.coo_matrix(([1.0, 2.0, 0.0, 1.0], ([0, 0, 1, 2], [1, 1, 2, 0])), shape=(3, 3))
    ours = pagerank(a)
    ref = _nx(sp.csr_matrix(([3.0, 1.0], ([0, 2], [1, 0])), shape=(3, 3)))
    np.testing.assert_allclose(ours, ref, atol=1e-12)


def test_non_convergence_raises_or_returns_last_iterate():
    a = _random(100, 400, 5)
    with pytest.raises(PageRankNotConverged) as info:
        pagerank(a, max_iter=2, tol=1e-12)
    assert "did not converge in 2 iterations" in str(info.value)
    assert info.value.last.shape == (100,)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(to_networkx(a), max_iter=2, tol=1e-12)
    last = pagerank(a, max_iter=2, tol=1e-12, strict=False)
    np.testing.assert_allclose(last, info.value.last)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="square"):
        pagerank(sp.csr_matrix((2, 3)))
    with pytest.raises(ValueError, match="negative"):
        pagerank(sp.csr_matrix([[0, -1], [1, 0]]))
    with pytest.raises(ValueError, match="personalization"):
        pagerank(sp.csr_matrix([[0, 1], [1, 0]]), personalization=[0, 0])
    with pytest.raises(ValueError, match="damping"):
        pagerank(sp.csr_matrix([[0, 1], [1, 0]]), damping=1.0)
