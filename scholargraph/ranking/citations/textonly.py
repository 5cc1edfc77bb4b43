"""Citation recommendation from text alone, for libraries without enough citations to train Citeomatic on:
BM25, and BM25 fused with the graph's pretrained-encoder vectors when `features` stored some (reciprocal rank
fusion). Pure computation over a snapshot: the CLI decides when it serves."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from scholargraph.errors import NotFitted
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.progress import progress
from scholargraph.ranking.citations.bm25 import BM25, top_k
from scholargraph.ranking.citations.recommender import Query, Recommendation, reciprocal_rank_fusion, score_run
from scholargraph.ranking.citations.text import shared_terms

# Below this many papers that cite inside the collection, NNSelect has too few positives to learn an
# embedding from and NNRank too few queries (it needs 50 recent ones): `citations train` trains nothing.
MIN_CITING_PAPERS = 200
RRF_K = 60  # the fusion constant of BM25 with a pretrained encoder: Cormack et al.'s default (not tuned here)


def citing_papers(snapshot: GraphSnapshot) -> int:
    """Papers with at least one reference to another paper of the collection."""
    return int((np.diff(sp.csr_matrix(snapshot.citations).indptr) > 0).sum())


def too_few_citations(snapshot: GraphSnapshot, minimum: int = MIN_CITING_PAPERS) -> str | None:
    """Why Citeomatic cannot be trained on this graph, or None when it can."""
    citing = citing_papers(snapshot)
    if citing >= minimum:
        return None
    found = "no citations" if citing == 0 else f"only {citing:,} papers citing inside the collection"
    return (f"the graph has {found} ({snapshot.citations.nnz:,} citations among {snapshot.n_papers:,} papers; "
            f"Citeomatic needs at least {minimum:,} citing papers)")


class TextOnlyRecommender:
    """What a draft should cite, from its title and abstract and the collection's texts only.

    `fit(snapshot, vectors, encoder)`: BM25 over the snapshot's texts; with `vectors` (the papers' unit
    vectors by `encoder`, zero rows for papers without one) also the encoder's cosine, and the two rankings
    fused: each system's top `depth` papers, scored by the sum of 1 / (RRF_K + rank). Rank fusion needs no
    common scale between BM25 scores and cosines. `name` says which ranker answers ("bm25" or
    "bm25+<encoder>"), for the output."""

    def __init__(self, depth: int = 100, explain_terms: int = 5):
        self.depth = depth
        self.explain_terms = explain_terms

    def fit(self, snapshot: GraphSnapshot, vectors: np.ndarray | None = None, encoder=None,
            quiet: bool = True, bm25: BM25 | None = None) -> TextOnlyRecommender:
        """`bm25`: an index already fitted on `snapshot` (a cached one), instead of indexing it here."""
        self.bm25_ = bm25 if bm25 is not None else BM25().fit(snapshot, quiet=quiet)
        self.snapshot_ = snapshot
        self.encoder_ = encoder if vectors is not None else None
        self.vectors_ = np.asarray(vectors, dtype=np.float32) if vectors is not None else None
        if self.vectors_ is not None and self.vectors_.shape[0] != snapshot.n_papers:
            raise ValueError(f"{self.vectors_.shape[0]} vectors for {snapshot.n_papers} papers")
        self.has_vector_ = None if self.vectors_ is None else np.any(self.vectors_ != 0, axis=1)
        return self

    @property
    def encoder_name(self) -> str | None:
        return None if self.encoder_ is None else getattr(self.encoder_, "name", "encoder")

    @property
    def name(self) -> str:
        self._check_fitted()
        return "bm25" if self.encoder_ is None else f"bm25+{self.encoder_name}"

    def _check_fitted(self) -> None:
        if not hasattr(self, "bm25_"):
            raise NotFitted("the text-only recommender is not fitted: call fit() first")

    # --- the rankings -------------------------------------------------------------------------------

    def rankings(self, title: str | None, abstract: str | None, year: int | None = None,
                 exclude_ids: Iterable[str] = (), k: int = 20) -> dict[str, list[tuple[int, float]]]:
        """Each system's top k (paper index, score): "bm25", and with vectors the encoder's name and the
        fused "bm25+<encoder>"."""
        self._check_fitted()
        depth = max(k, self.depth)
        t0 = time.perf_counter()
        allowed = self.bm25_.allowed(year, tuple(exclude_ids))
        s = self.bm25_.scores(title, abstract)
        lexical = top_k(s, allowed & self.bm25_.has_text_ & (s > 0), depth)
        out = {"bm25": lexical[:k]}
        t1 = time.perf_counter()
        self.seconds_ = {"bm25": t1 - t0}  # of this call, per system (the fused one pays for both)
        if self.encoder_ is None:
            return out
        encoder_name = self.encoder_name
        assert encoder_name is not None, "a fitted encoder has a name"
        q = self.encoder_.encode_fields([title], [abstract])[0]
        if not q.any():  # nothing the encoder can read: the lexical ranking alone
            out[encoder_name] = []
            out[self.name] = lexical[:k]
            return out
        dense = top_k(self.vectors_ @ q, allowed & self.has_vector_, depth)
        out[encoder_name] = dense[:k]
        self.seconds_[encoder_name] = time.perf_counter() - t1
        self.seconds_[self.name] = time.perf_counter() - t0
        out[self.name] = reciprocal_rank_fusion([[i for i, _ in lexical], [i for i, _ in dense]], RRF_K, k)
        return out

    def recommend(self, title: str | None, abstract: str | None, year: int | None = None,
                  exclude_ids: Iterable[str] = (), k: int = 20) -> list[Recommendation]:
        """The k papers the draft should cite by the served ranker, best first, each with the highest-IDF
        words it shares with the draft; never the draft itself nor a paper after `year`."""
        hits = self.rankings(title, abstract, year, exclude_ids, k)[self.name]
        vocabulary = self.bm25_.vocabulary_
        q_words = np.unique(vocabulary.ids(" ".join(x for x in (title, abstract) if x)))
        out = []
        for i, score in hits:
            d_words = np.unique(vocabulary.ids(self.snapshot_.text(i)))
            out.append(Recommendation(i, score, tuple(shared_terms(vocabulary, q_words, d_words,
                                                                   self.explain_terms))))
        return out

    def evaluate(self, queries: Sequence[Query], qrels: Mapping[str, Mapping[str, int]],
                 ks: Sequence[int] = (20, 100), quiet: bool = True) -> dict[str, dict[str, float]]:
        """F1@ks[0], MRR and Recall@k of each system (as `rankings` names them) over the judged queries."""
        depth = max(ks)
        ids = self.snapshot_.paper_ids
        runs: dict[str, dict[str, list[str]]] = {}
        seconds: dict[str, float] = {}
        judged = [q for q in queries if qrels.get(q.id)]
        for q in progress(judged, desc="evaluate", unit="query", quiet=quiet):
            for system, hits in self.rankings(q.title, q.abstract, q.year, (q.id,), depth).items():
                runs.setdefault(system, {})[q.id] = [ids[i] for i, _ in hits]
            for system, t in self.seconds_.items():
                seconds[system] = seconds.get(system, 0.0) + t
        judged_qrels = {q.id: qrels[q.id] for q in judged}
        out = {name: score_run(run, judged_qrels, ks) for name, run in runs.items()}
        for name in out:
            out[name]["ms_per_query"] = 1000.0 * seconds.get(name, 0.0) / max(len(judged), 1)
        return out


__all__ = ["MIN_CITING_PAPERS", "TextOnlyRecommender", "citing_papers", "too_few_citations"]
