"""Every features step on Spark, then the scoring jobs: `features --engine spark` (networks, PageRank, MLlib's
topics, text vectors on the executors), the three models trained from those features, then `jobs run --full
--engine spark` against `jobs run --full` in process: the same reviewer, rising-star and citation scores, on a
synthetic world and on the real NIPS papers."""

from __future__ import annotations

import json
import os

import pytest

from scholargraph.graph.neo4j_store import Neo4jStore
from tests.conftest import require_shared_data
from tests.integration.test_pipeline import _close, cli, cypher, env_for, visible_scores

JOBS = ("rising-stars", "reviewers", "citations")


def _reset(settings) -> None:
    with Neo4jStore(settings.uri, settings.neo4j_user, settings.neo4j_password, settings.neo4j_database) as store:
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
    env = env_for(neo4j_settings, tmp_path / "home")
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
