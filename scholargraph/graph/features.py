"""The features pipeline: pull a snapshot, compute networks, PageRank, topics and vectors, write them back.

Pure computations live in networks.py, pagerank.py, topics.py, vectors.py and encoders.py; this module
only sequences them and moves their results through the store. `compute_features` is the in-memory
half, used as is by models that need features "as of" a year.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from scholargraph.errors import StoreUnavailable, UsageError
from scholargraph.graph import networks, topics
from scholargraph.graph.encoders import (
    AUTO_ENCODER,
    ENCODERS,
    EncoderChoice,
    TextEncoder,
    choose_encoder,
    is_empty,
    load_encoder,
    make_encoder,
    saved_encoder_name,
    text_digest,
)
from scholargraph.graph.pagerank import pagerank
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.snapshot_cache import snapshot_counts
from scholargraph.graph.store import GraphStore
from scholargraph.graph.vectors import citation_vectors, has_evidence
from scholargraph.progress import progress
from scholargraph.registry import CurrentModels, new_version

STEPS = ("networks", "pagerank", "topics", "vectors")
# Papers per committed chunk of text vectors: a crash (kill -9) loses at most one chunk, and a chunk is long
# enough to sort by length into well-filled batches (64 batches of 32 for MiniLM).
ENCODE_CHUNK = 2048


@dataclass
class FeatureOptions:
    only: tuple[str, ...] = STEPS
    as_of: int | None = None
    damping: float = 0.85
    max_iter: int = 100
    tol: float = 1e-6
    num_topics: int = 10
    topic_threshold: float = 0.1
    encoder: str = AUTO_ENCODER  # a name of ENCODERS, or "auto": chosen per corpus (encoders.choose_encoder)
    citation_dim: int = 64
    seed: int = 0
    backend: str = "networkx"  # PageRank backend: "networkx" (SciPy, in process) or "gds" (on the server)
    strict: bool = True  # PageRank that has not converged in max_iter raises; False: its last iterate
    commit_every: int = ENCODE_CHUNK  # text vectors committed every this many papers
    topic_sample: int | None = None  # a topic fit reads about this many papers drawn at random (None: all)


@dataclass
class Features:
    """Everything computed for one snapshot, aligned with its paper/author/venue indexes."""

    acn: object = None  # authors x authors, symmetric
    accn: object = None  # authors x authors
    vccn: object = None  # venues x venues
    paper_citations: np.ndarray | None = None
    venue_avg_citation: np.ndarray | None = None
    paper_pagerank: np.ndarray | None = None
    author_pagerank_coauthor: np.ndarray | None = None
    author_pagerank_citation: np.ndarray | None = None
    venue_pagerank: np.ndarray | None = None
    paper_topics: np.ndarray | None = None
    paper_topics_empty: np.ndarray | None = None
    author_topics: np.ndarray | None = None
    topic_diversity: np.ndarray | None = None
    topic_authority: np.ndarray | None = None
    topic_model: topics.TopicModel | None = None
    semantic: np.ndarray | None = None
    encoder: TextEncoder | None = None
    encoder_choice: EncoderChoice | None = None  # when `auto` chose the encoder in this computation
    encoded: np.ndarray | None = None  # boolean mask of the papers whose text vector was computed
    encode_seconds: float = 0.0
    citation: np.ndarray | None = None
    timings: dict[str, float] = field(default_factory=dict)


class FeatureEngine(Protocol):
    """Computes the "networks", "pagerank" and (current) "topics" steps elsewhere (scholargraph.spark.features:
    on Spark, over a Parquet snapshot) and writes them back itself, and encodes the text vectors there; the
    other steps run here, on `read_snapshot`'s graph."""

    name: str

    @property
    def watermark(self) -> int | None:
        """The server time read just before the engine's snapshot was pulled (None before)."""
        ...

    def read_snapshot(self, as_of: int | None, with_text: bool = True) -> GraphSnapshot:
        ...

    def network_features(self, options: FeatureOptions, version: str, log: Callable[[str], None]
                         ) -> tuple[dict[str, int], dict[str, int]]:
        """(write counts, {"papers": n, "authors": n, "venues": n}) of the requested network steps."""
        ...

    def encode_papers(self, snapshot: GraphSnapshot, encoder, mask: np.ndarray | None = None, quiet: bool = True,
                      sink: VectorSink | None = None, chunk: int = ENCODE_CHUNK) -> np.ndarray | None:
        """`encode_papers` (below) on the engine: with `sink`, the engine encodes and writes the vectors
        itself (the same chunks, the same stamps) and returns None; without, the in-process array."""
        ...

    def topic_features(self, options: FeatureOptions, topic_model: topics.TopicModel | None, version: str,
                       log: Callable[[str], None]) -> tuple[topics.TopicModel, dict[str, int]]:
        """The topics step of the current graph on the engine, written back as `write_features` writes it:
        `topic_model` reused when given, else one trained there; returns the model and the write counts."""
        ...


