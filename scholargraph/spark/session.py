"""The SparkSession of `--engine spark`: PySpark 3.5 with the Neo4j connector jars, fetched from Maven once.

Locally (`local[N]`, the default `local[2]`) the driver runs the executors' tasks in its own JVM; with a cluster
URL (`spark://host:7077`, `yarn`, `k8s://...`) the same job spreads over the cluster's executors, and the jars
travel with `spark.jars`. Workers run this interpreter (PYSPARK_PYTHON) so that they import the same
scholargraph, numpy and torch as the driver.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scholargraph.config import SPARK_CONNECTOR_VERSION, Settings
from scholargraph.errors import ServerError, UsageError
from scholargraph.server.local_server import fetch_maven_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CONNECTOR_FORMAT = "org.neo4j.spark.DataSource"
_CONNECTOR_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>scholargraph</groupId><artifactId>spark-connector</artifactId><version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j-connector-apache-spark_2.12</artifactId>
      <version>{version}</version></dependency>
  </dependencies>
</project>
"""
# Spark's own log4j setup prints every INFO line of the JVM; a CLI run shows warnings and errors only.
_LOG4J = """rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.spark.name = org.apache.spark
logger.spark.level = error
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = error
"""


def require_pyspark() -> None:
    """One clear line when the optional extra is not installed."""
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"the Spark engine needs PySpark and PyArrow ({exc.name} is missing): "
                         "pip install 'scholargraph[spark]'") from None
    import pyspark

    if not pyspark.__version__.startswith("3.5"):
        raise UsageError(f"the Spark engine is built for PySpark 3.5 (Scala 2.12), not {pyspark.__version__}: "
                         "pip install 'pyspark>=3.5,<3.6'")


def connector_jars(settings: Settings, quiet: bool = True) -> list[Path]:
    """The Neo4j Connector for Apache Spark and its libraries, fetched with Maven into the cache once."""
    lib = fetch_maven_jars(settings.cache / f"spark-connector-{SPARK_CONNECTOR_VERSION}",
                           _CONNECTOR_POM.format(version=SPARK_CONNECTOR_VERSION),
                           f"Neo4j Spark connector {SPARK_CONNECTOR_VERSION}", quiet, ("-DincludeScope=runtime",))
    return sorted(lib.glob("*.jar"))


def _log4j_file(settings: Settings) -> Path:
    path = settings.cache / "spark-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_LOG4J)
    return path


def under_spark_submit() -> bool:
    """Whether this process was started by `spark-submit`, whose JVM already has its master, memory and jars."""
    return bool(os.environ.get("PYSPARK_GATEWAY_PORT"))


def session_conf(settings: Settings, master: str | None, connector: bool = True, quiet: bool = True
                 ) -> dict[str, str]:
    """The SparkSession's settings. Under `spark-submit` the master, the driver's memory and JVM options and
    the jars are spark-submit's (docs/scale-out.md), unless `master` is given."""
    if under_spark_submit():
        conf = {"spark.sql.execution.arrow.pyspark.enabled": "true", "spark.sql.adaptive.enabled": "true"}
        if master:
            conf["spark.master"] = master
        return conf
    master = master or settings.spark_master
    log4j = f"-Dlog4j2.configurationFile=file:{_log4j_file(settings)}"
    conf = {
        "spark.master": master,
        "spark.driver.memory": settings.spark_driver_memory,
        "spark.driver.extraJavaOptions": log4j,
        "spark.executor.extraJavaOptions": log4j,
        "spark.local.dir": str(settings.home / "spark" / "tmp"),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.adaptive.enabled": "true",
        "spark.ui.showConsoleProgress": "false" if quiet else "true",
        "spark.ui.enabled": "false" if master.startswith("local") else "true",
        # PageRank's iterations cut their lineage with checkpoints kept on the executors.
        "spark.checkpoint.compress": "true",
    }
    if master.startswith("local"):
        # Few, large shuffle partitions: a local run has a handful of cores, not the default 200 tasks.
        conf["spark.sql.shuffle.partitions"] = str(4 * max(1, _local_cores(master)))
    if connector:
        conf["spark.jars"] = ",".join(str(p) for p in connector_jars(settings, quiet=quiet))
    return conf


def _local_cores(master: str) -> int:
    inside = master[len("local["):-1] if master.startswith("local[") else "1"
    return (os.cpu_count() or 1) if inside == "*" else int(inside.split(",")[0])


@contextmanager
def spark_session(settings: Settings, master: str | None = None, app: str = "scholargraph", connector: bool = True,
                  quiet: bool = True, extra_conf: dict[str, Any] | None = None) -> Iterator[SparkSession]:
    """A SparkSession for one command, stopped at the end (`master` defaults to settings.spark_master)."""
    require_pyspark()
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if settings.java_home:
        os.environ["JAVA_HOME"] = settings.java_home
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise ServerError("Java 17 is required for the Spark engine: install a JDK (e.g. openjdk-17-jdk)")
    builder = SparkSession.builder.appName(app)
    for key, value in {**session_conf(settings, master, connector=connector, quiet=quiet),
                       **(extra_conf or {})}.items():
        builder = builder.config(key, str(value))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.sparkContext.setCheckpointDir(str(settings.home / "spark" / "checkpoints"))
    try:
        yield spark
    finally:
        spark.stop()


def neo4j_options(settings: Settings, uri: str) -> dict[str, str]:
    """The connector's connection options for the server the store talks to."""
    options = {"url": uri}
    if settings.password:
        options.update({"authentication.type": "basic", "authentication.basic.username": settings.neo4j_user,
                        "authentication.basic.password": settings.password})
    else:
        options["authentication.type"] = "none"
    if settings.neo4j_database:
        options["database"] = settings.neo4j_database
    return options
