"""Rising stars as use cases below the CLI: train, score (and write back), evaluate, explain. No click here."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scholargraph.errors import UsageError
from scholargraph.graph.features import current_model_paths
from scholargraph.graph.ids import EXPECTED, IdResolver
from scholargraph.graph.scoring import ScoringRun
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.snapshot_cache import StateCache, cache_root, cached_snapshot, texts_digest
from scholargraph.ranking.batch import IN_PROCESS, PartitionMapper
from scholargraph.ranking.graph_models import load_graph_models
from scholargraph.ranking.rising_stars.batch import score_dataset
from scholargraph.ranking.rising_stars.features import build_dataset, fit_paper_topics
from scholargraph.ranking.rising_stars.iirl import ALL, IIRL, Explanation
from scholargraph.registry import ModelRegistry

MODEL_SUBDIR = "rising_stars"


TOPICS_CACHE = "topics"  # models_dir/cache/topics/<digest>/theta.npy: the papers' topics per texts and model


def registry(models_dir: Path) -> ModelRegistry:
    return ModelRegistry(models_dir, MODEL_SUBDIR, label="rising-star",
                         train_hint="scholargraph rising-stars train --as-of T0 --horizon D")


def _graph_topics(models_dir: Path, snapshot: GraphSnapshot) -> np.ndarray:
    """Paper topic distributions from the graph's topic model (the one behind the Topic nodes), so that
    per-topic rankings attach to those nodes. The topic model is unsupervised: it never sees a label.

    Inferring them is the slow part of `explain` (seconds on 20k papers) and depends only on the texts and
    the model, so they are kept under `models_dir/cache/topics/`, keyed by the model's directory and a digest
    of the texts: an unchanged graph loads them, a changed text or model infers again."""
    paths = {k: v for k, v in current_model_paths(models_dir).items() if k == "topics"}
    if not paths:
        raise UsageError("no topic model yet: run `scholargraph features --only topics` first")

    def infer() -> np.ndarray:
        topic_model, _ = load_graph_models(paths=paths)
        assert topic_model is not None, "a path was given"
        theta, empty = topic_model.transform([snapshot.text(i) for i in range(snapshot.n_papers)],
                                             return_empty=True)
        theta[empty] = 0.0
        return theta

    key = {"topics": paths["topics"], "texts": texts_digest(snapshot), "papers": snapshot.n_papers}
    return StateCache(cache_root(models_dir) / TOPICS_CACHE).get(
        key, infer, lambda theta, path: np.save(path / "theta.npy", theta, allow_pickle=False),
        lambda path: np.load(path / "theta.npy", allow_pickle=False))


def _feature_options(meta: dict) -> dict:
    """build_dataset's feature options for a trained model (models saved before `--features` have 18)."""
    return {"window": meta["window"], "external_features": meta.get("features", 18) == 20}


def _check_labels(snapshot: GraphSnapshot, as_of: int, horizon: int) -> None:
    if snapshot.max_year < as_of + horizon:
        raise UsageError(f"labels need papers up to {as_of + horizon}; the graph ends in {snapshot.max_year}")


def load_model(models_dir: Path) -> tuple[IIRL, dict]:
    """The current model and its registry record."""
    return registry(models_dir).load_current(IIRL.load)


def current_version(models_dir: Path) -> str:
    """The current model's version, without loading it (NotFitted before the first training)."""
    return registry(models_dir).require_current()["version"]


def train(store, models_dir: Path, as_of: int, horizon: int, window: int, n_features: int, self_citations: bool,
          quiet: bool = True) -> str:
    """Learn per-topic IIRL weights from features as of T0 and labels in (T0, T0 + D], save and publish
    the model; the summary line."""
    t0 = time.perf_counter()
    snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=quiet)
    _check_labels(snapshot, as_of, horizon)
    topics = _graph_topics(models_dir, snapshot)
    data = build_dataset(snapshot, as_of, horizon, paper_topics=topics, window=window,
                         external_features=n_features == 20, labels_without_self_citations=not self_citations)
    assert data.labels is not None, "a dataset with a horizon has labels"
    if len(data) < 10:
        raise UsageError(f"only {len(data)} young researchers as of {as_of}: choose another --as-of or --window")
    model = IIRL().fit(data.X, data.labels, topics=data.topic_groups(3), feature_names=data.feature_names)
    reg = registry(models_dir)
    version, directory = reg.claim()
    path = model.save(directory)
    meta = {"path": str(path), "version": version, "as_of": as_of, "horizon": horizon, "window": window,
            "features": n_features, "labels_self_citations": self_citations,
            "authors": len(data), "nonzero_labels": int((data.labels > 0).sum())}
    reg.publish(meta)
    return (f"trained IIRL on {len(data):,} young researchers as of {as_of} (horizon {horizon}, "
            f"{meta['nonzero_labels']:,} with citations in ({as_of}, {as_of + horizon}]), "
            f"{len(model.topics_)} topic models, {n_features} features, in {time.perf_counter() - t0:.1f}s "
            f"-> {path}")


@dataclass
class Scored:
    """What `score` did, in one line, and the rankings: (author id, topic, score, rank), the overall ranking
    (topic 'all') first, then each topic's."""

    summary: str
    rankings: list[tuple[str, str, float, int]]