NETWORK_STEPS = ("networks", "pagerank")


def resolve_encoder(snapshot: GraphSnapshot, options: FeatureOptions, encoder=None,
                    log: Callable[[str], None] = lambda _: None) -> tuple[TextEncoder, EncoderChoice | None]:
    """The fitted encoder for the vectors step: `encoder` when given, else the one `options.encoder` names,
    fitted on the snapshot's texts; `auto` chooses by the texts (the choice is returned and logged)."""
    if encoder is not None:
        return encoder, None
    texts = [snapshot.text(i) for i in range(snapshot.n_papers)]
    name, choice = options.encoder, None
    if name == AUTO_ENCODER:
        choice = choose_encoder(texts, seed=options.seed)
        name = choice.name
        log(choice.reason)
    elif name not in ENCODERS:
        raise UsageError(f"unknown encoder {name!r}; choose auto or one of {', '.join(sorted(ENCODERS))}")
    t0 = time.perf_counter()
    encoder = make_encoder(name).fit(texts)
    log(f"encoder fit ({name}): {time.perf_counter() - t0:.1f}s")
    return encoder, choice


def papers_to_encode(snapshot: GraphSnapshot, key: str, stamps: dict[str, tuple[str | None, str | None]]
                     ) -> np.ndarray:
    """Boolean mask of the papers with text whose stored vector is not of the encoder `key` for their
    current text; `stamps` maps paper id -> (Paper.semanticEncoder, Paper.semanticTextHash)."""
    mask = np.zeros(snapshot.n_papers, dtype=bool)
    for i, pid in enumerate(snapshot.paper_ids):
        text = snapshot.text(i)
        if is_empty(text):
            continue  # nothing to encode: no vector, no stamp (a stub filled in later gets one)
        stamp = stamps.get(pid)
        mask[i] = stamp is None or stamp[0] != key or stamp[1] != text_digest(text)
    return mask


def read_semantic_stamps(store: GraphStore) -> dict[str, tuple[str | None, str | None]]:
    """Paper id -> (encoder key, text hash) of every paper that has been encoded."""
    return {pid: (key, digest) for page in store.pages("store/paper_semantic_stamps")
            for pid, key, digest in page}


VectorSink = Callable[[np.ndarray, np.ndarray], None]


def encode_papers(snapshot: GraphSnapshot, encoder, mask: np.ndarray | None = None, quiet: bool = True,
                  sink: VectorSink | None = None, chunk: int = ENCODE_CHUNK) -> np.ndarray | None:
    """Text vectors of the papers in `mask` (all by default), encoded `chunk` papers at a time with a progress
    bar in docs/s and an ETA. Without `sink`: an (n_papers, dim) array, zero rows elsewhere. With `sink`, each
    chunk goes to `sink(paper indices, vectors)` as soon as it is encoded (the store commits it) and nothing
    is kept: memory stays at one chunk, and None is returned."""
    idx = np.arange(snapshot.n_papers) if mask is None else np.flatnonzero(mask)
    titles, abstracts = snapshot.text_fields()
    out = None if sink is not None else np.zeros((snapshot.n_papers, encoder.dim), dtype=np.float32)
    with progress(total=len(idx), desc=f"encoding ({encoder.name})", unit="doc", quiet=quiet) as bar:
        for start in range(0, len(idx), chunk):
            part = idx[start:start + chunk]
            vectors = encoder.encode_fields([titles[int(i)] for i in part], [abstracts[int(i)] for i in part],
                                            on_progress=bar.update)
            if sink is None:
                assert out is not None, "no sink: the vectors are kept"
                out[part] = vectors
            else:
                sink(part, vectors)
    return out


def _timer(f: Features, log: Callable[[str], None]) -> Callable[[str, Callable[[], Any]], Any]:
    """`timed(name, fn)`: fn's result, its wall time recorded in f.timings and logged."""
    def timed(name: str, fn):
        t0 = time.perf_counter()
        result = fn()
        f.timings[name] = time.perf_counter() - t0
        log(f"{name}: {f.timings[name]:.1f}s")
        return result
    return timed


