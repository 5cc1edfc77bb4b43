"""The trained NNSelect embedding as the project's text encoder ("citeomatic").

`scholargraph citations train` saves one and makes it the current encoder (`models/current.json`), so that
the next `features` run writes Paper.semanticVector with it and the next `reviewers train` reads its
semantic evidence from it. It cannot be fitted from texts alone: it learns from the citation graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from scholargraph.errors import NotFitted
from scholargraph.graph.encoders import TextEncoder, register_encoder

if TYPE_CHECKING:  # NNSelect brings torch (a second of import): loaded when a saved encoder is, not before
    from scholargraph.ranking.citations.nnselect import NNSelect

SELECTOR_DIR = "nnselect"


@register_encoder
class CiteomaticEncoder(TextEncoder):
    """NNSelect's document embedding: per-field bags of learned word vectors, each field normalised, the
    fields mixed by learned weights. Papers are encoded field by field (`encode_fields`); a lone text (a
    submission pasted as one block) is read as an abstract without a title."""

    name = "citeomatic"
    VERSION = 1
    DEFAULTS = {"dim": 200}  # NNSelectParams.dim (not imported here: it brings torch)
    default_batch_size = 8192

    @classmethod
    def from_selector(cls, selector: NNSelect) -> CiteomaticEncoder:
        selector._check_fitted()
        encoder = cls(dim=selector.params.dim)
        encoder.selector_ = selector
        encoder.fitted_ = True
        return encoder

    def fit(self, texts: Sequence[str] = ()) -> CiteomaticEncoder:
        raise NotFitted("the citeomatic encoder learns from the citation graph, not from texts: "
                        "run `scholargraph citations train`, which makes it the current encoder")

    def encode_fields(self, titles: Sequence[str | None], abstracts: Sequence[str | None],
                      batch_size: int | None = None, on_progress: Callable[[int], None] | None = None) -> np.ndarray:
        self._check_fitted()
        titles, abstracts = list(titles), list(abstracts)
        bs = batch_size or self.default_batch_size
        out = np.zeros((len(titles), self.dim), dtype=np.float32)
        for s in range(0, len(titles), bs):
            out[s:s + bs] = self.selector_.encode(titles[s:s + bs], abstracts[s:s + bs])
            if on_progress is not None:
                on_progress(len(titles[s:s + bs]))
        return out

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return self.selector_.encode([None] * len(texts), texts)

    def _save_state(self, path: Path) -> dict:
        # Saved inside the encoder's directory: one copy of the weights serves both the citation
        # recommender and the encoder.
        self.selector_.save(path / SELECTOR_DIR)
        return {"selector": SELECTOR_DIR}

    def _load_state(self, path: Path, state: dict) -> None:
        from scholargraph.ranking.citations.nnselect import NNSelect

        self.selector_ = NNSelect.load(path / state.get("selector", SELECTOR_DIR))
        if self.selector_.params.dim != self.dim:
            raise NotFitted(f"{path}: the NNSelect model has dimension {self.selector_.params.dim}, not {self.dim}")


__all__ = ["CiteomaticEncoder", "SELECTOR_DIR"]
