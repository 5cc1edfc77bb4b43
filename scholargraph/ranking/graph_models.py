"""The graph's topic model and text encoder as the models load them, with the ranking side's encoders registered."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from scholargraph.graph.encoders import TextEncoder
from scholargraph.graph.features import current_model_paths, load_models
from scholargraph.graph.topics import TopicModel
from scholargraph.ranking.citations.encoder import CiteomaticEncoder

# Encoders defined on this side register themselves when imported (graph.encoders.register_encoder); the
# graph layer cannot import them, so every ranking-side loader goes through this module.
RANKING_ENCODERS = (CiteomaticEncoder,)


def load_graph_models(models_dir: Path | None = None, paths: Mapping[str, str] | None = None
                      ) -> tuple[TopicModel | None, TextEncoder | None]:
    """(topic model, encoder) saved in the directories `paths` names ({"topics": dir, "encoder": dir}; by
    default the graph's current ones under `models_dir`); None for a kind without a directory."""
    if paths is None:
        if models_dir is None:
            raise ValueError("load_graph_models needs models_dir or paths")
        paths = current_model_paths(models_dir)
    return load_models(dict(paths))