def _network_features(snapshot: GraphSnapshot, options: FeatureOptions, f: Features, timed) -> None:
    """Fill f's networks, citation counts and PageRank for the steps in options.only."""
    only = set(options.only)
    if only & {"networks", "pagerank"}:
        f.acn = timed("ACN", lambda: networks.coauthor_matrix(snapshot))
        f.accn = timed("ACCN", lambda: networks.author_citation_matrix(snapshot))
        f.vccn = timed("VCCN", lambda: networks.venue_citation_matrix(snapshot))
        f.paper_citations = networks.paper_citation_counts(snapshot)
        f.venue_avg_citation = networks.venue_avg_citation(snapshot)
    if "pagerank" in only:
        pr: dict[str, Any] = {"damping": options.damping, "max_iter": options.max_iter, "tol": options.tol,
                              "strict": options.strict}
        f.paper_pagerank = timed("PageRank papers", lambda: pagerank(snapshot.citations, **pr))
        f.author_pagerank_coauthor = timed("PageRank ACN", lambda: pagerank(f.acn, **pr))
        f.author_pagerank_citation = timed("PageRank ACCN", lambda: pagerank(f.accn, **pr))
        f.venue_pagerank = (timed("PageRank VCCN", lambda: pagerank(f.vccn, **pr))
                            if snapshot.n_venues else np.zeros(0))


def network_features(snapshot: GraphSnapshot, options: FeatureOptions | None = None,
                     log: Callable[[str], None] = lambda _: None) -> Features:
    """The networks (ACN, ACCN, VCCN), citation counts and PageRank of `snapshot` (`options.only` of
    "networks"/"pagerank"; both by default): the part of the pipeline that models computing features as of a
    year (rising stars) take from here rather than computing themselves."""
    options = options or FeatureOptions(only=("networks", "pagerank"))
    f = Features()
    _network_features(snapshot, options, f, _timer(f, log))
    return f


def compute_features(snapshot: GraphSnapshot, options: FeatureOptions, *, topic_model=None, encoder=None,
                     log: Callable[[str], None] = lambda _: None, encode: np.ndarray | None = None,
                     quiet: bool = True, vector_sink: VectorSink | None = None,
                     engine: FeatureEngine | None = None) -> Features:
    """All requested features of `snapshot` in memory. A fitted topic model / encoder is reused when given
    (incremental runs, queries); otherwise one is trained on the snapshot's texts (`auto`: the encoder is
    chosen by them). `encode` (a boolean mask) limits text encoding to those papers; the other rows of
    `semantic` stay zero (the store already holds their vectors). With `vector_sink`, text vectors go to it
    chunk by chunk as they are encoded (`encode_papers`; `engine.encode_papers` when an engine is given, which
    then writes them itself) and `semantic` stays None."""
    f = Features()
    only = set(options.only)
    timed = _timer(f, log)
    _network_features(snapshot, options, f, timed)
    if "topics" in only:
        texts = [snapshot.text(i) for i in range(snapshot.n_papers)]
        if topic_model is None:
            fit_texts = texts
            fraction = topics.fit_sample_fraction(options.topic_sample, snapshot.n_papers)
            if fraction is not None:
                keep = topics.in_fit_sample(snapshot.paper_ids, fraction, options.seed)
                fit_texts = [t for t, k in zip(texts, keep) if k]
                log(f"LDA fit sample: {len(fit_texts):,} of {snapshot.n_papers:,} papers")
            topic_model = timed("LDA fit", lambda: topics.TopicModel(num_topics=options.num_topics,
                                                                     random_state=options.seed).fit(fit_texts))
        f.topic_model = topic_model
        f.paper_topics, f.paper_topics_empty = timed("LDA infer",
                                                     lambda: topic_model.transform(texts, return_empty=True))
        cites = f.paper_citations if f.paper_citations is not None else networks.paper_citation_counts(snapshot)
        f.author_topics = topics.author_topic_distribution(snapshot.authorship, f.paper_topics)
        f.topic_diversity = topics.topic_diversity(snapshot.authorship, f.paper_topics)
        f.topic_authority = topics.topic_authority(snapshot.authorship, f.paper_topics, cites)
    if "vectors" in only:
        f.encoder, f.encoder_choice = resolve_encoder(snapshot, options, encoder, log=log)
        if encode is None:  # every paper with text (a paper without one has a zero row: no evidence)
            encode = np.array([not is_empty(snapshot.text(i)) for i in range(snapshot.n_papers)], dtype=bool)
        f.encoded = np.asarray(encode, dtype=bool)
        encode_with = encode_papers if engine is None else engine.encode_papers
        f.semantic = timed("text vectors", lambda: encode_with(snapshot, f.encoder, f.encoded, quiet=quiet,
                                                               sink=vector_sink, chunk=options.commit_every))
        f.encode_seconds = f.timings["text vectors"]
        f.citation = timed("citation vectors", lambda: citation_vectors(snapshot, dim=options.citation_dim,
                                                                        seed=options.seed))
    return f


