"""The Spark partition mapper gives what the in-process one gives: same rows, same order, any partitioning."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scholargraph.config import Settings
from scholargraph.ranking.batch import IN_PROCESS, SOURCE_ROW
from tests.conftest import SPARK_SLOW_TIER


@pytest.fixture
def functions_by_value():
    """The partition functions below travel to the Python workers by value: they cannot import a test module."""
    import sys

    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def two_per_query(payload, rows: pd.DataFrame) -> pd.DataFrame:
    out = [{"query": q, "k": k, "score": x * payload["weight"] - k, SOURCE_ROW: i}
           for i, (q, x) in enumerate(zip(rows["query"], rows["x"])) for k in range(2)]
    return pd.DataFrame(out, columns=["query", "k", "score", SOURCE_ROW])


def one_per_row(payload, rows: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"score": rows["x"].to_numpy() + payload})


def rows(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    return pd.DataFrame({"query": [f"q{i}" for i in range(n)], "x": rng.normal(size=n)})


@SPARK_SLOW_TIER
@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_spark_partitions_give_the_in_process_rows(spark, functions_by_value, partitions):
    from scholargraph.spark.engine import SparkMapper

    mapper = SparkMapper(spark, partitions=partitions)
    given = rows(40)
    remote = mapper.map_partitions(two_per_query, {"weight": 3.0}, given, "query string, k long, score double")
    local = IN_PROCESS.map_partitions(two_per_query, {"weight": 3.0}, given, "")
    pd.testing.assert_frame_equal(remote, local, check_dtype=False)
    assert list(remote["query"][:4]) == ["q0", "q0", "q1", "q1"]
    assert len(mapper.last_partition_seconds) == partitions
    positional = mapper.map_partitions(one_per_row, 1.5, given, "score double")
    np.testing.assert_array_equal(positional["score"].to_numpy(), given["x"].to_numpy() + 1.5)


@SPARK_SLOW_TIER
def test_empty_input_needs_no_spark_job(spark, functions_by_value):
    from scholargraph.spark.engine import SparkMapper

    schema = "query string, k long, score double"
    out = SparkMapper(spark).map_partitions(two_per_query, {"weight": 1.0}, rows(0), schema)
    assert list(out.columns) == ["query", "k", "score"] and out.empty


def test_session_conf_for_local_and_cluster_masters(tmp_path):
    from scholargraph.spark.session import neo4j_options, session_conf

    settings = Settings(home=tmp_path / "home", cache=tmp_path / "cache", spark_driver_memory="3g")
    local = session_conf(settings, "local[3]", connector=False)
    assert local["spark.master"] == "local[3]" and local["spark.sql.shuffle.partitions"] == "12"
    assert local["spark.driver.memory"] == "3g" and local["spark.ui.enabled"] == "false"
    assert "spark.jars" not in local
    cluster = session_conf(settings, "spark://head:7077", connector=False)
    assert "spark.sql.shuffle.partitions" not in cluster and cluster["spark.ui.enabled"] == "true"
    assert neo4j_options(settings, "bolt://h:7687") == {"url": "bolt://h:7687", "authentication.type": "none"}
    secured = neo4j_options(Settings(neo4j_password="pw", neo4j_database="sg"), "bolt://h:7687")
    assert secured["authentication.basic.password"] == "pw" and secured["database"] == "sg"


def test_a_missing_pyspark_is_one_clear_line(monkeypatch):
    import builtins

    from scholargraph.errors import UsageError
    from scholargraph.spark.session import require_pyspark

    real = builtins.__import__

    def no_pyspark(name, *args, **kwargs):
        if name == "pyspark":
            raise ImportError("No module named 'pyspark'", name="pyspark")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyspark)
    with pytest.raises(UsageError, match=r"pip install 'scholargraph\[spark\]'"):
        require_pyspark()
