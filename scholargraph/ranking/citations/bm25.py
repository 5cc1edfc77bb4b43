"""BM25 citation baseline (bm25s) over title + abstract, with the same self and future exclusion as NNSelect."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import bm25s
import numpy as np

from scholargraph.errors import NotFitted
from scholargraph.graph.records import normalize_doi
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot
from scholargraph.ranking.citations.text import Vocabulary, tokenize


class BM25:
    """Okapi BM25 (Lucene variant) over each paper's title and abstract, tokenised like the neural models
    (lower case, stop words and numbers dropped, no stemming). Deterministic: fitting is indexing, so there is
    nothing to save; `fit` the same snapshot again instead."""

    def __init__(self, *, k1: float = 1.2, b: float = 0.75, method: str = "lucene"):
        self.k1 = k1
        self.b = b
        self.method = method

    def get_params(self) -> dict:
        return {"k1": self.k1, "b": self.b, "method": self.method}

    def fit(self, snapshot: GraphSnapshot, as_of: int | None = None, quiet: bool = True) -> BM25:
        snap = snapshot.as_of(as_of) if as_of is not None else snapshot
        docs = [tokenize(snap.text(i)) for i in range(snap.n_papers)]
        self.snapshot_ = snap
        self.has_text_ = np.array([len(d) > 0 for d in docs], dtype=bool)
        self.years_ = np.asarray(snap.paper_year)
        self.retriever_ = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        # bm25s needs at least one token per document; empty ones get a placeholder and are masked out.
        self.retriever_.index([d if d else ["\x00"] for d in docs], show_progress=not quiet)
        self._vocab = self.retriever_.vocab_dict
        # Every indexed word with its IDF, for the terms a recommendation shares with the draft.
        self.vocabulary_ = Vocabulary.from_tokens(docs, max_size=len(self._vocab), min_df=1)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "retriever_"):
            raise NotFitted("BM25 is not fitted: call fit() first")

    # --- on disk (a cache of one snapshot's index: indexing 100k papers takes seconds) -----------------

    def save(self, directory: str | Path) -> Path:
        """The index (bm25s' own arrays, no pickles) and the vocabulary, for `load` with the same snapshot."""
        self._check_fitted()
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        self.retriever_.save(str(d / "bm25s"), show_progress=False)
        np.savez(d / "bm25.npz", allow_pickle=False, has_text=self.has_text_, df=self.vocabulary_.df)
        (d / "bm25.json").write_text(json.dumps({"params": self.get_params(), "n_docs": self.vocabulary_.n_docs,
                                                 "words": self.vocabulary_.words}), encoding="utf-8")
        return d

    @classmethod
    def load(cls, directory: str | Path, snapshot: GraphSnapshot) -> BM25:
        """What `save` wrote for `snapshot` (the caller keys the directory by its texts); ValueError when the
        files are missing, broken or of another number of papers."""
        d = Path(directory)
        try:
            meta = json.loads((d / "bm25.json").read_text(encoding="utf-8"))
            with np.load(d / "bm25.npz", allow_pickle=False) as npz:
                has_text, df = npz["has_text"], npz["df"]
            retriever = bm25s.BM25.load(str(d / "bm25s"), show_progress=False)
        except (OSError, ValueError, KeyError) as exc:
            raise ValueError(f"{d}: not a saved BM25 index ({exc})") from None
        if len(has_text) != snapshot.n_papers:
            raise ValueError(f"{d}: a BM25 index of {len(has_text)} papers, not {snapshot.n_papers}")
        model = cls(**meta["params"])
        model.snapshot_, model.has_text_, model.years_ = snapshot, has_text, np.asarray(snapshot.paper_year)
        model.retriever_, model._vocab = retriever, retriever.vocab_dict
        model.vocabulary_ = Vocabulary(meta["words"], df, meta["n_docs"])
        return model

    def scores(self, title: str | None, abstract: str | None) -> np.ndarray:
        """BM25 score of every paper for the query text (0 where nothing matches)."""
        self._check_fitted()
        tokens = [t for t in tokenize(" ".join(x for x in (title, abstract) if x)) if t in self._vocab]
        if not tokens:
            return np.zeros(len(self.years_), dtype=np.float32)
        return np.asarray(self.retriever_.get_scores(tokens), dtype=np.float32)

    def recommend(self, title: str | None, abstract: str | None, year: int | None = None,
                  exclude_ids: Iterable[str] = (), k: int = 20) -> list[tuple[int, float]]:
        """Top-k (paper index, score), never the query itself nor a paper after `year`; papers with no
        shared word are not returned."""
        s = self.scores(title, abstract)
        return top_k(s, self.allowed(year, exclude_ids) & self.has_text_ & (s > 0), k)

    def allowed(self, year: int | None = None, exclude_ids: Iterable[str] = ()) -> np.ndarray:
        """Papers a draft of `year` may cite: none after that year, never the draft itself (by any spelling
        of its id or DOI)."""
        self._check_fitted()
        return allowed_papers(self.snapshot_, self.years_, year, exclude_ids)


def allowed_papers(snapshot: GraphSnapshot, years: np.ndarray, year: int | None,
                   exclude_ids: Iterable[str]) -> np.ndarray:
    allowed = np.ones(len(years), dtype=bool)
    if year is not None and year != NO_YEAR:
        allowed &= years <= year
    index = snapshot.paper_index
    for raw in exclude_ids:
        for key in (raw, raw.lower(), normalize_doi(raw)):
            if key is not None and key in index:
                allowed[index[key]] = False
    return allowed


def top_k(scores: np.ndarray, allowed: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k best allowed (index, score), best first; ties by index."""
    cand = np.flatnonzero(allowed)
    if len(cand) > k:
        cand = cand[np.argpartition(-scores[cand], k - 1)[:k]]
    order = cand[np.lexsort((cand, -scores[cand]))]
    return [(int(i), float(scores[i])) for i in order]


__all__ = ["BM25", "allowed_papers", "top_k"]