# --- write-back -----------------------------------------------------------------------------------


def _suffix(as_of: int | None) -> str:
    return "" if as_of is None else f"_as_of_{as_of}"


def write_features(store: GraphStore, snapshot: GraphSnapshot, f: Features, options: FeatureOptions, version: str,
                   log: Callable[[str], None] = lambda _: None) -> dict[str, int]:
    """Write what was computed. As of a year, only scalar features are written, under suffixed names
    (`pagerankAsOf2015`, ...), so that they sit beside the current ones; networks, topics and vectors as of
    a year stay in memory for the caller."""
    counts: dict[str, int] = {}
    sfx = _suffix(options.as_of)
    papers, authors, venues = snapshot.paper_ids, snapshot.author_ids, snapshot.venue_ids
    t0 = time.perf_counter()
    if f.acn is not None and options.as_of is None and "networks" in options.only:
        derived = (("COAUTHOR", f.acn, authors, True), ("CITES_AUTHOR", f.accn, authors, False),
                   ("CITES_VENUE", f.vccn, venues, False))
        for rel, matrix, ids, symmetric in derived:
            batches = networks.iter_edge_rows(matrix, ids, ids, symmetric=symmetric)
            rows = (row for batch in batches for row in batch)
            counts[rel] = store.write_edges(rel, rows, version)
            store.delete_stale_edges(rel, version)
    if f.paper_citations is not None:
        counts["Paper.nCitation"] = store.write_node_properties(
            "Paper", papers, {"n_citation" + sfx: f.paper_citations.astype(int)})
        if venues:
            assert f.venue_avg_citation is not None, "computed with paper_citations"
            # A venue without papers has no average (NaN): stored as no property, not as NaN.
            avg = [None if np.isnan(v) else float(v) for v in f.venue_avg_citation]
            store.write_node_properties("Venue", venues, {"avg_citation" + sfx: avg})
    if f.paper_pagerank is not None:
        assert f.author_pagerank_coauthor is not None and f.author_pagerank_citation is not None \
            and f.venue_pagerank is not None, "the PageRank step fills all four"
        counts["Paper.pagerank"] = store.write_node_properties("Paper", papers, {"pagerank" + sfx: f.paper_pagerank})
        counts["Author.pagerank"] = store.write_node_properties("Author", authors, {
            "pagerank_coauthor" + sfx: f.author_pagerank_coauthor,
            "pagerank_citation" + sfx: f.author_pagerank_citation})
        if venues:
            store.write_node_properties("Venue", venues, {"pagerank_citation" + sfx: f.venue_pagerank})
    if f.paper_topics is not None:
        assert f.topic_diversity is not None and f.topic_authority is not None, "the topics step fills them"
        store.write_node_properties("Author", authors, {"topic_diversity" + sfx: f.topic_diversity,
                                                        "topic_authority" + sfx: f.topic_authority})
        if options.as_of is None:
            assert f.topic_model is not None and f.paper_topics_empty is not None, "the topics step fills them"
            store.upsert_topics(topic_nodes(f.topic_model, version))
            topic_ids = [f"topic:{k}" for k in range(f.topic_model.num_topics)]
            counts["Paper.topicVector"] = store.write_node_properties(
                "Paper", papers, {"topic_vector": [row.tolist() for row in f.paper_topics.astype(np.float32)]})
            edges = topics.paper_topic_edges(f.paper_topics, options.topic_threshold, ~f.paper_topics_empty)
            rows = (row for batch in networks.iter_edge_rows(edges, papers, topic_ids) for row in batch)
            counts["HAS_TOPIC"] = store.write_edges("HAS_TOPIC", rows, version)
            store.delete_stale_edges("HAS_TOPIC", version)
    if f.citation is not None and options.as_of is None and "vectors" in options.only:
        if f.semantic is not None:  # else a vector sink committed them as they were encoded
            counts["Paper.semanticVector"] = _write_text_vectors(store, snapshot, f)
        elif f.encoded is not None:
            counts["Paper.semanticVector"] = int(f.encoded.sum())
        counts["Paper.citationVector"] = _write_vectors(store, papers, "citation_vector", f.citation)
        store.apply_vector_indexes()
    log(f"write-back: {time.perf_counter() - t0:.1f}s")
    return counts


