"""The Spark engine against the managed Neo4j with local[2]: a connector round trip, and `features --engine
spark` writing what the in-process pipeline writes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import spearmanr

from scholargraph.graph.features import FeatureOptions, run_features
from scholargraph.ingest.loader import ingest
from scholargraph.synth import SynthParams, generate
from tests.conftest import SPARK_SLOW_TIER

# The one Spark test of `make test`: the features steps (and through them the connector's reads and writes).
pytestmark = pytest.mark.long(reason="starts a local[2] SparkSession with the Neo4j connector (about 20 s)")


@pytest.fixture
def world_store(store, tmp_path):
    generate(SynthParams(papers=800, seed=5, reviewer_queries=2, citation_queries=2), tmp_path / "w")
    ingest(store, "aminer", [str(tmp_path / "w" / "corpus.aminer.jsonl")], quarantine_path=tmp_path / "q",
           checkpoint_dir=tmp_path / "c", quiet=True)
    return store


@SPARK_SLOW_TIER
def test_connector_round_trip(spark, neo4j_settings, world_store):
    from pyspark.sql import functions as F

    from scholargraph.spark import neo4j_io
    from scholargraph.spark.session import neo4j_options

    options = neo4j_options(neo4j_settings, neo4j_settings.uri)
    papers = neo4j_io.read_label(spark, options, "Paper").select("id").persist()
    ids, _ = world_store.read_nodes("Paper", [])
    assert sorted(r["id"] for r in papers.collect()) == sorted(ids)
    scores = papers.withColumn("spark_score", F.length("id").cast("double") / 100)
    assert neo4j_io.write_node_properties(scores, options, "Paper") == len(ids)
    # An id that is not in the graph creates nothing.
    ghost = spark.createDataFrame([("no-such-paper", 1.0)], "id string, spark_score double")
    neo4j_io.write_node_properties(ghost, options, "Paper")
    back = neo4j_io.read_query(spark, options, "MATCH (p:Paper) WHERE p.sparkScore IS NOT NULL "
                                               "RETURN p.id AS id, p.sparkScore AS s")
    assert {r["id"]: r["s"] for r in back.collect()} == {i: len(i) / 100 for i in ids}
    assert world_store.stats()["nodes"]["Paper"] == len(ids)
    papers.unpersist()


def _read_features(store):
    props = {"Paper": ["pagerank", "n_citation"], "Author": ["pagerank_coauthor", "pagerank_citation"],
             "Venue": ["pagerank_citation", "avg_citation"]}
    out = {}
    for label, names in props.items():
        ids, values = store.read_nodes(label, names)
        for name in names:
            out[(label, name)] = dict(zip(ids, values[name]))
    edges = {}
    for rel in ("COAUTHOR", "CITES_AUTHOR", "CITES_VENUE"):
        src, dst, w = store.read_edges(rel)
        pairs = zip(src, dst) if rel != "COAUTHOR" else (tuple(sorted(p)) for p in zip(src, dst))
        edges[rel] = dict(zip(pairs, (float(x) for x in w)))
    return out, edges


def test_spark_features_write_what_the_in_process_pipeline_writes(spark, neo4j_settings, world_store, tmp_path):
    from scholargraph.spark.features import SparkFeatureEngine
    from scholargraph.spark.session import neo4j_options

    # PageRank stops at an L1 change under n * 1e-4 instead of the default's n * 1e-6: 3-7 iterations a network
    # on this world instead of 12-19 (18 in all instead of 59), each a few Spark jobs; the same stopping rule on
    # both engines, and the default's convergence is the in-process unit tests' (tests/unit/graph/test_pagerank.py).
    options = FeatureOptions(only=("networks", "pagerank"), tol=1e-4)
    run_features(world_store, tmp_path / "m", options)
    ours, our_edges = _read_features(world_store)
    engine = SparkFeatureEngine(spark, world_store, neo4j_options(neo4j_settings, neo4j_settings.uri),
                                work_dir=tmp_path / "spark")
    report = run_features(world_store, tmp_path / "m", options, force=True, engine=engine)
    assert "(spark)" in report
    theirs, their_edges = _read_features(world_store)
    assert their_edges == our_edges
    for key, values in ours.items():
        assert set(theirs[key]) == set(values), key
        ids = sorted(values)
        a = np.array([np.nan if values[i] is None else values[i] for i in ids], dtype=float)
        b = np.array([np.nan if theirs[key][i] is None else theirs[key][i] for i in ids], dtype=float)
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12, equal_nan=True, err_msg=str(key))
        if "pagerank" in key[1]:
            assert spearmanr(a, b).statistic >= 0.9999
    assert world_store.last_run("features")["engine"] == "spark"
    # Nothing changed since: the Spark run counts as the current features, as an in-process one would.
    assert "up to date" in run_features(world_store, tmp_path / "m", options, engine=engine)
    # As of a year: suffixed scalars only.
    _, years = world_store.read_nodes("Paper", ["year"])
    year = int(np.median([y for y in years["year"] if y is not None]))
    run_features(world_store, tmp_path / "m", replace(options, as_of=year), engine=engine)
    assert sorted(p.name for p in (tmp_path / "spark").iterdir()) == ["as-of-" + str(year), "current"]
    engine.close()
    assert not any((tmp_path / "spark").iterdir())
    ids, values = world_store.read_nodes("Paper", ["year", f"pagerank_as_of_{year}"])
    dated = [(y, v) for y, v in zip(values["year"], values[f"pagerank_as_of_{year}"]) if y is not None]
    assert all((v is not None) == (y <= year) for y, v in dated)


TOPIC_PROPS = {"Paper": ["topic_vector"], "Author": ["topic_diversity", "topic_authority"]}


def _read_topics(store):
    out = {}
    for label, names in TOPIC_PROPS.items():
        ids, values = store.read_nodes(label, names)
        for name in names:
            out[(label, name)] = dict(zip(ids, values[name]))
    src, dst, w = store.read_edges("HAS_TOPIC")
    return out, dict(zip(zip(src, dst), (float(x) for x in w)))


@SPARK_SLOW_TIER
def test_spark_topics_write_what_the_in_process_pipeline_writes(spark, neo4j_settings, world_store, tmp_path):
    from scholargraph.graph.features import load_current_models
    from scholargraph.spark.features import SparkFeatureEngine
    from scholargraph.spark.session import neo4j_options

    options = FeatureOptions(only=("topics",))
    models = tmp_path / "m"
    run_features(world_store, models, options)
    ours, our_edges = _read_topics(world_store)
    engine = SparkFeatureEngine(spark, world_store, neo4j_options(neo4j_settings, neo4j_settings.uri),
                                work_dir=tmp_path / "spark")
    # The saved model reused: Spark's inference and author features are the in-process ones.
    assert "(spark)" in run_features(world_store, models, options, force=True, engine=engine)
    theirs, their_edges = _read_topics(world_store)
    assert their_edges.keys() == our_edges.keys() and our_edges
    np.testing.assert_allclose([their_edges[k] for k in our_edges], list(our_edges.values()), rtol=0, atol=1e-12)
    for key, values in ours.items():
        assert theirs[key].keys() == values.keys(), key
        ids = sorted(values)
        np.testing.assert_allclose(np.array([theirs[key][i] for i in ids], dtype=float),
                                   np.array([values[i] for i in ids], dtype=float), rtol=1e-9, atol=1e-12,
                                   err_msg=str(key))
    # Retrained on Spark: MLlib's topics become the current model, saved and loaded as an in-process one.
    run_features(world_store, models, options, retrain=True, engine=engine)
    engine.close()
    model, _ = load_current_models(models)
    assert model is not None and model.num_topics == options.num_topics
    retrained, edges = _read_topics(world_store)
    theta = np.array([v for v in retrained[("Paper", "topic_vector")].values()], dtype=float)
    assert theta.shape[1] == options.num_topics and (theta >= 0).all()
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, atol=1e-5)
    assert not np.allclose(theta, np.array([v for v in ours[("Paper", "topic_vector")].values()], dtype=float))
    assert edges and min(edges.values()) >= options.topic_threshold
    # The stored mixtures are what the saved model infers for the papers' texts.
    ids, texts = world_store.read_nodes("Paper", ["title", "abstract"])
    from scholargraph.graph.records import paper_text

    inferred = model.transform([paper_text(t, a) for t, a in zip(texts["title"], texts["abstract"])])
    stored = np.array([retrained[("Paper", "topic_vector")][i] for i in ids], dtype=float)
    np.testing.assert_allclose(stored, inferred, atol=1e-6)
    assert world_store.last_run("features")["engine"] == "spark"
