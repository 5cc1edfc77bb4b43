"""ONNX Runtime inference of the pretrained MiniLM: a one-time export of the installed weights (fp32 and int8),
cached, and a session that tokenises, batches by length and mean-pools."""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import warnings
from pathlib import Path

import numpy as np

# Bump when the export recipe changes (opset, quantisation options): the cached files and the encoders'
# keys follow it, so vectors of two recipes are never mixed in one graph.
EXPORT_RECIPE = 1
VARIANTS = ("fp32", "int8")
_OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class OnnxUnavailable(RuntimeError):
    """onnxruntime, tokenizers or (for the export) onnx and torch are not installed."""


def default_cache_dir() -> Path:
    """Where the exports are kept: `$SCHOLARGRAPH_CACHE/onnx` (default ~/.cache/scholargraph/onnx), shared by
    every home, as the Neo4j jars are."""
    from scholargraph.config import Settings

    return Settings.load().cache / "onnx"


def cpu_count() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def exported_model(model_dir: Path, weights_sha256: str, variant: str, cache_dir: Path | None = None,
                   log=lambda _: None) -> Path:
    """The ONNX file of `variant` ("fp32" or "int8") for the weights in `model_dir`, exported on first use and
    cached under `cache_dir/<weights digest>-r<recipe>/`. The export writes to a temporary file that is renamed
    into place, so two processes exporting at once, or one killed half-way, never leave a broken file."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown ONNX variant {variant!r}; known: {', '.join(VARIANTS)}")
    folder = (cache_dir or default_cache_dir()) / f"{weights_sha256[:16]}-r{EXPORT_RECIPE}"
    path = folder / f"model-{variant}.onnx"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    if variant == "fp32":
        _export_fp32(model_dir, path, log)
    else:
        _quantize(exported_model(model_dir, weights_sha256, "fp32", cache_dir, log), path, log)
    return path


def _atomic_target(path: Path) -> Path:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".onnx")
    os.close(fd)
    return Path(tmp)


def _export_fp32(model_dir: Path, path: Path, log) -> None:
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise OnnxUnavailable(f"exporting MiniLM to ONNX needs torch and transformers ({exc})") from None
    log(f"exporting MiniLM to ONNX (once, cached in {path.parent})")
    # Eager attention exports the classic BERT attention pattern, which ONNX Runtime fuses into one Attention
    # kernel when it loads the model; the SDPA export it does not recognise ran 1.5x slower (fp32) and 1.75x
    # slower (int8) at 256 word pieces on ACM abstracts.
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True, attn_implementation="eager").eval()

    class LastHiddenState(torch.nn.Module):
        """BERT's forward takes keywords only in recent transformers: the export calls it by position."""

        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    example = tuple(torch.ones(2, 8, dtype=torch.long) for _ in _INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    tmp = _atomic_target(path)
    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")  # the TorchScript exporter is deprecated in favour of dynamo
            torch.onnx.export(LastHiddenState(model), example, str(tmp), input_names=list(_INPUTS),
                              output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=_OPSET,
                              dynamo=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _quantize(fp32: Path, path: Path, log) -> None:
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise OnnxUnavailable(f"quantising MiniLM needs onnxruntime and onnx ({exc})") from None
    log("quantising MiniLM to int8 (once, cached)")
    tmp = _atomic_target(path)
    try:
        import logging

        # Per-channel weights: the per-tensor default moved vectors to a mean cosine of 0.946 with fp32 on ACM
        # abstracts; per channel keeps 0.994 at the same speed (docs/vectors.md).
        quiet = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)  # "consider pre-processing" is advice, not a problem
        try:
            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
        finally:
            logging.getLogger().setLevel(quiet)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


class OnnxSentenceEncoder:
    """A BERT-style sentence encoder on ONNX Runtime: `embed(texts)` gives the mean of the last hidden states
    over the attention mask (sentence-transformers' pooling), not normalised.

    The fast (Rust) tokenizer reads `tokenizer.json`; texts are truncated to `max_length` word pieces and
    padded to the longest of their batch only. One session serves every thread (ONNX Runtime sessions are
    thread-safe); `threads` intra-op threads, one inter-op thread."""

    def __init__(self, model_path: Path, tokenizer_path: Path, max_length: int, threads: int):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise OnnxUnavailable(f"the ONNX encoders need onnxruntime and tokenizers ({exc})") from None
        options = ort.SessionOptions()
        options.intra_op_num_threads = int(threads)
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: ORT's warnings about unused initialisers are noise here
        self.session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=int(max_length))
        self._lock = threading.Lock()  # the tokenizer's settings are shared state
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            encodings = self.tokenizer.encode_batch(texts)
        width = max((len(e.ids) for e in encodings), default=0)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n] = e.ids
            types[row, :n] = e.type_ids
            mask[row, :n] = 1
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        weights = mask[..., None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