def topic_nodes(model: topics.TopicModel, version: str) -> list[dict]:
    """The Topic nodes of a topic model (id topic:k, its ten top words and their weights)."""
    return [{"id": f"topic:{k}", "words": [w for w, _ in ws], "weights": [p for _, p in ws], "modelVersion": version}
            for k, ws in enumerate(model.top_words(10))]


def _write_text_vectors(store: GraphStore, snapshot: GraphSnapshot, f: Features) -> int:
    """The text vectors of the papers encoded in this run (see `write_text_vector_rows`)."""
    idx = np.flatnonzero(f.encoded) if f.encoded is not None else np.arange(snapshot.n_papers)
    assert f.encoder is not None and f.semantic is not None, "text vectors come with their encoder"
    write_text_vector_rows(store, snapshot, f.encoder.key, idx, f.semantic[idx])
    return len(idx)


def write_text_vector_rows(store: GraphStore, snapshot: GraphSnapshot, key: str, idx: np.ndarray,
                           vectors: np.ndarray) -> None:
    """Papers `idx` get `vectors` (row for row), each stamped with the encoder's key and the hash of the text
    it read (`semanticEncoder`, `semanticTextHash`); the other papers keep theirs. Each batch is a committed
    transaction with its stamps, so a crash leaves whole vectors with their stamps or none."""
    batch = 2_000  # float lists are built one batch at a time: 1M x 384 of them would not fit in memory
    for start in range(0, len(idx), batch):
        part = idx[start:start + batch].tolist()
        store.write_node_properties("Paper", [snapshot.paper_ids[i] for i in part],
                                    text_vector_properties(key, [snapshot.text(i) for i in part],
                                                           vectors[start:start + batch]), batch_size=batch)


def text_vector_properties(key: str, texts: list[str], vectors: np.ndarray) -> dict[str, Any]:
    """The stored properties of papers with these texts and vectors (row for row): the vector as a float list
    (None without evidence: no vector, not a zero vector), the encoder's key and the hash of the text it read
    (None for an empty text). The in-process write and the Spark engine's (spark/vectors.py) both store these."""
    return {"semantic_vector": [row.tolist() if row.any() else None for row in vectors],
            "semantic_encoder": [None if is_empty(t) else key for t in texts],
            "semantic_text_hash": [None if is_empty(t) else text_digest(t) for t in texts]}


def _write_vectors(store: GraphStore, ids: list[str], name: str, vectors: np.ndarray) -> int:
    """Vectors as float lists; papers without evidence get null (no vector), not a zero vector."""
    mask = has_evidence(vectors)
    values = [vectors[i].tolist() if mask[i] else None for i in range(len(ids))]
    return store.write_node_properties("Paper", ids, {name: values}, batch_size=2_000)


# --- models on disk -------------------------------------------------------------------------------


def current_model_paths(models_dir: Path) -> dict[str, str]:
    """{"topics": dir, "encoder": dir} of the current models (empty before the first run)."""
    return CurrentModels(models_dir).paths()


def make_current(models_dir: Path, paths: dict[str, str]) -> None:
    """Point `current.json` at these model directories (others stay as they are)."""
    CurrentModels(models_dir).publish(paths)


def save_models(models_dir: Path, f: Features, started_at: datetime, reused: Mapping[str, object] | None = None
                ) -> dict[str, str]:
    """Newly fitted topic model and encoder under versioned directories (the run's start, to the
    microsecond), made current. Models that were loaded and used as they were (`reused`: {"topics": model,
    "encoder": encoder}) are not saved again."""
    reused = reused or {}
    current = CurrentModels(models_dir)
    saved: dict[str, str] = {}
    for kind, model, subdir in (("topics", f.topic_model, "topics"), ("encoder", f.encoder, "encoders")):
        if model is not None and model is not reused.get(kind):
            _, path = current.claim(subdir, started_at)
            model.save(path)
            saved[kind] = str(path)
    if saved:
        current.publish(saved)
    return saved


