"""IIRL batch scoring through a partition mapper: in process it is exactly the model's own scoring; in Spark
partitions (SparkMapper) the same scores and ranks; the service publishes the same edges either way."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pandas as pd
import pytest

from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.ingest.offline import snapshot_from_files
from scholargraph.ranking.batch import IN_PROCESS
from scholargraph.ranking.rising_stars import service
from scholargraph.ranking.rising_stars.batch import (
    AUTHOR,
    SCHEMA,
    TOPIC,
    feature_columns,
    score_dataset,
    score_partition,
    scoring_rows,
)
from scholargraph.ranking.rising_stars.features import build_dataset
from scholargraph.ranking.rising_stars.iirl import ALL, IIRL
from scholargraph.synth import SynthParams, generate
from tests.conftest import SPARK_SLOW_TIER

AS_OF, HORIZON, WINDOW = 2019, 4, 4
# Small topics (fewer than min_authors) fall back to the `all` model: both kinds of topic are scored.
FAST = {"max_epochs": 10, "pairs_per_epoch": 5000, "l2_grid": (), "min_authors": 140}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A synthetic world as of 2019, random paper topics (5), an IIRL trained on its young researchers."""
    out = tmp_path_factory.mktemp("rs-batch-world")
    generate(SynthParams(papers=3000, seed=3, as_of=AS_OF, horizon=HORIZON, window=WINDOW, reviewer_queries=0,
                         citation_queries=0), out)
    snapshot = snapshot_from_files("aminer", [str(out / "corpus.aminer.jsonl")], with_text=False)
    topics = np.random.default_rng(0).dirichlet(np.full(5, 0.3), size=snapshot.n_papers)
    data = build_dataset(snapshot, AS_OF, HORIZON, paper_topics=topics, window=WINDOW)
    model = IIRL(**FAST).fit(data.X, data.labels, topics=data.topic_groups(3), feature_names=data.feature_names)
    assert len(data) > 100 and model.fallback_ and len(model.fallback_) < 5
    return snapshot, topics, data, model


def ranks(scores: np.ndarray) -> np.ndarray:
    """1 for the best, as the service ranks (stable on ties)."""
    order = np.argsort(-scores, kind="stable")
    out = np.empty(len(order), dtype=np.int64)
    out[order] = np.arange(1, len(order) + 1)
    return out


def test_in_process_is_exactly_the_models_scoring(world):
    _, _, data, model = world
    scored = score_dataset(model, data, IN_PROCESS)
    np.testing.assert_array_equal(scored.overall, model.score(data.X, ALL))
    groups = {t: m for t, m in data.topic_groups(3).items() if len(m)}
    assert [g.topic for g in scored.topics] == sorted(groups, key=int)
    for g in scored.topics:
        np.testing.assert_array_equal(g.members, groups[g.topic])
        direct = model.score(data.X[g.members], g.topic)
        np.testing.assert_array_equal(g.scores, direct)
        np.testing.assert_array_equal(g.percentiles, model.percentile(direct, g.topic))


def test_rows_and_a_pickled_model_score_row_by_row(world):
    """The rows carry the features bit for bit; the model pickles (the Spark payload), and any slice of
    the rows scores as the whole batch does: scores and percentiles are row-local."""
    _, _, data, model = world
    rows = scoring_rows(data)
    groups = [m for m in data.topic_groups(3).values() if len(m)]
    assert len(rows) == len(data) + sum(len(m) for m in groups)
    assert list(rows.columns) == [AUTHOR, TOPIC, *feature_columns(len(data.feature_names))]
    np.testing.assert_array_equal(rows[feature_columns(18)].to_numpy()[:len(data)], data.X)
    assert rows[AUTHOR].iloc[:len(data)].tolist() == data.author_ids and set(rows[TOPIC].iloc[:len(data)]) == {ALL}
    whole = score_partition(model, rows)
    copy = pickle.loads(pickle.dumps(model))
    shuffled = np.random.default_rng(1).permutation(len(rows))
    parts = [score_partition(copy, rows.iloc[ix].reset_index(drop=True)) for ix in np.array_split(shuffled, 7)]
    again = pd.concat(parts).to_numpy()[np.argsort(np.concatenate(np.array_split(shuffled, 7)))]
    np.testing.assert_allclose(again, whole.to_numpy(), rtol=0, atol=1e-12)


def test_empty_input_in_process():
    model = IIRL()
    out = score_partition(model, pd.DataFrame({AUTHOR: [], TOPIC: [], **{c: [] for c in feature_columns(18)}}))
    assert list(out.columns) == ["score", "percentile"] and out.empty


