"""Reads and incremental writes through the Neo4j Connector for Apache Spark (its jars: spark/session.py).

Writes are keyed by the labels' unique `id` constraints: every row MATCHes its node by id (an index seek) and
sets properties, so a write never creates a node, and one of 200k rows takes seconds (without the constraint
each row would scan the label). Node writes run in parallel partitions (each node is in one row, so no two
transactions lock the same node); relationship writes MERGE between two nodes that other rows share, so they
run from one partition, as the connector's documentation advises against deadlocks.

Full rebuilds do not come through here: they are `ingest --bulk` (neo4j-admin database import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scholargraph.graph.store import DERIVED_EDGE_TYPES, NODE_LABELS, check_name, to_camel
from scholargraph.spark.session import CONNECTOR_FORMAT

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

WRITE_BATCH = 20_000  # rows per connector transaction


def read_label(spark: SparkSession, options: dict[str, str], label: str) -> DataFrame:
    """Every node of `label` with its properties (the connector's schema sampling names the columns)."""
    check_name(label, NODE_LABELS)
    return spark.read.format(CONNECTOR_FORMAT).options(**options).option("labels", label).load()


def read_query(spark: SparkSession, options: dict[str, str], query: str) -> DataFrame:
    """The rows of a read query."""
    return spark.read.format(CONNECTOR_FORMAT).options(**options).option("query", query).load()


def _write_query(df: DataFrame, options: dict[str, str], query: str) -> None:
    (df.write.format(CONNECTOR_FORMAT).options(**options).mode("Append")
     .option("query", query).option("batch.size", str(WRITE_BATCH)).save())


def _set_properties_query(df: DataFrame, label: str, key: str) -> str:
    check_name(label, NODE_LABELS)
    columns = [c for c in df.columns if c != key]
    for column in columns:
        if not column.replace("_", "").isalnum():
            raise ValueError(f"not a property name: {column!r}")
    sets = ", ".join(f"n.{to_camel(c)} = event.{c}" for c in columns)
    return f"MATCH (n:{label} {{id: event.{key}}}) SET {sets}"


def write_node_properties(df: DataFrame, options: dict[str, str], label: str, key: str = "id") -> int:
    """Set the properties in `df`'s other columns (snake_case names, stored camelCase) on the `label` nodes whose
    id is in column `key`; rows whose node does not exist are skipped. A null value removes the property.
    Returns the number of rows written."""
    query = _set_properties_query(df, label, key)
    rows = df.count()
    _write_query(df.repartition(key), options, query)
    return rows


def stream_node_properties(df: DataFrame, options: dict[str, str], label: str, key: str = "id") -> None:
    """`write_node_properties` without the count and the shuffle: each partition writes its rows in the task
    that computes them, so an interrupted job keeps the partitions that finished (each node must be in one row:
    partitions never lock the same node)."""
    _write_query(df, options, _set_properties_query(df, label, key))


def write_edges(df: DataFrame, options: dict[str, str], rel_type: str, label: str, version: str,
                dst_label: str | None = None) -> int:
    """MERGE `(:label {id: src})-[:rel_type {weight, version}]->(:dst_label {id: dst})` (dst_label: label by
    default) for the rows (src, dst, weight), as graph/neo4j_store.write_edges does; edges that this `version`
    did not write are the caller's to delete (store.delete_stale_edges). Returns the number of rows written."""
    from pyspark.sql import functions as F

    dst_label = dst_label or label
    check_name(rel_type, DERIVED_EDGE_TYPES)
    check_name(label, NODE_LABELS)
    check_name(dst_label, NODE_LABELS)
    rows = df.count()
    tagged = df.select("src", "dst", "weight", F.lit(version).alias("version")).coalesce(1)
    _write_query(tagged, options, f"MATCH (a:{label} {{id: event.src}}) MATCH (b:{dst_label} {{id: event.dst}}) "
                                  f"MERGE (a)-[r:{rel_type}]->(b) "
                                  "SET r.weight = event.weight, r.version = event.version")
    return rows