def load_models(paths: dict[str, str]) -> tuple[topics.TopicModel | None, TextEncoder | None]:
    """(topic model, encoder) saved in these directories; None for a kind without a path."""
    topic_model = topics.TopicModel.load(paths["topics"]) if paths.get("topics") else None
    encoder = load_encoder(paths["encoder"]) if paths.get("encoder") else None
    return topic_model, encoder


def load_current_models(models_dir: Path) -> tuple[topics.TopicModel | None, TextEncoder | None]:
    return load_models(current_model_paths(models_dir))


# --- the command ------------------------------------------------------------------------------------


def gds_pagerank_features(store: GraphStore, snapshot: GraphSnapshot, f: Features, options: FeatureOptions) -> None:
    """Fill the PageRank arrays of `f` from Neo4j GDS, aligned with the snapshot's indexes."""
    def aligned(network: str, ids: list[str]) -> np.ndarray:
        scores = store.gds_pagerank(network, options.damping, options.max_iter, options.tol)
        return np.array([scores.get(i, 0.0) for i in ids], dtype=np.float64)

    f.paper_pagerank = aligned("CITES", snapshot.paper_ids)
    f.author_pagerank_coauthor = aligned("COAUTHOR", snapshot.author_ids)
    f.author_pagerank_citation = aligned("CITES_AUTHOR", snapshot.author_ids)
    f.venue_pagerank = aligned("CITES_VENUE", snapshot.venue_ids) if snapshot.n_venues else np.zeros(0)
    if f.paper_citations is None:
        f.paper_citations = networks.paper_citation_counts(snapshot)
        f.venue_avg_citation = networks.venue_avg_citation(snapshot)


def _fingerprint(stats: dict, models: dict[str, str]) -> str:
    """What the features depend on: the graph in counts and the current models (a newly trained encoder,
    such as Citeomatic's, means new semantic vectors). A change in any of them means a recompute."""
    return json.dumps({**snapshot_counts(stats), "models": models}, sort_keys=True)


def _covers(last: dict | None, fingerprint: str, steps) -> bool:
    """Whether the features run `last` saw the graph and models of `fingerprint` and computed `steps`."""
    return (last is not None and last.get("fingerprint") == fingerprint
            and set(steps) <= set(json.loads(last.get("steps", "[]"))))


def features_up_to_date(store: GraphStore, models_dir: Path, steps=STEPS) -> bool:
    """Whether the stored features of `steps` were computed on the graph as it is now (by the last successful
    `features` run): a model may then read them instead of computing them again."""
    return _covers(store.last_run("features"), _fingerprint(store.stats(), current_model_paths(models_dir)), steps)


def _current_encoder_name(models_dir: Path) -> str | None:
    path = current_model_paths(models_dir).get("encoder")
    if not path:
        return None
    try:
        return saved_encoder_name(Path(path))
    except Exception:  # an unreadable model is reported when it is loaded
        return None


def _steps_reading_changed_models(last_fingerprint: str | None, fingerprint: str, also: AbstractSet[str] = frozenset()
                                  ) -> set[str] | None:
    """When the graph is unchanged since the fingerprint of the last run and only the current models
    differ (or the steps in `also` must be redone), the steps that read those models ("topics",
    "vectors"); None otherwise."""
    try:
        old, new = json.loads(last_fingerprint or ""), json.loads(fingerprint)
    except ValueError:
        return None
    if {k: v for k, v in old.items() if k != "models"} != {k: v for k, v in new.items() if k != "models"}:
        return None
    before, now = old.get("models", {}), new.get("models", {})
    redo = {step for kind, step in (("topics", "topics"), ("encoder", "vectors")) if before.get(kind) != now.get(kind)}
    return (redo | set(also)) or None


