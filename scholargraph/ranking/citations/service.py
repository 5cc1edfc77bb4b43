"""Citation recommendation as a use case below the CLI: the trained Citeomatic model when there is one, the
text-only ranker when there is none (a library without enough citations to train on), and writing the
recommendations back as a scoring run. No click here: the CLI parses and prints, the jobs call these."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scholargraph.errors import NotFitted, UsageError
from scholargraph.graph.encoders import (
    ENCODERS,
    EncoderUnavailable,
    MiniLMEncoder,
    TextEncoder,
    load_encoder,
    make_encoder,
)
from scholargraph.graph.features import load_current_models
from scholargraph.graph.ids import IdResolver
from scholargraph.graph.scoring import publish_paper_scores
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.snapshot_cache import StateCache, cache_root, cached_snapshot, texts_digest
from scholargraph.graph.vectors import stored_text_vectors
from scholargraph.ranking.batch import IN_PROCESS, PartitionMapper
from scholargraph.ranking.citations.batch import recommend_drafts
from scholargraph.ranking.citations.bm25 import BM25
from scholargraph.ranking.citations.recommender import TEXT_ENCODER_DIR, CitationRecommender, Query
from scholargraph.ranking.citations.textonly import TextOnlyRecommender
from scholargraph.registry import ModelRegistry

MODEL_SUBDIR = "citations"


def registry(models_dir: Path) -> ModelRegistry:
    return ModelRegistry(models_dir, MODEL_SUBDIR, label="citation", train_hint="scholargraph citations train")


def load_meta(models_dir: Path) -> dict:
    """Where the current citation model lives, and its version."""
    return registry(models_dir).require_current()


def has_model(models_dir: Path) -> bool:
    return registry(models_dir).has_current()


def load_recommender(models_dir: Path, snapshot: GraphSnapshot) -> tuple[CitationRecommender, dict]:
    """The trained model, indexing the papers of `snapshot` (the graph as it is now), with the BM25 index of
    these texts kept from an earlier call when it fuses (cached_bm25)."""
    meta = load_meta(models_dir)
    # Trained before the model saved itself, current.json names its parts.
    rec = CitationRecommender.load(meta["path"]) if meta.get("path") else CitationRecommender.from_parts(meta)
    return rec.index_snapshot(snapshot, cached_bm25(models_dir, snapshot) if rec.needs_bm25 else None), meta


BM25_CACHE = "bm25"  # models_dir/cache/bm25/<digest of the texts and parameters>/
BM25_CACHE_VERSION = 1  # of the saved layout (BM25.save)


def cached_bm25(models_dir: Path, snapshot: GraphSnapshot, quiet: bool = True) -> BM25:
    """BM25 fitted on `snapshot`, loaded from `models_dir/cache/bm25/` when these very texts were indexed
    before (the key is a digest of the texts: indexing is tokenising every paper, seconds per 100k, and
    the same for every query)."""
    bm25 = BM25()
    key = {"texts": texts_digest(snapshot), "papers": snapshot.n_papers, "params": bm25.get_params(),
           "version": BM25_CACHE_VERSION}
    return StateCache(cache_root(models_dir) / BM25_CACHE).get(
        key, lambda: bm25.fit(snapshot, quiet=quiet), lambda model, path: model.save(path),
        lambda path: BM25.load(path, snapshot))


def pretrained_encoder(models_dir: Path):
    """The graph's current text encoder when it is a pretrained one (its vectors mean the same for any
    corpus, so they are worth fusing with BM25); None otherwise."""
    try:
        # Not through ranking.graph_models (it imports this package): the Citeomatic encoder is registered
        # here already, by the recommender's import of it.
        encoder = load_current_models(models_dir)[1]
    except (NotFitted, EncoderUnavailable):  # saved by another install, or its package is missing
        return None
    return encoder if isinstance(encoder, MiniLMEncoder) else None


def ranker_encoder(models_dir: Path, name: str) -> TextEncoder | None:
    """The pretrained encoder whose evidence NNRank reads, as `--encoder` names it: "none"; "auto" (the
    graph's current encoder when it is a pretrained one, else the one the current citation model reads, so
    that a retrain keeps it after the Citeomatic encoder became the graph's; else none); or a pretrained
    encoder's name. A name that is not one is a UsageError."""
    if name == "none":
        return None
    if name == "auto":
        encoder = pretrained_encoder(models_dir)
        if encoder is None and has_model(models_dir):
            path = Path(load_meta(models_dir).get("path") or ".") / TEXT_ENCODER_DIR
            try:
                encoder = load_encoder(path) if path.is_dir() else None
            except (NotFitted, EncoderUnavailable):
                encoder = None
        return encoder
    pretrained = sorted(n for n, cls in ENCODERS.items() if issubclass(cls, MiniLMEncoder))
    if name not in pretrained:
        raise UsageError(f"--encoder {name}: not a pretrained encoder; give auto, none or one of "
                         f"{', '.join(pretrained)}")
    try:
        return make_encoder(name).fit([])
    except EncoderUnavailable as e:
        raise UsageError(f"--encoder {name}: {e}") from None


def text_only_recommender(store, models_dir: Path, quiet: bool = True,
                          snapshot: GraphSnapshot | None = None) -> TextOnlyRecommender:
    """BM25 over the graph's texts (of `snapshot` when the caller has read one), fused with the pretrained
    encoder's vectors when `features` stored them (the few papers ingested since are encoded here; a graph
    whose vectors are of another encoder is served by BM25 alone rather than encoding the whole collection on
    a query)."""
    encoder = pretrained_encoder(models_dir)
    key = None if encoder is None else encoder.key
    if snapshot is None:
        snapshot = cached_snapshot(store, models_dir, with_text=True, quiet=quiet,
                                   with_vectors=encoder is not None, semantic_encoder=key)
    elif encoder is not None and snapshot.semantic_encoder != key:
        snapshot.load_stored_vectors(store, semantic_encoder=key, quiet=quiet)  # the papers are not read again
    snapshot.require_papers("citations")
    vectors = None
    if encoder is not None and snapshot.semantic_vectors is not None and snapshot.semantic_encoder == encoder.key:
        vectors = stored_text_vectors(snapshot, encoder)[0]
    return TextOnlyRecommender().fit(snapshot, vectors, encoder if vectors is not None else None, quiet=quiet,
                                     bm25=cached_bm25(models_dir, snapshot, quiet))


@dataclass
class Served:
    """Who answers: the trained model or the text-only ranker, the snapshot results index into, the name
    printed with the results and the version a scoring run records."""

    recommender: CitationRecommender | TextOnlyRecommender
    snapshot: GraphSnapshot
    ranker: str
    version: str


def served_recommender(store, models_dir: Path, quiet: bool = True,
                       snapshot: GraphSnapshot | None = None) -> Served:
    """The trained Citeomatic model when there is one, else the text-only ranker (never an error: a
    library without citations is still served)."""
    if has_model(models_dir):
        if snapshot is None:
            snapshot = cached_snapshot(store, models_dir, with_text=True, quiet=quiet)
        rec, meta = load_recommender(models_dir, snapshot)
        return Served(rec, snapshot, rec.name, meta["version"])
    text_only = text_only_recommender(store, models_dir, quiet, snapshot)
    return Served(text_only, text_only.snapshot_, text_only.name, f"text-only:{text_only.name}")


def served_version(models_dir: Path) -> str:
    """The version a citations scoring run is keyed by, without building anything: the trained model's, or
    the text-only ranker's (which changes when the graph's pretrained encoder does)."""
    if has_model(models_dir):
        return load_meta(models_dir)["version"]
    encoder = pretrained_encoder(models_dir)
    return "text-only:bm25" if encoder is None else f"text-only:bm25+{encoder.key}"


def recommend_citations(store, models_dir: Path, queries: list[Query], k: int, quiet: bool = True,
                        write: bool = False, snapshot: GraphSnapshot | None = None, replace_all: bool = False,
                        run_props: dict | None = None,
                        mapper: PartitionMapper = IN_PROCESS) -> tuple[list[tuple[Query, list]], Served, str]:
    """Recommendations per query, from the served ranker; with `write`, a scoring run that stores them for
    the in-graph papers and keeps the current recommendations of every other paper (`replace_all`: only
    this run's papers remain). The drafts go through `mapper` (citations/batch.py: the served recommender is
    its payload, so a Spark mapper scores them in partitions)."""
    served = served_recommender(store, models_dir, quiet, snapshot)
    snap = served.snapshot
    # A query that is an in-graph paper, under any spelling of its id (a DOI, another source id of it), is
    # that paper: excluded from its own results and, with `write`, scored. No bare-id matching: a draft's
    # id is often a label ("draft") that a bare-id match could mistake for some paper's.
    node = in_graph_ids(snap, store, [q.id for q in queries])
    exclude = [tuple({q.id, node.get(q.id, q.id)}) for q in queries]
    results = list(zip(queries, recommend_drafts(served.recommender, queries, exclude, k, mapper)))
    note = ""
    if write:
        in_graph = [(q, recs) for q, recs in results if q.id in node]
        rows = [{"source": node[q.id], "target": snap.paper_ids[r.paper_index],
                 "props": {"score": r.score, "rank": rank}}
                for q, recs in in_graph for rank, r in enumerate(recs, start=1)]
        note = publish_paper_scores(store, "citations", rows, [node[q.id] for q, _ in in_graph], served.version,
                                    queries=len(in_graph), replace_all=replace_all, run_props=run_props)
        if len(results) > len(in_graph):
            note += f"; {len(results) - len(in_graph)} queries are not in the graph"
    return results, served, note


def in_graph_ids(snapshot: GraphSnapshot, store, ids: list[str]) -> dict[str, str]:
    """Query id -> the in-graph paper it names directly (no bare-id matching), for the ids that name one."""
    resolver = IdResolver.for_snapshot(snapshot, lookup=store.lookup_ids if store is not None else None)
    res = resolver.resolve("paper", ids, bare=False)
    return {g: res.ids[g.strip()] for g in ids if g.strip() in res.ids}
