"""The features pipeline against the real Neo4j: exact networks, PageRank, topics, vectors, incremental."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from scholargraph.graph.features import FeatureOptions, run_features
from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle, Venue
from scholargraph.graph.snapshot import GraphSnapshot

TEXTS = {
    "p1": "graph ranking citation network pagerank",
    "p2": "citation network analysis ranking of papers",
    "p3": "protein folding molecular dynamics simulation",
    "p4": "molecular simulation of protein structure",
    "p5": "pagerank on citation graph for ranking",
}


def hand_built(store):
    venue = Venue("venue:a", "A")
    spec = {  # paper: (authors, cited papers, year)
        "p1": (("a1", "a2"), (), 2000), "p2": (("a2", "a3"), ("p1",), 2001), "p3": (("a3",), ("p1", "p2"), 2002),
        "p4": (("a1", "a2"), ("p3",), 2003), "p5": (("a4",), ("p1", "p4"), 2004)}
    bundles = []
    for pid, (authors, refs, year) in spec.items():
        bundles.append(PaperBundle(
            paper=Paper(pid, pid.upper(), abstract=TEXTS[pid], year=year, venue_id=venue.id, sources=(pid,)),
            authors=tuple(Author(a, a) for a in authors), venue=venue,
            authorships=tuple(Authorship(a, pid, i + 1) for i, a in enumerate(authors)),
            citations=tuple(Citation(pid, r) for r in refs)))
    store.write_bundles(bundles)


def edges(store, rel):
    src, dst, w = store.read_edges(rel)
    return {(s, t): float(x) for s, t, x in zip(src, dst, w)}


def test_networks_pagerank_idempotent_and_incremental(store, tmp_path):
    import networkx as nx

    hand_built(store)
    options = FeatureOptions(only=("networks", "pagerank"))
    run_features(store, tmp_path / "models", options)
    coauthor = {tuple(sorted(k)): v for k, v in edges(store, "COAUTHOR").items()}
    assert coauthor == {("a1", "a2"): 2.0, ("a2", "a3"): 1.0}
    accn = edges(store, "CITES_AUTHOR")
    # a3's papers p2, p3 cite a2's papers: p2->p1, p3->p1, p3->p2 (a3 -> a3 is a self-citation, excluded).
    assert ("a3", "a3") not in accn and accn[("a3", "a2")] == 3.0 and accn[("a1", "a3")] == 1.0
    ids, values = store.read_nodes("Paper", ["pagerank", "n_citation"])
    expected = nx.pagerank(nx.DiGraph(list(zip(*store.read_edges("CITES")[:2]))), alpha=0.85, tol=1e-6)
    got = dict(zip(ids, values["pagerank"]))
    assert all(abs(got[k] - v) < 1e-6 for k, v in expected.items())
    assert spearmanr([got[k] for k in expected], list(expected.values())).statistic > 0.999
    assert dict(zip(ids, values["n_citation"]))["p1"] == 3
    before = store.stats()
    assert "up to date" in run_features(store, tmp_path / "models", options)
    assert "features networks" in run_features(store, tmp_path / "models", options, force=True)
    after = store.stats()
    assert after["relationships"] == before["relationships"]  # rewriting changed nothing
    assert after["nodes"]["ScoringRun"] == before["nodes"]["ScoringRun"] + 1


def test_as_of_writes_suffixed_scalars_only(store, tmp_path):
    hand_built(store)
    run_features(store, tmp_path / "models", FeatureOptions(only=("networks", "pagerank"), as_of=2002))
    ids, values = store.read_nodes("Paper", ["pagerank_as_of_2002", "pagerank"])
    got = dict(zip(ids, values["pagerank_as_of_2002"]))
    assert got["p4"] is None and got["p5"] is None and got["p1"] > got["p3"]
    assert all(v is None for v in values["pagerank"])  # the current properties are untouched
    assert store.stats()["relationships"]["COAUTHOR"] == 0


def test_topics_vectors_and_the_vector_index(store, tmp_path):
    hand_built(store)
    report = run_features(store, tmp_path / "models", FeatureOptions(only=("topics", "vectors"), num_topics=2))
    assert "Paper.semanticVector" in report
    snap = GraphSnapshot.from_store(store)
    ids, values = store.read_nodes("Paper", ["semantic_vector", "topic_vector"])
    vectors = np.array(values["semantic_vector"], dtype=np.float64)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert all(abs(sum(t) - 1) < 1e-5 for t in values["topic_vector"])
    assert store.stats()["nodes"]["Topic"] == 2 and snap.n_papers == 5
    for i in range(len(ids)):
        # The library's similar_papers: Neo4j's cosine score is (1 + cos) / 2 over the other papers; ties
        # (identical vectors) may come in any order.
        truth = np.sort(np.delete((1 + vectors @ vectors[i]) / 2, i))[::-1][:3]
        columns, rows = store.run_library_query("similar_papers", {"paperId": ids[i], "limit": 3})
        got = np.array([row[columns.index("score")] for row in rows])
        assert ids[i] not in [row[columns.index("paper")] for row in rows]
        assert np.allclose(got, truth, atol=2e-4)


@pytest.mark.parametrize("step", ["networks"])
def test_unknown_step_is_a_usage_error(step):
    from click.testing import CliRunner

    from scholargraph.cli import main

    result = CliRunner().invoke(main, ["features", "--only", f"{step},bogus"])
    assert result.exit_code == 2 and "unknown step" in result.output


def test_a_newly_trained_citeomatic_encoder_rewrites_the_semantic_vectors(store, tmp_path):
    from scholargraph.graph.features import current_model_paths, make_current
    from scholargraph.ranking.citations.encoder import CiteomaticEncoder
    from scholargraph.ranking.citations.nnselect import NNSelect

    hand_built(store)
    models = tmp_path / "models"
    options = FeatureOptions(only=("topics", "vectors"), num_topics=2)
    run_features(store, models, options)
    saved = current_model_paths(models)
    assert "up to date" in run_features(store, models, options)
    # A forced rerun reuses the saved models as they are: nothing new on disk, current.json unchanged.
    run_features(store, models, options, force=True)
    assert current_model_paths(models) == saved and len(list((models / "encoders").iterdir())) == 1

    snap = GraphSnapshot.from_store(store, with_text=True)
    selector = NNSelect(dim=8, epochs=1, min_df=1, k_nn=3).fit(snap)
    path = CiteomaticEncoder.from_selector(selector).save(models / "citations" / "v1" / "encoder")
    make_current(models, {"encoder": str(path)})
    report = run_features(store, models, options)  # the encoder changed: not up to date any more
    assert report.startswith("features vectors on") and "Paper.semanticVector: 5" in report
    ids, values = store.read_nodes("Paper", ["semantic_vector"])
    expected = selector.encode(*snap.text_fields())
    got = np.array(values["semantic_vector"])
    assert got.shape == (5, 8)
    np.testing.assert_allclose(got[np.argsort(ids)], expected[np.argsort(snap.paper_ids)], atol=1e-5)
    # The vector index serves the new vectors: the nearest other paper scores as the new vectors say.
    columns, rows = store.run_library_query("similar_papers", {"paperId": ids[0], "limit": 1})
    assert np.isclose(rows[0][columns.index("score")], np.max(np.delete((1 + got @ got[0]) / 2, 0)), atol=1e-3)
    assert "up to date" in run_features(store, models, options)
