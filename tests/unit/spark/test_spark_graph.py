"""Spark's networks and PageRank against the in-process ones (SciPy), on a synthetic world."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import spearmanr

from scholargraph.graph import networks
from scholargraph.graph.features import network_features
from scholargraph.graph.pagerank import PageRankNotConverged
from tests.conftest import SPARK_SLOW_TIER
from tests.unit.spark.snapshots import synthetic_export


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return synthetic_export(tmp_path_factory.mktemp("world"), papers=1500, seed=3)


@pytest.fixture(scope="module")
def graph(spark, world):
    from scholargraph.spark.graph import read_graph

    return read_graph(spark, world[1])


def _dense(edges_df, ids) -> sp.csr_matrix:
    index = {v: i for i, v in enumerate(ids)}
    rows = edges_df.collect()
    r = [index[row["src"]] for row in rows]
    c = [index[row["dst"]] for row in rows]
    return sp.csr_matrix(([row["weight"] for row in rows], (r, c)), shape=(len(ids), len(ids)))


@SPARK_SLOW_TIER
def test_the_networks_are_the_in_process_ones(world, graph):
    from scholargraph.spark import graph as sg

    snapshot, _ = world
    assert (_dense(sg.coauthor_edges(graph), snapshot.author_ids) != networks.coauthor_matrix(snapshot)).nnz == 0
    assert (_dense(sg.author_citation_edges(graph), snapshot.author_ids)
            != networks.author_citation_matrix(snapshot)).nnz == 0
    assert (_dense(sg.venue_citation_edges(graph), snapshot.venue_ids)
            != networks.venue_citation_matrix(snapshot)).nnz == 0
    counts = {r["id"]: r["n_citation"] for r in sg.paper_citation_counts(graph).collect()}
    expected = networks.paper_citation_counts(snapshot)
    assert [counts[p] for p in snapshot.paper_ids] == expected.tolist()
    avg = {r["id"]: r["avg_citation"] for r in sg.venue_avg_citation(graph, sg.paper_citation_counts(graph)).collect()}
    got = np.array([np.nan if avg[v] is None else avg[v] for v in snapshot.venue_ids])
    np.testing.assert_allclose(got, networks.venue_avg_citation(snapshot), rtol=1e-12, equal_nan=True)


@SPARK_SLOW_TIER  # the Spark test of `make test` (integration/spark/test_spark_engine.py) checks PageRank too
def test_pagerank_of_all_four_networks_matches_scipy(world, graph):
    from scholargraph.spark import graph as sg

    snapshot, _ = world
    f = network_features(snapshot)
    cases = (("papers", graph.papers, sg.citation_edges(graph), snapshot.paper_ids, f.paper_pagerank),
             ("ACN", graph.authors, sg.coauthor_edges(graph), snapshot.author_ids, f.author_pagerank_coauthor),
             ("ACCN", graph.authors, sg.author_citation_edges(graph), snapshot.author_ids,
              f.author_pagerank_citation),
             ("VCCN", graph.venues, sg.venue_citation_edges(graph), snapshot.venue_ids, f.venue_pagerank))
    for name, nodes, edges, ids, expected in cases:
        result = sg.pagerank(nodes, edges)
        scores = {r["id"]: r["score"] for r in result.scores.collect()}
        got = np.array([scores[i] for i in ids])
        rho = spearmanr(got, expected).statistic
        assert rho >= 0.9999, (name, rho)
        assert np.abs(got - expected).max() < 1e-12, name
        assert got.sum() == pytest.approx(1.0)


@SPARK_SLOW_TIER
def test_an_unconverged_pagerank_raises_unless_not_strict(graph):
    from scholargraph.spark import graph as sg

    with pytest.raises(PageRankNotConverged):
        sg.pagerank(graph.papers, sg.citation_edges(graph), max_iter=2, tol=1e-12)
    result = sg.pagerank(graph.papers, sg.citation_edges(graph), max_iter=2, tol=1e-12, strict=False)
    assert result.iterations == 2 and result.error > 0
