"""A synthetic world goes through `scholargraph ingest aminer|openalex` into the real Neo4j cleanly."""

from __future__ import annotations

import pytest

from scholargraph.ingest.loader import ingest
from scholargraph.ranking.metrics import read_qrels
from scholargraph.synth import SynthParams, generate
from scholargraph.synth.params import CORPUS_FILES


@pytest.mark.parametrize("fmt", ["aminer", "openalex"])
def test_synthetic_world_ingests_cleanly(store, tmp_path, fmt):
    out = tmp_path / "world"
    stats = generate(SynthParams(papers=3000, seed=11, fmt=fmt, reviewer_queries=5, citation_queries=10), out)
    summary = ingest(store, fmt, [str(out / CORPUS_FILES[fmt])], quarantine_path=tmp_path / "q.jsonl",
                     checkpoint_dir=tmp_path / "ckpt", quiet=True)
    assert summary.read == 3000 and summary.quarantined == 0 and summary.dropped == 0
    graph = store.stats()
    assert graph["nodes"]["Paper"] - graph["stubs"]["Paper"] == 3000
    assert graph["stubs"]["Paper"] > 0  # references to works outside the corpus
    assert graph["relationships"]["CITES"] == summary.citations > 20_000
    ids, _ = store.read_nodes("Paper")
    authors, _ = store.read_nodes("Author")
    known_papers, known_authors = set(ids), set(authors)
    # Every ground-truth id names a node of the ingested graph.
    for qid, rel in read_qrels(str(out / "citations.qrels")).items():
        assert set(rel) <= known_papers, qid
    for qid, rel in read_qrels(str(out / "reviewers.qrels")).items():
        assert set(rel) <= known_authors, qid
    assert stats  # the generator reports its statistics
