"""Citation recommendation: NNSelect candidates re-ranked by NNRank, explanations, and the evaluation harness."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from scholargraph.errors import NotFitted
from scholargraph.graph.encoders import TextEncoder, load_encoder
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot
from scholargraph.progress import progress
from scholargraph.ranking import metrics
from scholargraph.ranking.citations.bm25 import BM25
from scholargraph.ranking.citations.encoder import SELECTOR_DIR, CiteomaticEncoder
from scholargraph.ranking.citations.nnrank import NNRank
from scholargraph.ranking.citations.nnselect import NNSelect
from scholargraph.ranking.citations.text import Bags, shared_terms
from scholargraph.registry import read_config, write_config
from scholargraph.user_files import Warn, no_warning, read_jsonl


class Recommendation(NamedTuple):
    """One suggested citation: index into the selector's snapshot, score (higher is better), and the key
    terms the draft shares with it (highest IDF first)."""

    paper_index: int
    score: float
    explanation: tuple[str, ...]


@dataclass(frozen=True)
class Query:
    """A draft to recommend citations for: its id (excluded from its own results, DOI in any spelling)."""

    id: str
    title: str | None
    abstract: str | None
    year: int | None = None


def read_queries(path: str | Path, what: str = "--queries", warn: Warn = no_warning) -> list[Query]:
    """JSON lines {id, title, abstract, year} (the synthetic world's and ACM-CR's query files); a bad line is a
    UsageError naming the file and the line, a repeated draft is kept once (user_files.read_jsonl)."""
    return [Query(str(d["id"]), d.get("title"), d.get("abstract"), d.get("year"))
            for d in read_jsonl(path, what, warn=warn)]


FUSION_DEPTH = 200  # each fused ranking contributes its top this many papers
# Fusion constants `fit` chooses among (rank r adds 1 / (k + r)); None: the re-ranked list alone. Small k
# trusts the top of each list, 60 is Cormack et al.'s default.
FUSION_CHOICES: tuple[int | None, ...] = (None, 5, 10, 20, 60)
RRF_K = 10
VALIDATION_QUERIES = 300  # the last year's citing papers `fit` holds out to choose the fusion on
MIN_VALIDATION_QUERIES = 50  # fewer: no choice is made, the re-ranked list serves alone


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], k: int = RRF_K,
                           depth: int | None = None) -> list[tuple[int, float]]:
    """Papers of several rankings (best first), scored by the sum over rankings of 1 / (k + rank) (Cormack
    et al. 2009); best first, ties by paper index. No common scale between the rankers' scores is needed."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, i in enumerate(ranking, start=1):
            fused[int(i)] = fused.get(int(i), 0.0) + 1.0 / (k + rank)
    out = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
    return out if depth is None else out[:depth]


@dataclass(frozen=True)
class RecommenderParams:
    """How `fit` composes the parts (NNSelect and NNRank keep their own hyperparameters)."""

    # The ranker's queries: the citing papers of the last this many years (0: of any year; see fit).
    ranker_years: int = 0
    min_ranker_queries: int = 50
    # Fusion with BM25: None never fuses, an int always fuses with that constant, "auto" chooses on
    # held-out drafts (see fit).
    fusion: int | str | None = "auto"
    validation_queries: int = VALIDATION_QUERIES
    # Where "auto" chooses the fusion: "previous-year" (a model of the graph as of its last year but one,
    # the last year's citing papers as its drafts: a draft as the served model will see one), or "held-out"
    # (the last year's citing papers held out of this model's own training; see fit).
    validation: str = "previous-year"
    explain_terms: int = 5
    # The previous-year pipeline trains in a thread beside this one when both train on one torch thread and
    # the machine has two cores: the same model (each training keeps its own order of operations and its own
    # random generators), 1.18x faster on hep-th as of 1994 and 1.41x as of 1999 (the GIL holds it back: much
    # of a step is Python).
    # Two torch threads instead were no faster and not reproducible (issue 49, docs/citations.md). False: one
    # after the other.
    concurrent_validation: bool = True


MODEL_NAME, VERSION = "citation-recommender", 1
ENCODER_DIR, RANKER_DIR = "encoder", "nnrank"
# The pretrained encoder NNRank reads (use_encoder), and its vectors of the papers the model last indexed:
# a graph's stored vectors are rewritten by the next `features` run with the Citeomatic encoder, so the model
# keeps its own, and only papers added since are encoded when it is loaded.
TEXT_ENCODER_DIR, TEXT_VECTORS_FILE = "text-encoder", "text-vectors.npz"