def run_features(store: GraphStore, models_dir: Path, options: FeatureOptions, *, retrain: bool = False,
                 force: bool = False, quiet: bool = True, log: Callable[[str], None] = lambda _: None,
                 run_props: dict | None = None, read_snapshot: Callable[[], GraphSnapshot] | None = None,
                 engine: FeatureEngine | None = None) -> str:
    """The `features` command: skip when nothing changed since the last successful run, else recompute
    (reusing the saved topic model and encoder unless `retrain`), write back and record a ScoringRun.
    `read_snapshot` gives the graph (with texts) when the caller shares one snapshot between several steps
    (a scoring-jobs run); it is called only when there is something to compute. `engine` computes and writes
    the networks, PageRank and topics steps and the text vectors (Spark); the other steps then read the
    engine's snapshot."""
    if engine is not None and options.backend == "gds":
        raise UsageError("--engine spark computes PageRank itself: it does not combine with --backend gds")
    if options.backend not in ("networkx", "gds"):
        raise UsageError(f"unknown PageRank backend {options.backend!r} (networkx or gds)")
    if options.backend == "gds" and "pagerank" in options.only:
        if options.as_of is not None:
            raise UsageError("--backend gds works on the stored (current) networks: it cannot compute --as-of")
        if not store.has_gds():
            raise UsageError("this Neo4j has no Graph Data Science plugin: use --backend networkx, the docker-compose "
                             "server, or SCHOLARGRAPH_PLUGINS=apoc,gds for the managed one")
    if options.encoder != AUTO_ENCODER and options.encoder not in ENCODERS:
        raise UsageError(f"unknown encoder {options.encoder!r}; choose auto or one of {', '.join(sorted(ENCODERS))}")
    stats = store.stats()
    fingerprint = _fingerprint(stats, current_model_paths(models_dir))
    last = store.last_run("features")
    current_encoder = _current_encoder_name(models_dir)
    # An encoder named on the command line that is not the current one: the vectors step switches to it.
    switch = (options.as_of is None and "vectors" in options.only and options.encoder != AUTO_ENCODER
              and current_encoder is not None and current_encoder != options.encoder)
    incremental = not force and not retrain and options.as_of is None and last is not None
    if incremental and not switch and _covers(last, fingerprint, options.only):
        assert last is not None, "incremental means a last run"
        return f"features are up to date: nothing changed since run {last.get('id')} ({last.get('finishedAt')})"
    covered = list(options.only)  # the steps that are up to date after this run
    if incremental:
        assert last is not None, "incremental means a last run"
        redo = _steps_reading_changed_models(last.get("fingerprint"), fingerprint, {"vectors"} if switch else set())
        done_before = json.loads(last.get("steps", "[]"))
        if redo is not None and set(options.only) <= set(done_before):
            # The graph is as the last run left it; only a model changed (a newly trained encoder, say):
            # recompute just the steps that read it.
            options = replace(options, only=tuple(s for s in options.only if s in redo))
            covered = done_before
            if not options.only:
                return "features are up to date: the changed model is not used by the requested steps"
            log(f"only the models changed since run {last.get('id')}: recomputing {', '.join(options.only)}")
    if switch:
        log(f"switching the text encoder from {current_encoder} to {options.encoder}")
    started = time.time()
    started_at = datetime.now(UTC)
    version = new_version(started_at)  # microseconds: two runs in one second stay apart
    run_id = f"features-{version}" + ("" if options.as_of is None else f"-as-of-{options.as_of}")
    # As-of runs are their own job: they write suffixed scalars only, so the last "features" run (what
    # skips and readers of the stored features go by) is always one that wrote the current features.
    job = "features" if options.as_of is None else "features-as-of"
    store.record_run(run_id, {"job": job, "status": "running", "started_at": started_at,
                              "heartbeat_at": started_at, "steps": json.dumps(covered),
                              **(run_props or {})})
    try:
        # The engine's steps: the networks and PageRank, and the current graph's topics (as of T they stay in
        # memory for the caller, so they are computed here).
        engine_steps = NETWORK_STEPS + (("topics",) if options.as_of is None else ())
        elsewhere = set(engine_steps) & set(options.only) if engine is not None else set()
        networks_elsewhere = elsewhere & set(NETWORK_STEPS)
        engine_counts, sizes = ({}, {}) if not networks_elsewhere or engine is None else engine.network_features(
            replace(options, only=tuple(s for s in options.only if s in networks_elsewhere)), version, log)
        topic_model, encoder = (None, None) if retrain else load_current_models(models_dir)
        reused = {"topics": topic_model, "encoder": encoder}
        if "topics" in elsewhere:
            assert engine is not None, "elsewhere is the engine's"
            topic_model, topic_counts = engine.topic_features(options, topic_model, version, log)
            engine_counts.update(topic_counts)
        needs_text = bool(set(options.only) & {"topics", "vectors"})
        if not set(options.only) - elsewhere:
            snapshot = GraphSnapshot.build([])  # every step ran on the engine: nothing to read here
        elif read_snapshot is None and engine is not None:
            snapshot = engine.read_snapshot(options.as_of, with_text=needs_text)  # as of T already
        else:
            snapshot = (read_snapshot() if read_snapshot is not None else
                        GraphSnapshot.from_store(store, with_text=needs_text, quiet=quiet))
            if options.as_of is not None:
                snapshot = snapshot.as_of(options.as_of)
        if switch:
            encoder = None
        on_server = options.backend == "gds" and "pagerank" in options.only
        skip = elsewhere | ({"pagerank"} if on_server else set())
        local = replace(options, only=tuple(s for s in options.only if s not in skip)) if skip else options
        encode, choice, sink = None, None, None
        if "vectors" in local.only and options.as_of is None:
            # Each paper is encoded once: only those without a vector of this encoder for their text now.
            encoder, choice = resolve_encoder(snapshot, local, encoder, log=log)
            encode = papers_to_encode(snapshot, encoder.key, read_semantic_stamps(store))
            # Text vectors are committed chunk by chunk as they are encoded: after a crash the same command
            # encodes only the papers whose vector was not committed.
            key = encoder.key
            sink = lambda idx, vectors: write_text_vector_rows(store, snapshot, key, idx, vectors)  # noqa: E731
        f = compute_features(snapshot, local, topic_model=topic_model, encoder=encoder, log=log, encode=encode,
                             quiet=quiet, vector_sink=sink, engine=engine)
        f.encoder_choice = f.encoder_choice or choice
        if "topics" in elsewhere:
            f.topic_model = topic_model  # trained (or reused) on the engine: saved as an in-process one is
        saved = save_models(models_dir, f, started_at, reused) if options.as_of is None else {}
        counts = {**engine_counts, **write_features(store, snapshot, f, local, version, log=log)}
        if on_server:
            # GDS reads the networks from the graph, so they are written first.
            gds_pagerank_features(store, snapshot, f, options)
            counts.update(write_features(store, snapshot, f, replace(options, only=("pagerank",)), version, log=log))
    except BaseException as exc:
        if not isinstance(exc, StoreUnavailable):  # with the store gone, the lease expiry marks it failed
            store.record_run(run_id, {"status": "failed", "finished_at": datetime.now(UTC),
                                      "error": str(exc)[:500]})
        raise
    encoded = None if f.encoded is None else int(f.encoded.sum())
    text_props = {} if f.encoder is None else {
        "encoder": f.encoder.key, "encoded": encoded,
        "encoder_choice": f.encoder_choice.reason if f.encoder_choice else None}
    store.record_run(run_id, {"id": run_id, "status": "succeeded", "finished_at": datetime.now(UTC),
                              # with the models this run made current, so that the next run can skip
                              "fingerprint": _fingerprint(stats, current_model_paths(models_dir)),
                              "counts": json.dumps(counts),
                              "model_version": version, "models": json.dumps(saved),
                              "engine": "in-process" if engine is None else engine.name, **text_props})
    n = sizes or {"papers": snapshot.n_papers, "authors": snapshot.n_authors, "venues": snapshot.n_venues}
    lines = [f"features {','.join(options.only)} on {n['papers']:,} papers, {n['authors']:,} authors, "
             f"{n['venues']:,} venues" + ("" if options.as_of is None else f" as of {options.as_of}")
             + f" in {time.time() - started:.1f}s" + ("" if engine is None else f" ({engine.name})")
             + f" (run {run_id})"]
    lines += [f"  {name}: {n:,}" for name, n in counts.items()]
    lines += [f"  model saved: {path}" for path in saved.values()]
    if f.encoder is not None:
        if f.encoder_choice is not None:
            why = f.encoder_choice.reason
        elif f.encoder is reused.get("encoder"):
            why = "the current encoder; --retrain chooses again"
        else:
            why = f"--encoder {options.encoder}"
        lines.append(f"  text encoder: {f.encoder.key} ({why})")
        with_text = sum(1 for i in range(snapshot.n_papers) if not is_empty(snapshot.text(i)))
        rate = encoded / f.encode_seconds if encoded and f.encode_seconds > 0 else 0.0
        lines.append(f"  text vectors: encoded {encoded:,} of {with_text:,} papers with text in "
                     f"{f.encode_seconds:.1f}s ({rate:,.1f} docs/s)")
    return "\n".join(lines)
