"""Test worlds for the Spark engine: a synthetic world in the in-memory store, its snapshot and its export."""

from __future__ import annotations

from pathlib import Path

from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.parquet import export_parquet
from scholargraph.graph.snapshot import GraphSnapshot


def synthetic_export(out: Path, papers: int, seed: int) -> tuple[GraphSnapshot, Path]:
    """A synthetic world ingested into an InMemoryStore: its snapshot (as `features` reads it) and its Parquet
    export (what Spark reads)."""
    from scholargraph.ingest.loader import ingest
    from scholargraph.synth import SynthParams, generate

    generate(SynthParams(papers=papers, seed=seed, reviewer_queries=0, citation_queries=0), out / "world")
    store = InMemoryStore()
    ingest(store, "aminer", [str(out / "world" / "corpus.aminer.jsonl")], quarantine_path=out / "q.jsonl",
           checkpoint_dir=out / "checkpoints", quiet=True)
    export_parquet(store, out / "snapshot", with_text=False)
    return GraphSnapshot.from_store(store), out / "snapshot"