def encoder_vectors(snapshot: GraphSnapshot, encoder: TextEncoder, known: Mapping[str, np.ndarray] | None = None,
                    quiet: bool = True) -> tuple[np.ndarray, int]:
    """`encoder`'s vectors of every paper of `snapshot` (zero rows: no text): the snapshot's own when they
    are this encoder's (`features` stored them), else `known` ones by paper id, else encoded here (with a
    progress bar). Returns (vectors, how many were encoded)."""
    n = snapshot.n_papers
    out = np.zeros((n, encoder.dim), dtype=np.float32)
    stored = snapshot.semantic_vectors
    if stored is not None and snapshot.semantic_encoder == encoder.key and stored.shape[1] == encoder.dim:
        out[:] = stored
    if known:
        for i in np.flatnonzero(~out.any(axis=1)).tolist():
            row = known.get(snapshot.paper_ids[i])
            if row is not None:
                out[i] = row
    titles, abstracts = snapshot.text_fields()
    todo = [i for i in np.flatnonzero(~out.any(axis=1)).tolist() if titles[i] or abstracts[i]]
    if todo:
        bar = progress(total=len(todo), desc=f"{encoder.name} vectors", unit="paper", quiet=quiet)
        out[todo] = encoder.encode_fields([titles[i] for i in todo], [abstracts[i] for i in todo],
                                          on_progress=bar.update)
        bar.close()
    return out, len(todo)


