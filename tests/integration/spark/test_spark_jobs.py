"""Every features step on Spark, then the scoring jobs: `features --engine spark` (networks, PageRank, MLlib's
topics, text vectors on the executors), the three models trained from those features, then `jobs run --full
--engine spark` against `jobs run --full` in process: the same reviewer, rising-star and citation scores, on a
synthetic world and on the real NIPS papers."""

from __future__ import annotations

import json
import os

import pytest

from scholargraph.graph.neo4j_store import Neo4jStore
from tests.conftest import SPARK_SLOW_TIER, cli_env, require_shared_data
from tests.integration.test_pipeline import _close, cli, cypher, visible_scores

JOBS = ("rising-stars", "reviewers", "citations")

pytestmark = SPARK_SLOW_TIER


def _reset(settings) -> None:
    with Neo4jStore(settings.uri, settings.neo4j_user, settings.password, settings.neo4j_database) as store:
        store.apply_schema()
        store.reset()


@pytest.fixture(params=["synthetic", "nips"])
def corpus(request, tmp_path):
    """(AMiner dump, as-of year for rising stars)."""
    if request.param == "nips":
        return require_shared_data("nips", "nips-1987-1993.aminer.jsonl"), 1990
    out = tmp_path / "synth"
    cli(dict(os.environ), "synth", "--papers", "600", "--seed", "7", "--out", str(out))
    end = json.loads((out / "world.json").read_text())["params"]["end_year"]
    return out / "corpus.aminer.jsonl", end - 3


def test_features_and_jobs_on_spark_score_as_in_process(spark, neo4j_settings, corpus, tmp_path):
    dump, as_of = corpus
    _reset(neo4j_settings)
    env = cli_env(neo4j_settings, tmp_path / "home")
    spark_args = ("--engine", "spark", "--master", "local[2]")
    try:
        cli(env, "ingest", "aminer", str(dump))
        report = cli(env, "features", *spark_args).stdout
        assert "(spark)" in report and "HAS_TOPIC" in report
        runs = cypher(neo4j_settings, "MATCH (r:ScoringRun {job: 'features'}) WHERE r.status = 'succeeded' "
                                      "RETURN r.engine AS engine, r.encoded AS encoded")
        assert [r["engine"] for r in runs] == ["spark"] and runs[0]["encoded"] > 0
        cli(env, "rising-stars", "train", "--as-of", str(as_of), "--horizon", "3")
        cli(env, "citations", "train", "--epochs", "1", "--max-triplets", "5000")
        cli(env, "reviewers", "train")
        cli(env, "jobs", "run", "--full", *spark_args)
        on_spark = visible_scores(neo4j_settings)
        cli(env, "jobs", "run", "--full")
        in_process = visible_scores(neo4j_settings)
        for job in JOBS:
            assert on_spark[job], job
            assert _close(on_spark[job], in_process[job]), job
    finally:
        _reset(neo4j_settings)


def test_features_fit_topics_on_the_same_sample_on_both_engines(spark, neo4j_settings, tmp_path):
    """`features --topic-sample N`: the fit reads the papers graph/topics.in_fit_sample draws, on Spark as in
    process (the same count and vocabulary), and the mixtures are written for every paper."""
    from scholargraph.graph.features import load_current_models
    from scholargraph.graph.topics import in_fit_sample

    out = tmp_path / "synth"
    cli(dict(os.environ), "synth", "--papers", "600", "--seed", "7", "--out", str(out))
    _reset(neo4j_settings)
    home = tmp_path / "home"
    env = cli_env(neo4j_settings, home)
    try:
        cli(env, "ingest", "aminer", str(out / "corpus.aminer.jsonl"))
        ids = [r["id"] for r in cypher(neo4j_settings, "MATCH (p:Paper) RETURN p.id AS id")]
        expected = int(in_fit_sample(ids, 200 / len(ids), seed=0).sum())
        cli(env, "features", "--only", "topics", "--topic-sample", "200", "--engine", "spark", "--master", "local[2]")
        on_spark = load_current_models(home / "models")[0]
        cli(env, "features", "--only", "topics", "--topic-sample", "200", "--retrain", "--force")
        in_process = load_current_models(home / "models")[0]
        assert on_spark.n_docs_ == in_process.n_docs_ == expected and 100 < expected < 300
        assert on_spark.dictionary_.token2id == in_process.dictionary_.token2id
        written = cypher(neo4j_settings, "MATCH (p:Paper) WHERE p.topicVector IS NOT NULL RETURN count(p) AS n")
        assert written[0]["n"] == len(ids)
    finally:
        _reset(neo4j_settings)
