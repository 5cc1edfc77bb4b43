"""The Spark partition mapper: a model's batch scoring function run in `mapInPandas` partitions, its payload
(trained weights, an index) broadcast once to every executor. See scholargraph.ranking.batch."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pandas as pd

from scholargraph.ranking.batch import IN_PROCESS, PartitionFn, in_input_order

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_ROW = "_row"


class SparkMapper:
    """`map_partitions` on Spark: the input rows become a DataFrame in `partitions` slices (default: twice the
    default parallelism), each slice is scored by `fn(broadcast payload, slice)` on an executor, and the output
    rows come back ordered by input row, as the in-process mapper gives them."""

    name = "spark"

    def __init__(self, spark: SparkSession, partitions: int | None = None):
        self.spark = spark
        self.partitions = partitions
        self.last_partition_seconds: list[float] = []  # wall time of each partition of the last call

    def map_partitions(self, fn: PartitionFn, payload: Any, rows: pd.DataFrame, schema: str) -> pd.DataFrame:
        if rows.empty:
            return IN_PROCESS.map_partitions(fn, payload, rows, schema)  # nothing to distribute
        sc = self.spark.sparkContext
        shared = sc.broadcast(payload)
        n = min(self.partitions or max(1, 2 * sc.defaultParallelism), len(rows))
        numbered = rows.reset_index(drop=True).assign(**{_ROW: range(len(rows))})
        frame = self.spark.createDataFrame(numbered).repartition(n)
        timing = sc.accumulator([], _ListParam())

        def run(batches):
            for batch in batches:
                t0 = time.perf_counter()
                order = batch[_ROW].to_numpy()
                out = in_input_order(fn(shared.value, batch.drop(columns=[_ROW]).reset_index(drop=True)), order)
                timing.add([time.perf_counter() - t0])
                yield out

        try:
            result = frame.mapInPandas(run, schema=f"{schema}, _order long").toPandas()
        finally:
            shared.unpersist()
        self.last_partition_seconds = list(timing.value)
        return result.sort_values("_order", kind="stable").drop(columns=["_order"]).reset_index(drop=True)


class _ListParam:
    """Accumulates lists (Spark's AccumulatorParam protocol)."""

    def zero(self, value):
        return []

    def addInPlace(self, a, b):  # noqa: N802 (Spark's name)
        a.extend(b)
        return a
