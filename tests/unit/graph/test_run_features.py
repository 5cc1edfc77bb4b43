"""run_features on InMemoryStore: what it writes back, and when it skips (nothing changed) or reruns."""

from __future__ import annotations

import networkx as nx
import numpy as np

from scholargraph.graph.features import FeatureOptions, run_features
from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle, Venue

TEXTS = {
    "p1": "graph ranking citation network pagerank",
    "p2": "citation network analysis ranking of papers",
    "p3": "protein folding molecular dynamics simulation",
    "p4": "molecular simulation of protein structure",
    "p5": "pagerank on citation graph for ranking",
}
SPEC = {  # paper: (authors, cited papers, year)
    "p1": (("a1", "a2"), (), 2000), "p2": (("a2", "a3"), ("p1",), 2001), "p3": (("a3",), ("p1", "p2"), 2002),
    "p4": (("a1", "a2"), ("p3",), 2003), "p5": (("a4",), ("p1", "p4"), 2004)}
NETWORKS = FeatureOptions(only=("networks", "pagerank"))
TEXT = FeatureOptions(only=("topics", "vectors"), num_topics=2, encoder="tfidf-svd")


def paper(pid, authors, refs, year, text):
    venue = Venue("venue:a", "A")
    return PaperBundle(
        paper=Paper(pid, pid.upper(), abstract=text, year=year, venue_id=venue.id, sources=(pid,)),
        authors=tuple(Author(a, a) for a in authors), venue=venue,
        authorships=tuple(Authorship(a, pid, i + 1) for i, a in enumerate(authors)),
        citations=tuple(Citation(pid, r) for r in refs))


def hand_built() -> InMemoryStore:
    store = InMemoryStore()
    store.write_bundles([paper(pid, a, refs, year, TEXTS[pid]) for pid, (a, refs, year) in SPEC.items()])
    return store


def node_values(store, label, name):
    ids, values = store.read_nodes(label, [name])
    return dict(zip(ids, values[name]))


def test_networks_and_pagerank_are_written_back(tmp_path):
    store = hand_built()
    report = run_features(store, tmp_path / "models", NETWORKS)
    assert report.startswith("features networks,pagerank on 5 papers, 4 authors, 1 venues")
    src, dst, w = store.read_edges("COAUTHOR")
    assert {tuple(sorted(e)): x for *e, x in zip(src, dst, w.tolist())} == {("a1", "a2"): 2.0, ("a2", "a3"): 1.0}
    expected = nx.pagerank(nx.DiGraph(list(zip(*store.read_edges("CITES")[:2]))), alpha=0.85, tol=1e-6)
    got = node_values(store, "Paper", "pagerank")
    assert all(abs(got[k] - v) < 1e-6 for k, v in expected.items())
    assert node_values(store, "Paper", "n_citation")["p1"] == 3
    assert store.last_run("features")["status"] == "succeeded"


def test_a_second_run_with_nothing_changed_skips_and_force_or_a_change_reruns(tmp_path):
    store, models = hand_built(), tmp_path / "models"
    first = run_features(store, models, NETWORKS)
    runs = store.stats()["nodes"]["ScoringRun"]
    assert run_features(store, models, NETWORKS).startswith("features are up to date: nothing changed since run")
    assert store.stats()["nodes"]["ScoringRun"] == runs  # a skipped run records nothing
    # Steps the last run computed are up to date one by one too.
    assert run_features(store, models, FeatureOptions(only=("networks",))).startswith("features are up to date")
    assert run_features(store, models, NETWORKS, force=True).startswith("features networks,pagerank")
    assert store.stats()["nodes"]["ScoringRun"] == runs + 1
    store.write_bundles([paper("p6", ("a5",), ("p5",), 2005, "graph ranking")])
    rerun = run_features(store, models, NETWORKS)
    assert rerun.startswith("features networks,pagerank on 6 papers") and rerun != first
    assert node_values(store, "Paper", "pagerank")["p6"] is not None
    assert run_features(store, models, NETWORKS).startswith("features are up to date")


def test_text_vectors_are_encoded_once_per_paper_and_the_models_are_reused(tmp_path):
    store, models = hand_built(), tmp_path / "models"
    report = run_features(store, models, TEXT)
    assert "text vectors: encoded 5 of 5 papers with text" in report and "model saved" in report
    vectors = np.array(list(node_values(store, "Paper", "semantic_vector").values()), dtype=np.float64)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert all(abs(sum(t) - 1) < 1e-5 for t in node_values(store, "Paper", "topic_vector").values())
    assert store.stats()["nodes"]["Topic"] == 2 and store.stats()["relationships"]["HAS_TOPIC"] > 0
    assert run_features(store, models, TEXT).startswith("features are up to date")
    store.write_bundles([paper("p6", ("a5",), ("p5",), 2005, "molecular protein folding")])
    again = run_features(store, models, TEXT)
    # Only the new paper is encoded; the saved topic model and encoder are used as they are.
    assert "text vectors: encoded 1 of 6 papers with text" in again and "model saved" not in again
    assert node_values(store, "Paper", "semantic_vector")["p6"] is not None
