"""Derived networks: exact weights, self-citation rules, as-of cuts, write-back rows."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

from scholargraph.graph.networks import (
    author_citation_matrix,
    coauthor_matrix,
    edge_rows,
    iter_edge_rows,
    paper_citation_counts,
    venue_avg_citation,
    venue_citation_matrix,
)
from scholargraph.graph.snapshot import GraphSnapshot

PAPERS = [
    {"id": "p1", "year": 2000, "venue": "V1"},
    {"id": "p2", "year": 2001, "venue": "V1"},
    {"id": "p3", "year": 2002, "venue": "V2"},
    {"id": "p4", "year": 2005, "venue": "V2"},
    {"id": "p5", "year": 2003, "venue": "V1"},
    {"id": "s1", "stub": True},
]
AUTHORSHIPS = [("A", "p1", 1), ("B", "p1", 2), ("A", "p2", 1), ("C", "p2", 2), ("B", "p3", 1), ("C", "p3", 2),
               ("D", "p3", 3), ("D", "p4", 1), ("B", "p5", 1), ("C", "p5", 2)]
CITATIONS = [("p2", "p1"), ("p3", "p1"), ("p3", "p2"), ("p4", "p3"), ("p4", "p1"), ("p1", "s1")]
VENUES = [("V1", "One"), ("V2", "Two"), ("V3", "Empty")]


def _snapshot(papers=PAPERS, authorships=AUTHORSHIPS, citations=CITATIONS) -> GraphSnapshot:
    return GraphSnapshot.build(papers, authorships, citations, venues=VENUES)


def _as_dict(m: sp.spmatrix, ids_src, ids_dst) -> dict[tuple[str, str], float]:
    coo = sp.coo_matrix(m)
    return {(ids_src[r], ids_dst[c]): float(w) for r, c, w in zip(coo.row, coo.col, coo.data) if w != 0}


def test_coauthor_weights():
    s = _snapshot()
    m = coauthor_matrix(s)
    assert (m != m.T).nnz == 0
    assert m.diagonal().sum() == 0
    got = _as_dict(m, s.author_ids, s.author_ids)
    expected = {("A", "B"): 1, ("A", "C"): 1, ("B", "C"): 2, ("B", "D"): 1, ("C", "D"): 1}
    assert got == {**expected, **{(b, a): w for (a, b), w in expected.items()}}
    # Skipping papers with more than two authors drops p3's three pairs; B-C keeps p5.
    small = _as_dict(coauthor_matrix(s, max_authors=2), s.author_ids, s.author_ids)
    assert small[("B", "C")] == 1 and ("B", "D") not in small and ("C", "D") not in small


def test_author_citation_weights_and_self_citations():
    s = _snapshot()
    got = _as_dict(author_citation_matrix(s), s.author_ids, s.author_ids)
    assert got == {("A", "B"): 1, ("C", "A"): 3, ("C", "B"): 2, ("B", "A"): 2, ("B", "C"): 1,
                   ("D", "A"): 3, ("D", "B"): 3, ("D", "C"): 2}
    assert all(a != b for a, b in got)
    # Only p4 -> p1 cites a paper with no author in common.
    strict = _as_dict(author_citation_matrix(s, exclude_shared_author_citations=True), s.author_ids, s.author_ids)
    assert strict == {("D", "A"): 1, ("D", "B"): 1}


def test_venue_citations_and_counts():
    s = _snapshot()
    assert _as_dict(venue_citation_matrix(s), s.venue_ids, s.venue_ids) == {("V2", "V1"): 3}
    assert _as_dict(venue_citation_matrix(s, include_self=True), s.venue_ids, s.venue_ids) == {
        ("V2", "V1"): 3, ("V1", "V1"): 1, ("V2", "V2"): 1}
    counts = dict(zip(s.paper_ids, paper_citation_counts(s).tolist()))
    assert counts == {"p1": 3, "p2": 1, "p3": 1, "p4": 0, "p5": 0, "s1": 1}
    avg = dict(zip(s.venue_ids, venue_avg_citation(s)))
    assert avg["V1"] == pytest.approx(4 / 3) and avg["V2"] == pytest.approx(0.5) and np.isnan(avg["V3"])


def test_as_of_equals_graph_without_the_future():
    full = _snapshot()
    cut = full.as_of(2002)
    kept = {"p1", "p2", "p3", "s1"}
    past = _snapshot([p for p in PAPERS if p["id"] in kept], [a for a in AUTHORSHIPS if a[1] in kept],
                     [c for c in CITATIONS if c[0] in kept])
    for fn in (coauthor_matrix, author_citation_matrix):
        assert _as_dict(fn(cut), cut.author_ids, cut.author_ids) == _as_dict(fn(past), past.author_ids,
                                                                             past.author_ids)
    assert _as_dict(venue_citation_matrix(cut), cut.venue_ids, cut.venue_ids) == _as_dict(
        venue_citation_matrix(past), past.venue_ids, past.venue_ids)
    assert dict(zip(cut.paper_ids, paper_citation_counts(cut))) == dict(zip(past.paper_ids,
                                                                            paper_citation_counts(past)))
    assert dict(zip(cut.paper_ids, paper_citation_counts(cut)))["p1"] == 2
    got = _as_dict(author_citation_matrix(cut), cut.author_ids, cut.author_ids)
    assert got[("D", "B")] == 1 and got[("D", "A")] == 2 and got[("D", "C")] == 1
    np.testing.assert_equal(venue_avg_citation(cut), venue_avg_citation(past))
    assert venue_avg_citation(cut)[cut.venue_index["V1"]] == pytest.approx(3 / 2)


def test_random_graph_matches_brute_force():
    rng = np.random.default_rng(4)
    n_p, n_a, n_v = 60, 25, 4
    papers = [{"id": f"p{i}", "year": 2000 + i % 7, "venue": f"v{i % n_v}" if i % 5 else None} for i in range(n_p)]
    authors_of = {f"p{i}": sorted(set(rng.choice(n_a, rng.integers(1, 4)).tolist())) for i in range(n_p)}
    auth = [(f"a{a}", p, k + 1) for p, aa in authors_of.items() for k, a in enumerate(aa)]
    cites = sorted({(f"p{i}", f"p{j}") for i, j in rng.integers(0, n_p, (300, 2)) if i != j})
    s = GraphSnapshot.build(papers, auth, cites)
    venue_of = {p["id"]: p["venue"] for p in papers}
    acn, accn, accn_strict, vccn = Counter(), Counter(), Counter(), Counter()
    for aa in authors_of.values():
        for a, b in itertools.permutations(aa, 2):
            acn[(f"a{a}", f"a{b}")] += 1
    for p, q in cites:
        shared = bool(set(authors_of[p]) & set(authors_of[q]))
        for a in authors_of[p]:
            for b in authors_of[q]:
                if a != b:
                    accn[(f"a{a}", f"a{b}")] += 1
                    if not shared:
                        accn_strict[(f"a{a}", f"a{b}")] += 1
        if venue_of[p] and venue_of[q] and venue_of[p] != venue_of[q]:
            vccn[(venue_of[p], venue_of[q])] += 1
    assert _as_dict(coauthor_matrix(s), s.author_ids, s.author_ids) == acn
    assert _as_dict(author_citation_matrix(s), s.author_ids, s.author_ids) == accn
    assert _as_dict(author_citation_matrix(s, exclude_shared_author_citations=True), s.author_ids,
                    s.author_ids) == accn_strict
    assert _as_dict(venue_citation_matrix(s), s.venue_ids, s.venue_ids) == vccn
    cited = Counter(q for _, q in cites)
    assert paper_citation_counts(s).tolist() == [cited[p] for p in s.paper_ids]


def test_empty_snapshot():
    s = GraphSnapshot.build([])
    assert coauthor_matrix(s).shape == (0, 0)
    assert author_citation_matrix(s, exclude_shared_author_citations=True).shape == (0, 0)
    assert venue_citation_matrix(s).shape == (0, 0)
    assert paper_citation_counts(s).shape == (0,) and venue_avg_citation(s).shape == (0,)
    assert edge_rows(coauthor_matrix(s), [], [], symmetric=True) == []


def test_edge_rows():
    s = _snapshot()
    rows = edge_rows(coauthor_matrix(s), s.author_ids, s.author_ids, symmetric=True)
    assert rows == [{"source": "A", "target": "B", "weight": 1}, {"source": "A", "target": "C", "weight": 1},
                    {"source": "B", "target": "C", "weight": 2}, {"source": "B", "target": "D", "weight": 1},
                    {"source": "C", "target": "D", "weight": 1}]
    assert all(type(r["weight"]) is int for r in rows)
    directed = edge_rows(venue_citation_matrix(s), s.venue_ids, s.venue_ids)
    assert directed == [{"source": "V2", "target": "V1", "weight": 3}]
    # Rectangular matrices with float weights (paper -> topic) and explicit zeros dropped.
    m = sp.csr_matrix((np.array([0.25, 0.0, 0.75]), np.array([0, 1, 1]), np.array([0, 2, 3])), shape=(2, 2))
    assert edge_rows(m, ["x", "y"], ["t0", "t1"]) == [{"source": "x", "target": "t0", "weight": 0.25},
                                                      {"source": "y", "target": "t1", "weight": 0.75}]
    batches = list(iter_edge_rows(author_citation_matrix(s), s.author_ids, s.author_ids, batch_size=3))
    assert [len(b) for b in batches] == [3, 3, 2]
    assert [r for b in batches for r in b] == edge_rows(author_citation_matrix(s), s.author_ids, s.author_ids)
    with pytest.raises(ValueError, match="shape"):
        edge_rows(m, ["x"], ["t0", "t1"])
