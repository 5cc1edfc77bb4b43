"""Text vectors on Spark: the encoder runs in `mapInPandas` partitions over the Parquet snapshot's papers, and
each partition writes its vectors back through the connector as it finishes.

- **The same chunks as in process.** The papers to encode (those without a current vector: the incremental
  rule of graph/features.py) are numbered in the in-process order and cut into the same chunks of
  `--commit-every` papers; a chunk is never split between partitions, and each partition encodes its chunks
  one by one with the same `encode_fields` call. So the vectors are those of an in-process run, even for an
  encoder whose output depends on the batch (int8 activations are scaled per batch: docs/vectors.md).
- **One model load per executor process.** The fitted encoder is saved once to a directory every executor
  reads (`work_dir`: shared storage on a cluster), and a Python worker loads it the first time one of its
  tasks needs it, then keeps it for the next tasks (Spark reuses its Python workers).
- **Written as computed.** A partition's rows go to Neo4j in the same task that encoded them (no shuffle
  between them), so a job interrupted halfway keeps the partitions that finished, and the same command
  encodes only the rest.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from scholargraph.graph.encoders import TextEncoder
from scholargraph.graph.features import text_vector_properties
from scholargraph.graph.records import paper_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SCHEMA = "id string, semantic_vector array<float>, semantic_encoder string, semantic_text_hash string"

_LOADED: dict[str, TextEncoder] = {}  # per Python worker: directory -> the encoder loaded from it


def loaded_encoder(directory: str) -> TextEncoder:
    """The encoder saved in `directory`, loaded once per process (plug-in encoders registered first)."""
    encoder = _LOADED.get(directory)
    if encoder is None:
        from scholargraph.ranking.graph_models import load_graph_models

        encoder = load_graph_models(paths={"encoder": directory})[1]
        assert encoder is not None, "a directory was given"
        _LOADED[directory] = encoder
    return encoder


def chunk_rows(encoder: TextEncoder, chunk: pd.DataFrame) -> pd.DataFrame:
    """The written rows of one chunk (columns id, title, abstract; in encoding order): its vectors, stamped
    with the encoder's key and the hash of the text each was encoded from, as graph/features.py stamps them;
    a text that gives no evidence gets no vector (null), not a zero vector."""
    titles = [t if isinstance(t, str) else None for t in chunk["title"]]
    abstracts = [a if isinstance(a, str) else None for a in chunk["abstract"]]
    vectors = np.asarray(encoder.encode_fields(titles, abstracts), dtype=np.float32)
    texts = [paper_text(t, a) for t, a in zip(titles, abstracts)]
    return pd.DataFrame({"id": chunk["id"].tolist(), **text_vector_properties(encoder.key, texts, vectors)})


def encode_partition(directory: str) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """mapInPandas function: the partition's rows (id, title, abstract, chunk, pos) gathered, then encoded chunk
    by chunk in position order (Arrow may cut a partition into batches anywhere: a chunk is whole only once
    the partition is read)."""
    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        frames = list(batches)
        if not frames:
            return
        rows = pd.concat(frames, ignore_index=True).sort_values("pos", kind="stable")
        encoder = loaded_encoder(directory)
        for _, chunk in rows.groupby("chunk", sort=True):
            yield chunk_rows(encoder, chunk)

    return run


def encode_to_neo4j(spark: SparkSession, papers_path: Path, encoder: TextEncoder, ids: list[str],
                    connector_options: dict[str, str], work_dir: Path, chunk: int,
                    log: Callable[[str], None] = lambda _: None) -> dict[str, float]:
    """Encode the papers `ids` (in this order: chunk k is ids[k*chunk:(k+1)*chunk]) of the Parquet `papers`
    table on Spark and write their vectors through the connector. Returns {"papers", "partitions",
    "seconds", "encode_core_seconds"} (the last: the partitions' own wall time, summed over executors)."""
    from pyspark.sql import functions as F

    from scholargraph.spark import neo4j_io
    from scholargraph.spark.engine import _ListParam

    if not ids:
        return {"papers": 0, "partitions": 0, "seconds": 0.0, "encode_core_seconds": 0.0}
    work_dir.mkdir(parents=True, exist_ok=True)
    saved = Path(tempfile.mkdtemp(dir=work_dir, prefix="encoder-"))
    sc = spark.sparkContext
    try:
        # An executor runs as many tasks at once as it has cores: each task's encoder gets the task's cores
        # (spark.task.cpus), not every core of the machine (2 tasks x 2 ONNX threads on 2 cores ran 2.8x
        # slower per paper than one task alone). Thread counts are not part of the encoder's key.
        threads = encoder.hyperparameters.get("num_threads", False)
        if threads is not False:
            encoder.hyperparameters["num_threads"] = int(spark.conf.get("spark.task.cpus", "1"))
        try:
            encoder.save(saved)
        finally:
            if threads is not False:
                encoder.hyperparameters["num_threads"] = threads
        t0 = time.perf_counter()
        order = spark.createDataFrame(pd.DataFrame({"id": ids, "pos": np.arange(len(ids), dtype=np.int64)}))
        n_chunks = -(-len(ids) // chunk)
        partitions = max(1, min(n_chunks, 4 * sc.defaultParallelism))
        frame = (spark.read.parquet(str(papers_path)).select("id", "title", "abstract").dropDuplicates(["id"])
                 .join(order, "id").withColumn("chunk", (F.col("pos") / F.lit(chunk)).cast("long"))
                 .repartition(partitions, "chunk"))
        timing = sc.accumulator([], _ListParam())
        encode = encode_partition(str(saved))

        def timed(batches):
            start = time.perf_counter()
            yield from encode(batches)
            timing.add([time.perf_counter() - start])

        neo4j_io.stream_node_properties(frame.mapInPandas(timed, schema=SCHEMA), connector_options, "Paper")
        seconds = time.perf_counter() - t0
        log(f"text vectors (spark): {len(ids):,} papers in {partitions} partitions, {seconds:.1f}s "
            f"({len(ids) / seconds if seconds > 0 else 0.0:,.1f} docs/s)")
        return {"papers": len(ids), "partitions": partitions, "seconds": seconds,
                "encode_core_seconds": float(sum(timing.value))}
    finally:
        shutil.rmtree(saved, ignore_errors=True)
