"""The reviewer model as a use case below the CLI: where the trained model lives, how its evidence index is
built from the graph, and the id files the commands share (no click here: the CLI parses and prints)."""

from __future__ import annotations

import json
from pathlib import Path

from scholargraph.errors import NotFitted
from scholargraph.graph.features import current_model_paths, load_models
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.vectors import stored_text_vectors
from scholargraph.ranking.reviewers.evidence import EvidenceIndex
from scholargraph.ranking.reviewers.reco_rank import RecoRank

MODEL_SUBDIR = "reviewers"


def _current(models_dir: Path) -> Path:
    return models_dir / MODEL_SUBDIR / "current.json"


def build_index(store, models_dir: Path, quiet: bool, models: dict[str, str] | None = None) -> EvidenceIndex:
    """Evidence over the graph as it is now, with the encoder and topic model saved in `models`
    ({"topics": dir, "encoder": dir}; by default the graph's current ones, when saved)."""
    topic_model, encoder = load_models(current_model_paths(models_dir) if models is None else models)
    key = encoder.key if encoder is not None and getattr(encoder, "fitted_", False) else None
    snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=quiet, with_vectors=key is not None,
                                        semantic_encoder=key)
    # The vectors `features` stored with this encoder are read, not recomputed; only papers without one
    # (ingested since) are encoded here.
    text = stored_text_vectors(snapshot, encoder)[0] if key is not None else None
    return EvidenceIndex.build(snapshot, encoder=encoder, topic_model=topic_model, text_vectors=text)


def index_for_model(store, models_dir: Path, meta: dict, quiet: bool) -> EvidenceIndex:
    """Evidence read with the encoder and topic model the reviewer model was trained with (a later
    `citations train` or `features --retrain` changes the graph's current ones, not this model's inputs)."""
    return build_index(store, models_dir, quiet, models=meta.get("evidence_models"))


def load_model(models_dir: Path) -> tuple[RecoRank, dict]:
    current = _current(models_dir)
    if not current.exists():
        raise NotFitted("no reviewer model: run `scholargraph reviewers train` first")
    meta = json.loads(current.read_text())
    return RecoRank.load(meta["path"]), meta


def read_ids(path: str) -> list[str]:
    """Ids as a file gives them, one per line (its first field; blank lines and `#` comments skipped).
    They are user ids: resolve them (graph.ids.IdResolver) before looking them up."""
    return [line.split()[0] for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