@SPARK_SLOW_TIER
def test_spark_partitions_give_the_same_scores_and_ranks(world, spark):
    from scholargraph.spark.engine import SparkMapper

    _, _, data, model = world
    local = score_dataset(model, data, IN_PROCESS)
    mapper = SparkMapper(spark, partitions=4)
    remote = score_dataset(model, data, mapper)
    assert len(mapper.last_partition_seconds) == 4
    print(f"\nper-partition seconds ({len(scoring_rows(data))} rows): "
          + ", ".join(f"{s:.4f}" for s in mapper.last_partition_seconds))
    np.testing.assert_allclose(remote.overall, local.overall, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(ranks(remote.overall), ranks(local.overall))
    assert [g.topic for g in remote.topics] == [g.topic for g in local.topics]
    for r, g in zip(remote.topics, local.topics):
        np.testing.assert_array_equal(r.members, g.members)
        np.testing.assert_allclose(r.scores, g.scores, rtol=0, atol=1e-9)
        np.testing.assert_allclose(r.percentiles, g.percentiles, rtol=0, atol=1e-9)
        np.testing.assert_array_equal(ranks(r.scores), ranks(g.scores))


@SPARK_SLOW_TIER
def test_spark_empty_input(spark):
    from scholargraph.spark.engine import SparkMapper

    rows = pd.DataFrame({AUTHOR: [], TOPIC: [], **{c: [] for c in feature_columns(18)}})
    out = SparkMapper(spark).map_partitions(score_partition, IIRL(), rows, SCHEMA)
    assert list(out.columns) == ["score", "percentile"] and out.empty
    assert IN_PROCESS.map_partitions(score_partition, IIRL(), rows, SCHEMA).equals(out)


# --- the service: the same edges, node scores and summary line with either mapper -------------------------


class RecordingStore(InMemoryStore):
    """Keeps what a scoring run writes (the in-memory store drops edges whose nodes it does not hold)."""

    def write_scores(self, rel_type, rows, run_id, batch_size=10_000):
        self.edges = [(rel_type, dict(r, props={k: v for k, v in r["props"].items() if k != "run_id"}))
                      for r in rows]
        return super().write_scores(rel_type, [r for _, r in self.edges], run_id, batch_size)

    def write_node_properties(self, label, ids, props, batch_size=10_000):
        self.nodes = (label, list(ids), {k: np.asarray(v) for k, v in props.items()})
        return super().write_node_properties(label, ids, props, batch_size)


def reference_edges(model, data):
    """The edges, node scores and rankings of the single-process scoring before the mapper: the model
    applied in the driver, topic by topic."""
    X = data.X
    overall = model.score(X, ALL)
    rank = ranks(overall)
    edges, rankings = [], [(data.author_ids[i], ALL, float(overall[i]), int(rank[i]))
                           for i in np.argsort(-overall, kind="stable")]
    for topic, members in sorted(data.topic_groups(3).items(), key=lambda kv: int(kv[0])):
        if not len(members):
            continue
        scores = model.score(X[members], topic)
        pct = model.percentile(scores, topic)
        for r, j in enumerate(np.argsort(-scores, kind="stable"), start=1):
            author = data.author_ids[members[j]]
            edges.append(("RISING_STAR_IN", {"source": author, "target": f"topic:{topic}",
                                             "props": {"score": float(scores[j]), "rank": r,
                                                       "percentile": float(pct[j]), "as_of": AS_OF,
                                                       "horizon": HORIZON}}))
            rankings.append((author, f"topic:{topic}", float(scores[j]), r))
    return edges, overall, rank, rankings


@pytest.fixture(scope="module")
def published(world, tmp_path_factory):
    """The world's model saved and published in a registry, as `rising-stars train` leaves it."""
    _, _, data, model = world
    models = tmp_path_factory.mktemp("rs-batch-models")
    reg = service.registry(models)
    version, directory = reg.claim()
    path = model.save(directory)
    reg.publish({"path": str(path), "version": version, "as_of": AS_OF, "horizon": HORIZON, "window": WINDOW,
                 "features": 18, "labels_self_citations": False, "authors": len(data), "nonzero_labels": 0})
    return models


def score_with(world, published, monkeypatch, mapper=None):
    snapshot, topics, _, _ = world
    monkeypatch.setattr(service, "_graph_topics", lambda models_dir, snap: topics)
    store = RecordingStore()
    extra = {} if mapper is None else {"mapper": mapper}
    done = service.score(store, published, AS_OF, snapshot=snapshot, **extra)
    return store, done


def test_service_default_mapper_publishes_what_it_did_before(world, published, monkeypatch):
    _, _, data, _ = world
    model = IIRL.load(service.registry(published).require_current()["path"])
    edges, overall, rank, rankings = reference_edges(model, data)
    store, done = score_with(world, published, monkeypatch)
    assert store.edges == edges and done.rankings == rankings
    label, ids, props = store.nodes
    assert label == "Author" and ids == data.author_ids
    np.testing.assert_array_equal(props["rising_star_score"], overall)
    np.testing.assert_array_equal(props["rising_star_rank"], rank)
    n_topics = len(data.topic_groups(3))
    assert re.fullmatch(rf"scored {len(data):,} young researchers as of {AS_OF} in {n_topics} topics; "
                        rf"wrote {len(edges):,} RISING_STAR_IN edges \(run rising-stars-\d+T\d+\)", done.summary)


@SPARK_SLOW_TIER
def test_service_with_spark_publishes_the_same(world, published, monkeypatch, spark):
    from scholargraph.spark.engine import SparkMapper

    local_store, local = score_with(world, published, monkeypatch)
    spark_store, remote = score_with(world, published, monkeypatch, SparkMapper(spark))

    def without_scores(edges):
        return [(rel, {**e, "props": {k: v for k, v in e["props"].items() if k not in ("score", "percentile")}})
                for rel, e in edges]

    assert without_scores(spark_store.edges) == without_scores(local_store.edges)
    for key in ("score", "percentile"):
        np.testing.assert_allclose([e["props"][key] for _, e in spark_store.edges],
                                   [e["props"][key] for _, e in local_store.edges], rtol=0, atol=1e-9)
    np.testing.assert_allclose(spark_store.nodes[2]["rising_star_score"], local_store.nodes[2]["rising_star_score"],
                               rtol=0, atol=1e-9)
    np.testing.assert_array_equal(spark_store.nodes[2]["rising_star_rank"], local_store.nodes[2]["rising_star_rank"])
    assert [r[:2] + r[3:] for r in remote.rankings] == [r[:2] + r[3:] for r in local.rankings]
    assert re.sub(r"\(run .*\)", "", remote.summary) == re.sub(r"\(run .*\)", "", local.summary)
