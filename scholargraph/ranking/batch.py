"""Batch scoring over partitions: one scoring function, run in process or in Spark partitions.

A model's batch scoring is written as `fn(payload, rows) -> rows`: `payload` holds everything the scoring
reads besides its input rows (trained weights, an index), `rows` is a pandas DataFrame of inputs (one row per
query, author, ...) and the result a DataFrame of output rows that depends only on the input rows given and
the payload, never on which other rows share the call. A function that gives several output rows per input
row (k reviewers of a query) adds the column SOURCE_ROW, the position of the input row in `rows`; without it
output row i belongs to input row i. Either way the mappers return the rows ordered by input row.

That makes the split into partitions invisible: the in-process mapper calls `fn` once on every row, the Spark
mapper (scholargraph.spark.engine) broadcasts the payload and runs `fn` in `mapInPandas` partitions, and both
give the same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import pandas as pd

PartitionFn = Callable[[Any, pd.DataFrame], pd.DataFrame]
SOURCE_ROW = "source_row"


def in_input_order(out: pd.DataFrame, order) -> pd.DataFrame:
    """`out` with its SOURCE_ROW (or positional) rows mapped through `order` (the global position of each
    input row) into a column `_order`, for a stable sort across partitions."""
    import numpy as np

    source = out.pop(SOURCE_ROW).to_numpy() if SOURCE_ROW in out.columns else np.arange(len(out))
    out["_order"] = np.asarray(order)[source.astype(np.int64)] if len(out) else np.zeros(0, dtype=np.int64)
    return out


class PartitionMapper(Protocol):
    """Runs a partition function over input rows; `schema` is the output's Spark DDL schema
    ("author string, topic int, score double"), which the in-process mapper does not need."""

    name: str

    def map_partitions(self, fn: PartitionFn, payload: Any, rows: pd.DataFrame, schema: str) -> pd.DataFrame:
        ...


class InProcessMapper:
    """The default: the whole input as one partition, in this process."""

    name = "in-process"

    def map_partitions(self, fn: PartitionFn, payload: Any, rows: pd.DataFrame, schema: str) -> pd.DataFrame:
        out = in_input_order(fn(payload, rows.reset_index(drop=True)), range(len(rows)))
        return out.sort_values("_order", kind="stable").drop(columns=["_order"]).reset_index(drop=True)


IN_PROCESS = InProcessMapper()