class CitationRecommender:
    """Citeomatic's composition: `selector` proposes candidates, `ranker` (optional) re-scores them, and with
    `lexical` (a BM25 fitted on the same snapshot) the re-ranked list is fused with BM25's by reciprocal rank
    (`rrf_k`): on a real citation graph the two are right about different papers (hep-th: docs/citations.md).
    `baseline` (optional, a BM25 on the same snapshot) only takes part in `evaluate`.

    fit / score / recommend / save / load (the Ranker contract); `params`, a RecommenderParams, holds how fit
    composes the parts."""

    candidate_bm25_: BM25 | None = None  # the BM25 index whose top papers join the ranker's candidates

    def __init__(self, selector: NNSelect | None = None, ranker: NNRank | None = None, baseline: BM25 | None = None,
                 *, lexical: BM25 | None = None, rrf_k: int | None = None, encoder: TextEncoder | None = None,
                 **params):
        self.selector = selector if selector is not None else NNSelect()
        self.ranker = ranker
        if self.uses_encoder and encoder is None:
            raise ValueError("NNRank(use_encoder=True) reads a pretrained encoder's vectors: give encoder=")
        self.encoder = encoder if self.uses_encoder else None
        self.known_vectors_: dict[str, np.ndarray] = {}
        self.baseline = baseline
        self.lexical = lexical
        self.rrf_k = RRF_K if lexical is not None and rrf_k is None else rrf_k
        self.params = RecommenderParams(**params)

    @property
    def uses_encoder(self) -> bool:
        """Whether the ranker reads the pretrained encoder's vectors (NNRankParams.use_encoder)."""
        return self.ranker is not None and self.ranker.params.use_encoder

    def _encoder_vectors(self, snapshot: GraphSnapshot, quiet: bool = True) -> GraphSnapshot:
        """`snapshot` carrying the encoder's vectors of its papers (encoder_vectors), once for every as-of
        view of it: the ranker, the previous-year pipeline and the index read them from there."""
        assert self.encoder is not None, "only called when the ranker uses the encoder"
        vectors, _ = encoder_vectors(snapshot, self.encoder, self.known_vectors_, quiet=quiet)
        return dataclasses.replace(snapshot, semantic_vectors=vectors, semantic_encoder=self.encoder.key)

    @property
    def name(self) -> str:
        """The served ranker, as the outputs name it."""
        return "citeomatic" if self.lexical is None else "citeomatic+bm25"

    def fit(self, snapshot: GraphSnapshot, as_of: int | None = None, exclude_queries: Iterable[int] = (),
            quiet: bool = True) -> CitationRecommender:
        """Train the pipeline on `snapshot` as of `as_of`. The selector trains on every citing paper; the ranker
        on a sample of them (`NNRankParams.max_queries`), or, with `ranker_years`, of those of the last years
        (falling back to all when fewer than `min_ranker_queries` of them cite). `exclude_queries` (indexes
        into the as-of snapshot) are trained on by neither (e.g. evaluation queries that are in the
        collection). A baseline, when given, is fitted too.

        An earlier version held the ranker's recent papers out of the selector, so that the ranker's cosine
        feature would come from pairs the selector never saw. On hep-th that cost NNSelect a third of its
        F1@20 (its most recent years cite the most and are the closest to the drafts), and cross-fitting
        (a selector without the ranker's queries for the ranker, then one on everything to serve) shifted
        the cosines under the ranker and cost more than it saved (docs/citations.md).

        Fusion with BM25 (`fusion`): None never fuses, an int always fuses with that constant, "auto" chooses
        among FUSION_CHOICES on `validation_queries` citing papers of the training graph's last year; the
        choice and its validation numbers are in `fusion_validation_`. With `validation="previous-year"` (the
        default) a second pipeline of the same parameters is trained on the graph as of the year before, and
        those papers are its drafts: later papers over an earlier collection, as the served model's drafts
        are (twice the training time). With "held-out" they are held out of this model's own training (their
        references removed) instead; on hep-th that made them easier than real drafts for the ranker alone
        (their neighbours are their contemporaries, whose citations this model trained on) and chose to
        serve it without BM25, which cost 0.01 F1@20 and 0.03 MRR on the dev queries (docs/citations.md).
        On a collection where words say little about what gets cited (the synthetic world) it leaves BM25
        out; on hep-th it fuses."""
        prm = self.params
        if self.uses_encoder:
            snapshot = self._encoder_vectors(snapshot, quiet)
        train = snapshot.as_of(as_of) if as_of is not None else snapshot
        validation: tuple[list[Query], dict[str, dict[str, int]]] | None = None
        chosen: dict | None = None  # the choice made on a model of the previous year
        previous: _Background | None = None
        if prm.fusion == "auto" and prm.validation == "previous-year":
            if self._trains_concurrently():
                # Quiet: two progress bars would garble each other; this pipeline's bars show the pace.
                previous = _Background(self._previous_year, train, exclude_queries, True)
            else:
                chosen = self._previous_year(train, exclude_queries, quiet)
        elif prm.fusion == "auto":
            held, drafts = hold_out_drafts(train, prm.validation_queries, exclude_queries)
            if len(drafts[0]) >= MIN_VALIDATION_QUERIES:  # else nothing is held out and nothing fused
                train, validation = held, drafts
        years = train.paper_year
        everyone = np.setdiff1d(np.arange(train.n_papers), np.fromiter(exclude_queries, dtype=np.int64))
        cut = train.max_year - prm.ranker_years
        recent = everyone[(years[everyone] != NO_YEAR) & (years[everyone] > cut)]
        citing = np.diff(sp.csr_matrix(train.citations).indptr) > 0
        split = (self.ranker is not None and prm.ranker_years > 0
                 and citing[recent].sum() >= prm.min_ranker_queries)
        try:
            self.selector.fit(train, queries=everyone, quiet=quiet)
            if self.baseline is not None:
                self.baseline.fit(train, quiet=quiet)
            bm25 = self.baseline
            self.candidate_bm25_ = None
            if self.ranker is not None:
                if self.ranker.params.lexical_candidates:
                    bm25 = self.candidate_bm25_ = bm25 if bm25 is not None else BM25().fit(train, quiet=quiet)
                self.ranker.fit(train, self.selector, queries=recent if split else everyone, quiet=quiet,
                                lexical=bm25, encoder_vectors=train.semantic_vectors if self.uses_encoder else None)
        finally:
            if previous is not None:
                chosen = previous.result()  # waits; raises what the previous-year pipeline raised
        self.lexical, self.rrf_k = None, None
        if prm.fusion is None or (prm.fusion == "auto" and validation is None and chosen is None):
            return self
        self.lexical = bm25 if bm25 is not None else BM25().fit(train, quiet=quiet)
        self.rrf_k = RRF_K if prm.fusion == "auto" else int(prm.fusion)
        if chosen is not None:
            self.fusion_validation_ = chosen
            self.rrf_k = chosen["choice"]
        elif validation is not None:
            self.fusion_validation_ = self.choose_fusion(*validation)
        if self.rrf_k is None:
            self.lexical = None
        return self

    def _trains_concurrently(self) -> bool:
        """Whether the previous-year pipeline may train beside this one: both parts on one torch thread each
        (their models then do not depend on what runs beside them) and a core for each."""
        one_thread = self.selector.params.threads == 1 and (self.ranker is None or self.ranker.params.threads == 1)
        return self.params.concurrent_validation and one_thread and (os.cpu_count() or 1) >= 2

    def _previous_year(self, train: GraphSnapshot, exclude_queries: Iterable[int], quiet: bool) -> dict | None:
        """The fusion choice (choose_fusion's record) of the pipeline of these parameters trained as of
        `train`'s last year but one, on up to `validation_queries` papers of the last year as its drafts (their
        references to earlier papers as gold); None when fewer than MIN_VALIDATION_QUERIES such papers cite."""
        prm = self.params
        excluded = {train.paper_ids[i] for i in exclude_queries}
        split = time_split_queries(train, train.max_year - 1)
        queries = [q for q in split.queries if q.id not in excluded]
        if len(queries) > prm.validation_queries:
            rng = np.random.default_rng(0)
            queries = [queries[i] for i in np.sort(rng.choice(len(queries), prm.validation_queries, replace=False))]
        if len(queries) < MIN_VALIDATION_QUERIES:
            return None
        qrels = {q.id: split.qrels[q.id] for q in queries}
        past = CitationRecommender(NNSelect(**asdict(self.selector.params)),
                                   None if self.ranker is None else NNRank(**asdict(self.ranker.params)),
                                   encoder=self.encoder, **{**asdict(prm), "fusion": None})
        index = split.train.paper_index
        past.fit(split.train, exclude_queries=[index[i] for i in excluded if i in index], quiet=quiet)
        # The past pipeline's own BM25 when its ranker took BM25's candidates (an index of the same papers).
        past.lexical = past.candidate_bm25_ or BM25().fit(split.train, quiet=quiet)
        return {**past.choose_fusion(queries, qrels), "model_as_of": int(split.train.max_year)}

    def choose_fusion(self, queries: Sequence[Query], qrels: Mapping[str, Mapping[str, int]],
                      choices: Sequence[int | None] = FUSION_CHOICES) -> dict:
        """Set `rrf_k` from these drafts: the choice (a fusion constant, or None: the re-ranked list alone)
        with the best mean F1@20 + reciprocal rank per draft (the two measures the recommender is judged
        by). Until NNRank read the pretrained encoder (issue 28) the list alone had to win by twice the
        standard error of the paired difference, fusion being the prior; on hep-th that kept a fusion which
        the drafts of 1999 and the dev queries both put below the list alone (docs/citations.md), so no
        side is favoured now. Returns every choice's F1@20 and MRR, the chosen one, and the margin of the
        list alone over the best fusion with its standard error (how sure the choice is)."""
        ids = self.snapshot.paper_ids
        per_draft: dict[int | None, list[float]] = {c: [] for c in choices}
        f1: dict[int | None, list[float]] = {c: [] for c in choices}
        rr: dict[int | None, list[float]] = {c: [] for c in choices}
        assert self.lexical is not None, "fit sets BM25 before choosing the fusion"
        for q in queries:
            gold = qrels.get(q.id)
            if not gold:
                continue
            ranked, _ = self._ranked(q.title, q.abstract, q.year, (q.id,), use_ranker=True)
            lexical = [i for i, _ in self.lexical.recommend(q.title, q.abstract, q.year, (q.id,), FUSION_DEPTH)]
            for c in choices:
                order = ranked[:FUSION_DEPTH] if c is None else [i for i, _ in reciprocal_rank_fusion(
                    [ranked[:FUSION_DEPTH].tolist(), lexical], c, FUSION_DEPTH)]
                run = [ids[i] for i in order]
                f1[c].append(metrics.f1_at_k(run, gold, k=20))
                rr[c].append(metrics.reciprocal_rank(run, gold))
                per_draft[c].append(f1[c][-1] + rr[c][-1])
        fused = [c for c in choices if c is not None]
        best_fused = max(fused, key=lambda c: round(float(np.mean(per_draft[c])), 9))
        best: int | None = best_fused
        margin = se = 0.0
        if None in choices:
            diff = np.asarray(per_draft[None]) - np.asarray(per_draft[best_fused])
            margin = float(diff.mean())
            se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
            if round(margin, 9) > 0:
                best = None
        self.rrf_k = best
        return {"choice": best, "queries": len(per_draft[choices[0]]), "alone_minus_fused": margin,
                "standard_error": se,
                "scores": {str(c): {"f1@20": float(np.mean(f1[c])), "mrr": float(np.mean(rr[c]))} for c in choices}}

    @property
    def snapshot(self) -> GraphSnapshot:
        """The papers recommendations index into."""
        if not hasattr(self.selector, "corpus_"):
            raise NotFitted("the selector has no paper index: fit it or call index_snapshot(snapshot)")
        return self.selector.corpus_.snapshot

    def _ranked(self, title: str | None, abstract: str | None, year: int | None, exclude_ids: Iterable[str],
                use_ranker: bool) -> tuple[np.ndarray, np.ndarray]:
        found = self.selector.candidates(title, abstract, year, exclude_ids)
        if use_ranker:
            found = self._with_lexical(found, title, abstract, year, exclude_ids)
        return self._order(found, title, abstract, year, use_ranker, exclude_ids)

    @property
    def lexical_candidates(self) -> int:
        """How many of BM25's top papers join the selector's candidates before the ranker (its setting)."""
        return self.ranker.params.lexical_candidates if self.ranker is not None else 0

    def _with_lexical(self, found, title: str | None, abstract: str | None, year: int | None,
                      exclude_ids: Iterable[str]):
        """The selector's candidates and, when the ranker was trained so, BM25's top papers for the draft."""
        if not self.lexical_candidates:
            return found
        bm25 = self.candidate_bm25_
        if bm25 is None:
            raise NotFitted("the ranker takes BM25's candidates: call index_snapshot(snapshot) first")
        hits = bm25.recommend(title, abstract, year, tuple(exclude_ids), self.lexical_candidates)
        return self.selector.with_papers(found, [i for i, _ in hits], self.selector.encode([title], [abstract])[0])

    def _order(self, found, title: str | None, abstract: str | None, year: int | None,
               use_ranker: bool, exclude_ids: Iterable[str] = ()) -> tuple[np.ndarray, np.ndarray]:
        cand, cos = found.indexes, found.cosines
        if use_ranker and self.ranker is not None and len(cand):
            corpus = self.selector.corpus_
            vector, exclude = None, list[int]()
            if self.uses_encoder:
                assert self.encoder is not None, "a ranker that uses the encoder comes with it"
                vector = self.encoder.encode_fields([title], [abstract])[0]
                exclude = corpus.lookup(exclude_ids)
            s = self.ranker.score(corpus, title, abstract, found, year, query_vector=vector, exclude=exclude)
            order = np.lexsort((-cos, -s))  # ties (sigmoid saturation) fall back to the selector's order
            return cand[order], s[order]
        return cand, cos

    def _fused(self, ranked: np.ndarray, title: str | None, abstract: str | None, year: int | None,
               exclude_ids: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """The re-ranked candidates fused with BM25's ranking (both indexing the same snapshot)."""
        assert self.lexical is not None and self.rrf_k is not None, "fusion has BM25 and its k"
        lexical = [i for i, _ in self.lexical.recommend(title, abstract, year, tuple(exclude_ids), FUSION_DEPTH)]
        fused = reciprocal_rank_fusion([ranked[:FUSION_DEPTH].tolist(), lexical], self.rrf_k)
        return (np.array([i for i, _ in fused], dtype=np.int64), np.array([f for _, f in fused], dtype=np.float32))

    def score(self, title: str | None, abstract: str | None, year: int | None = None,
              exclude_ids: Iterable[str] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Every paper served for the draft (indexes into `snapshot`) and its score, best first: the selector's
        candidates re-ranked, fused with BM25's ranking when `lexical` is set."""
        cand, scores = self._ranked(title, abstract, year, exclude_ids, use_ranker=True)
        if self.lexical is not None:
            cand, scores = self._fused(cand, title, abstract, year, exclude_ids)
        return cand, scores

    def recommend(self, title: str | None, abstract: str | None, year: int | None = None,
                  exclude_ids: Iterable[str] = (), k: int = 20) -> list[Recommendation]:
        """The k papers the draft should cite, best first: never a paper in `exclude_ids` (a draft that is
        itself in the collection passes its own id or DOI) nor one published after `year`."""
        cand, scores = self.score(title, abstract, year, exclude_ids)
        corpus = self.selector.corpus_
        q = Bags.of(corpus.vocabulary, [title], [abstract])
        q_words = np.union1d(q.title.indices, q.abstract.indices)
        out = []
        for i, s in zip(cand[:k].tolist(), scores[:k].tolist()):
            t, a = corpus.bags.title, corpus.bags.abstract
            d_words = np.union1d(t.indices[t.indptr[i]:t.indptr[i + 1]], a.indices[a.indptr[i]:a.indptr[i + 1]])
            out.append(Recommendation(i, float(s), tuple(shared_terms(corpus.vocabulary, q_words, d_words,
                                                                      self.params.explain_terms))))
        return out

    def evaluate(self, queries: Sequence[Query], qrels: Mapping[str, Mapping[str, int]], ks: Sequence[int] = (20, 100),
                 quiet: bool = True) -> dict[str, dict[str, float]]:
        """F1@ks[0], MRR and Recall@k for each k, per system side by side: "bm25" (when a baseline is set),
        "nnselect" (candidates ranked by the selector's cosine), "nnselect+nnrank" (when a ranker is set),
        the fused "citeomatic+bm25" (when `lexical` is set).
        Only queries with judgments count; each gets `exclude_ids=(its id,)` and its year."""
        depth = max(ks)
        runs: dict[str, dict[str, list[str]]] = {}
        seconds: dict[str, float] = {}
        ids = self.snapshot.paper_ids
        judged = [q for q in queries if qrels.get(q.id)]
        candidates_found: list[float] = []
        for q in progress(judged, desc="evaluate", unit="query", quiet=quiet):
            if self.baseline is not None:
                t0 = time.perf_counter()
                hits = self.baseline.recommend(q.title, q.abstract, q.year, (q.id,), depth)
                seconds["bm25"] = seconds.get("bm25", 0.0) + time.perf_counter() - t0
                b_ids = self.baseline.snapshot_.paper_ids
                runs.setdefault("bm25", {})[q.id] = [b_ids[i] for i, _ in hits]
            t0 = time.perf_counter()
            found = self.selector.candidates(q.title, q.abstract, q.year, (q.id,))
            seconds["nnselect"] = seconds.get("nnselect", 0.0) + time.perf_counter() - t0
            runs.setdefault("nnselect", {})[q.id] = [ids[i] for i in found.indexes[:depth]]
            gold = {d for d, g in qrels[q.id].items() if g > 0}
            candidates_found.append(len(gold.intersection(ids[i] for i in found.indexes)) / max(len(gold), 1))
            ranked = found.indexes
            if self.ranker is not None:
                found = self._with_lexical(found, q.title, q.abstract, q.year, (q.id,))
                ranked, _ = self._order(found, q.title, q.abstract, q.year, use_ranker=True, exclude_ids=(q.id,))
                seconds["nnselect+nnrank"] = seconds.get("nnselect+nnrank", 0.0) + time.perf_counter() - t0
                runs.setdefault("nnselect+nnrank", {})[q.id] = [ids[i] for i in ranked[:depth]]
            if self.lexical is not None:
                fused, _ = self._fused(ranked, q.title, q.abstract, q.year, (q.id,))
                seconds[self.name] = seconds.get(self.name, 0.0) + time.perf_counter() - t0
                runs.setdefault(self.name, {})[q.id] = [ids[i] for i in fused[:depth]]
        judged_qrels = {q.id: qrels[q.id] for q in judged}
        out = {name: score_run(run, judged_qrels, ks) for name, run in runs.items()}
        for name in out:
            out[name]["ms_per_query"] = 1000.0 * seconds.get(name, 0.0) / max(len(judged), 1)
        if "nnselect" in out:
            out["nnselect"]["candidate_recall"] = float(np.mean(candidates_found)) if candidates_found else 0.0
        return out


    # --- persistence -----------------------------------------------------------------------------------

    def index_snapshot(self, snapshot: GraphSnapshot, lexical: BM25 | None = None) -> CitationRecommender:
        """Index the papers of `snapshot` (the graph as it is now): the selector's index and, when the model
        fuses or its ranker takes BM25's candidates, BM25's (an index, not a model: fitted again like the
        selector's, or `lexical`, one already fitted on this snapshot). A ranker that reads the pretrained
        encoder gets its vectors of these papers: the snapshot's, the model's own, or encoded here."""
        if self.uses_encoder:
            snapshot = self._encoder_vectors(snapshot)
            assert self.ranker is not None
            self.ranker.index_encoder(snapshot, snapshot.semantic_vectors)
        self.selector.index_snapshot(snapshot)
        if self.needs_bm25:
            bm25 = lexical if lexical is not None else BM25().fit(snapshot)
            if self.fuses:
                self.lexical = bm25
            if self.lexical_candidates:
                self.candidate_bm25_ = bm25
        return self

    def save(self, directory: str | Path) -> Path:
        """The selector as the Citeomatic text encoder in `encoder/` (one copy of its weights serves the
        graph's encoder too), the ranker in `nnrank/`, and config.json naming them with the fusion setting."""
        d = Path(directory)
        CiteomaticEncoder.from_selector(self.selector).save(d / ENCODER_DIR)
        if self.ranker is not None:
            self.ranker.save(d / RANKER_DIR)
        if self.encoder is not None:
            self.encoder.save(d / TEXT_ENCODER_DIR)
            snap = self.snapshot
            assert snap.semantic_vectors is not None, "fit and index_snapshot give the indexed papers their vectors"
            np.savez(d / TEXT_VECTORS_FILE, ids=np.array(snap.paper_ids), vectors=snap.semantic_vectors)
        return write_config(d, MODEL_NAME, VERSION, {
            "params": asdict(self.params), "encoder": ENCODER_DIR, "selector": f"{ENCODER_DIR}/{SELECTOR_DIR}",
            "ranker": None if self.ranker is None else RANKER_DIR,
            "text_encoder": None if self.encoder is None else TEXT_ENCODER_DIR,
            "fusion": None if self.lexical is None else {"lexical": "bm25", "rrf_k": self.rrf_k},
            "fusion_validation": getattr(self, "fusion_validation_", None)})

    @classmethod
    def load(cls, directory: str | Path, snapshot: GraphSnapshot | None = None) -> CitationRecommender:
        """A saved model, indexing `snapshot` when given (else call index_snapshot before recommending)."""
        d = Path(directory)
        config = read_config(d, MODEL_NAME, VERSION, label="citation",
                             known_params=RecommenderParams.__dataclass_fields__)
        return cls.from_parts(config, d, snapshot, **config["params"])

    @property
    def fuses(self) -> bool:
        """Whether the served ranking is fused with BM25."""
        return self.rrf_k is not None

    @property
    def needs_bm25(self) -> bool:
        """Whether index_snapshot needs a BM25 index (for the fusion, or the ranker's candidates)."""
        return self.fuses or self.lexical_candidates > 0

    @classmethod
    def from_parts(cls, parts: Mapping, base: str | Path = ".", snapshot: GraphSnapshot | None = None,
                   **params) -> CitationRecommender:
        """The model whose parts `parts` names ("selector", "ranker", "fusion"; paths relative to `base`, or
        absolute as in the registry records written before the model saved itself)."""
        base = Path(base)
        selector = NNSelect.load(base / parts["selector"])
        ranker = NNRank.load(base / parts["ranker"]) if parts.get("ranker") else None
        fusion = parts.get("fusion")
        encoder = None
        if parts.get("text_encoder"):
            encoder = load_encoder(base / parts["text_encoder"])
        rec = cls(selector, ranker, rrf_k=int(fusion["rrf_k"]) if fusion else None, encoder=encoder, **params)
        if encoder is not None:
            try:
                with np.load(base / TEXT_VECTORS_FILE) as saved:
                    rec.known_vectors_ = dict(zip(saved["ids"].tolist(), saved["vectors"]))
            except (OSError, ValueError, KeyError) as e:
                raise NotFitted(f"cannot read the encoder's vectors in {base / TEXT_VECTORS_FILE}: {e}") from e
        if parts.get("fusion_validation") is not None:
            rec.fusion_validation_ = parts["fusion_validation"]
        return rec if snapshot is None else rec.index_snapshot(snapshot)


def score_run(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
              ks: Sequence[int] = (20, 100)) -> dict[str, float]:
    """F1@ks[0], MRR, Recall@k per k, and the number of judged queries, for one system's run."""
    out = {f"f1@{ks[0]}": metrics.mean_over_queries(metrics.f1_at_k, run, qrels, k=ks[0]),
           "mrr": metrics.mean_over_queries(metrics.reciprocal_rank, run, qrels)}
    for k in ks:
        out[f"recall@{k}"] = metrics.mean_over_queries(metrics.recall_at_k, run, qrels, k=k)
    out["queries"] = float(sum(1 for rel in qrels.values() if rel))
    return out


# --- evaluation sets ------------------------------------------------------------------------------


@dataclass
class TimeSplit:
    """Train on `train` (the snapshot as of the split year); `queries` are the later papers, `qrels` their
    references into `train` (ids)."""

    train: GraphSnapshot
    queries: list[Query]
    qrels: dict[str, dict[str, int]]
    year: int


def hold_out_drafts(train: GraphSnapshot, n: int, keep_out: Iterable[int] = (),
                    seed: int = 0) -> tuple[GraphSnapshot, tuple[list[Query], dict[str, dict[str, int]]]]:
    """Up to `n` citing papers of the snapshot's last year as drafts: their references become their gold and
    leave the graph (so no model learns from them and no citation count includes them), their text stays.
    `keep_out` (indexes) are never drawn."""
    years = train.paper_year
    cit = sp.csr_matrix(train.citations)
    has_text = np.array([bool(train.text(i)) for i in range(train.n_papers)], dtype=bool)
    refs_with_text = np.asarray(cit @ has_text.astype(np.float32)).ravel()
    pool = np.flatnonzero((years == train.max_year) & has_text & ~train.paper_stub & (refs_with_text > 0))
    pool = np.setdiff1d(pool, np.fromiter(keep_out, dtype=np.int64))
    if len(pool) > n:
        pool = np.sort(np.random.default_rng(seed).choice(pool, size=n, replace=False))
    queries, qrels = [], {}
    for q in pool.tolist():
        refs = cit.indices[cit.indptr[q]:cit.indptr[q + 1]]
        pid = train.paper_ids[q]
        assert train.titles is not None and train.abstracts is not None, "a draft with text has text fields"
        queries.append(Query(pid, train.titles[q], train.abstracts[q], int(years[q])))
        qrels[pid] = {train.paper_ids[j]: 1 for j in refs.tolist() if has_text[j]}
    keep = np.ones(train.n_papers, dtype=np.float32)
    keep[pool] = 0.0
    held = dataclasses.replace(train, citations=sp.csr_matrix(sp.diags(keep) @ cit))
    return held, (queries, qrels)


class _Background:
    """A call run in a daemon thread (an interrupted command does not wait for it), its result or exception
    handed over by result(). The models' own fits set their torch threads, as they do on the main thread."""

    def __init__(self, fn: Callable[..., Any], *args: Any):
        self._result: Any = None
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._result = fn(*args)
            except BaseException as exc:  # handed to the caller by result()
                self._error = exc

        self._thread = threading.Thread(target=run, name="scholargraph-previous-year", daemon=True)
        self._thread.start()

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result


def time_split_queries(snapshot: GraphSnapshot, year: int, max_queries: int | None = None, min_refs: int = 1,
                       seed: int = 0) -> TimeSplit:
    """Papers published after `year` become queries; their gold is what they cite among papers of `year`
    or before that have text (what a recommender over the as-of snapshot could return). `max_queries`
    samples them (seeded)."""
    train = snapshot.as_of(year)
    has_text = np.array([bool(snapshot.text(i)) for i in range(snapshot.n_papers)], dtype=bool)
    years = snapshot.paper_year
    later = np.flatnonzero((years != NO_YEAR) & (years > year) & has_text & ~snapshot.paper_stub)
    cit = sp.csr_matrix(snapshot.citations)
    train_ids = set(train.paper_ids)
    queries: list[Query] = []
    qrels: dict[str, dict[str, int]] = {}
    for q in later.tolist():
        refs = cit.indices[cit.indptr[q]:cit.indptr[q + 1]]
        gold = [snapshot.paper_ids[j] for j in refs.tolist()
                if years[j] != NO_YEAR and years[j] <= year and has_text[j] and snapshot.paper_ids[j] in train_ids]
        if len(gold) < min_refs:
            continue
        pid = snapshot.paper_ids[q]
        queries.append(Query(pid, snapshot.titles[q] if snapshot.titles else None,
                             snapshot.abstracts[q] if snapshot.abstracts else None, int(years[q])))
        qrels[pid] = {g: 1 for g in gold}
    if max_queries is not None and len(queries) > max_queries:
        rng = np.random.default_rng(seed)
        pick = np.sort(rng.choice(len(queries), size=max_queries, replace=False))
        queries = [queries[i] for i in pick]
        qrels = {q.id: qrels[q.id] for q in queries}
    return TimeSplit(train, queries, qrels, year)


def weak_citation_graph(snapshot: GraphSnapshot, keywords: Mapping[str, Sequence[str]] | None = None,
                        per_paper: int = 10, max_keyword_df: int = 300, rare_df: int = 30,
                        author_refs: int = 3) -> GraphSnapshot:
    """A pseudo-citation graph for a collection without references (ACM-CR): paper i "cites" the
    earlier-or-same-year papers sharing the most author keywords with it, by summed keyword IDF
    log(N / df), when that sum reaches log(N / rare_df) (one keyword of at most `rare_df` papers, or a
    few commoner ones); keywords in more than `max_keyword_df` papers are too generic to pair on. Up to
    `per_paper` such links, plus up to `author_refs` of its authors' latest earlier papers (self-citation
    is the commonest citation). The papers, years and texts are the snapshot's; only the edges are new."""
    n = snapshot.n_papers
    years = snapshot.paper_year.astype(np.int64)
    dated = years != NO_YEAR
    edges: list[set[int]] = [set() for _ in range(n)]
    if keywords:
        vocab: dict[str, int] = {}
        rows, cols = [], []
        for pid, words in keywords.items():
            i = snapshot.paper_index.get(pid)
            if i is None:
                continue
            for w in {" ".join(k.lower().split()) for k in words if k and k.strip()}:
                rows.append(i)
                cols.append(vocab.setdefault(w, len(vocab)))
        kw = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(n, max(len(vocab), 1)))
        kw.data[:] = 1.0
        df = np.asarray(kw.sum(axis=0)).ravel()
        usable = (df >= 2) & (df <= max_keyword_df)
        idf = np.where(usable, np.log(n / np.maximum(df, 1)), 0.0).astype(np.float32)
        binary = sp.csr_matrix(kw @ sp.diags(usable.astype(np.float32)))
        binary.eliminate_zeros()
        weighted_t = sp.csr_matrix((kw @ sp.diags(idf)).T)
        min_score = float(np.log(n / max(rare_df, 1)))
        rows_with = np.flatnonzero((np.diff(binary.indptr) > 0) & dated)
        for start in range(0, len(rows_with), 512):
            block = rows_with[start:start + 512]
            scores = sp.csr_matrix(binary[block] @ weighted_t)  # summed IDF of the keywords each pair shares
            for r, i in enumerate(block.tolist()):
                lo, hi = scores.indptr[r], scores.indptr[r + 1]
                cand, score = scores.indices[lo:hi], scores.data[lo:hi]
                keep = (score >= min_score - 1e-6) & (cand != i)
                cand, score = cand[keep], score[keep]
                ok = dated[cand] & (years[cand] <= years[i])
                cand, score = cand[ok], score[ok]
                if len(cand):
                    edges[i].update(cand[np.lexsort((cand, -score))][:per_paper].tolist())
    if author_refs > 0 and snapshot.n_authors:
        added = np.zeros(n, dtype=np.int64)
        by_author = sp.csr_matrix(snapshot.authorship)
        for a in range(by_author.shape[0]):
            papers = by_author.indices[by_author.indptr[a]:by_author.indptr[a + 1]]
            papers = papers[dated[papers]]
            if len(papers) < 2:
                continue
            papers = papers[np.lexsort((papers, years[papers]))]
            for k in range(1, len(papers)):
                i = int(papers[k])
                earlier = papers[:k][years[papers[:k]] < years[i]]
                for j in earlier[::-1].tolist():
                    if added[i] >= author_refs:
                        break
                    if j not in edges[i]:
                        edges[i].add(int(j))
                        added[i] += 1
    src = np.repeat(np.arange(n), [len(e) for e in edges])
    dst = np.fromiter((j for e in edges for j in sorted(e)), dtype=np.int64, count=len(src))
    cit = sp.csr_matrix((np.ones(len(src), np.float32), (src, dst)), shape=(n, n))
    return GraphSnapshot(paper_ids=snapshot.paper_ids, paper_year=snapshot.paper_year, paper_stub=snapshot.paper_stub,
                         paper_venue=snapshot.paper_venue, author_ids=snapshot.author_ids,
                         venue_ids=snapshot.venue_ids, citations=cit, authorship=snapshot.authorship,
                         titles=snapshot.titles, abstracts=snapshot.abstracts, author_names=snapshot.author_names,
                         venue_names=snapshot.venue_names, extra={**snapshot.extra, "weak_citations": True})


__all__ = ["CitationRecommender", "Query", "Recommendation", "RecommenderParams", "TimeSplit", "read_queries",
           "score_run", "time_split_queries", "weak_citation_graph"]