def score(store, models_dir: Path, as_of: int | None, quiet: bool = True, write: bool = True,
          run_props: dict | None = None, snapshot: GraphSnapshot | None = None,
          mapper: PartitionMapper = IN_PROCESS) -> Scored:
    """Apply the trained model to features as of T (the latest year by default): the real prediction.
    `snapshot` (with texts) is the graph when the caller has read it already (a scoring-jobs run). The
    features are built here, in the driver; `mapper` applies the model to them (in process by default, or
    in Spark partitions: rising_stars/batch.py), and the ranks, global per topic, are computed here after it."""
    model, meta = load_model(models_dir)
    if snapshot is None:
        snapshot = cached_snapshot(store, models_dir, with_text=True, quiet=quiet)
    as_of = snapshot.max_year if as_of is None else as_of
    topics = _graph_topics(models_dir, snapshot)
    data = build_dataset(snapshot, as_of, None, paper_topics=topics, **_feature_options(meta))
    if not len(data):
        raise UsageError(f"no young researchers as of {as_of}")
    scored = score_dataset(model, data, mapper)
    overall = scored.overall
    order = np.argsort(-overall, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    rows: list[dict] = []
    rankings = [(data.author_ids[i], ALL, float(overall[i]), int(rank[i])) for i in order]
    for group in scored.topics:
        topic, members, scores, pct = group.topic, group.members, group.scores, group.percentiles
        local = np.argsort(-scores, kind="stable")
        for r, j in enumerate(local, start=1):
            author = data.author_ids[members[j]]
            rows.append({"source": author, "target": f"topic:{topic}",
                         "props": {"score": float(scores[j]), "rank": r, "percentile": float(pct[j]),
                                   "as_of": as_of, "horizon": meta["horizon"]}})
            rankings.append((author, f"topic:{topic}", float(scores[j]), r))
    summary = f"scored {len(data):,} young researchers as of {as_of} in {len(data.topic_groups(3))} topics"
    if write:
        props = {"model_version": meta["version"], "as_of": as_of, **(run_props or {})}
        with ScoringRun(store, "rising-stars", props) as run:
            for row in rows:
                row["props"]["run_id"] = run.run_id
            n = run.publish(rows, counts={"authors": len(data)}, node_label="Author", node_ids=data.author_ids,
                            node_props={"rising_star_score": overall.astype(float), "rising_star_rank": rank})
        summary += f"; wrote {n:,} RISING_STAR_IN edges (run {run.run_id})"
    return Scored(summary, rankings)


def evaluate(store, as_of: int, horizon: int, window: int, ks: tuple[float, ...], num_topics: int, repeats: int,
             n_features: int, plot: str | None = None, quiet: bool = True,
             log: Callable[[str], None] = lambda _msg: None) -> dict:
    """Young researchers split into train/test, features as of T, labels in (T, T+D]; topics refitted on the
    papers up to T so nothing leaks. IIRL beside every baseline, ablations, transfer. `log` hears the
    dataset's size before the (long) evaluation starts."""
    from scholargraph.ranking.rising_stars.evaluate import evaluate as run_evaluation

    snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=quiet)
    _check_labels(snapshot, as_of, horizon)
    past = snapshot.as_of(as_of)
    topics = fit_paper_topics(past, num_topics=num_topics)
    data = build_dataset(snapshot, as_of, horizon, paper_topics=topics, window=window, past=past,
                         external_features=n_features == 20)
    assert data.labels is not None, "a dataset with a horizon has labels"
    log(f"{len(data):,} young researchers as of {as_of}; {int((data.labels > 0).sum()):,} with a non-zero "
        f"citation increment in ({as_of}, {as_of + horizon}]")
    return run_evaluation(data, ks=ks, repeats=repeats, plot_path=plot)


@dataclass
class Explained:
    """An author's explanation, with what a picture of them needs."""

    explanation: Explanation
    name: str
    author_id: str
    as_of: int
    snapshot: GraphSnapshot


def explain(store, models_dir: Path, loaded: tuple[IIRL, dict], author_id: str, as_of: int | None, topic: str,
            quiet: bool = True) -> Explained:
    """Each feature's contribution to an author's score as of T (the latest year by default), by the model
    `load_model` gave (loaded before the store is opened: without a model there is nothing to connect for)."""
    model, meta = loaded
    snapshot = cached_snapshot(store, models_dir, with_text=True, quiet=quiet)
    resolved = IdResolver.for_snapshot(snapshot, lookup=store.lookup_ids).resolve("author", [author_id])
    if not resolved.given:
        raise UsageError(f"AUTHOR_ID is empty; expected {EXPECTED['author']}")
    author_id = resolved.require("AUTHOR_ID").ids[resolved.given[0]]
    as_of = snapshot.max_year if as_of is None else as_of
    topics = _graph_topics(models_dir, snapshot)
    data = build_dataset(snapshot, as_of, None, paper_topics=topics, author_ids=[author_id], **_feature_options(meta))
    topic_key = topic.replace("topic:", "")
    name = (snapshot.author_names or [None] * snapshot.n_authors)[snapshot.author_index[author_id]] or author_id
    return Explained(model.explain(data.X[0], topic_key, name=name), name, author_id, as_of, snapshot)


def draw_collaboration(explained: Explained, picture: str) -> None:
    """The author's collaboration neighbourhood up to T as a PNG, captioned with the explanation."""
    from scholargraph.graph.pictures import draw
    from scholargraph.ranking.rising_stars.picture import collaboration_graph

    e = explained.explanation
    title = (f"{explained.name}: score {e.score:.3f}, percentile {e.percentile:.0f} in topic "
             f"{e.topic}, as of {explained.as_of}")
    graph = collaboration_graph(explained.snapshot, explained.author_id, explained.as_of, title=title)
    draw(graph, picture, caption=e.sentence)
