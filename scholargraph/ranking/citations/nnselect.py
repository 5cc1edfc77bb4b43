"""NNSelect (Citeomatic): text-only paper embeddings trained on the citation graph, and the candidate index."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from scholargraph.errors import NotFitted
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot
from scholargraph.progress import progress
from scholargraph.ranking.citations.ann import ExactIndex, IVFIndex, make_index, normalise_rows
from scholargraph.ranking.citations.optim import DenseAdam, LazyAdam, embed_bags, flushed_denormals
from scholargraph.ranking.citations.text import Bags, Corpus, Vocabulary, fit_vocabulary
from scholargraph.ranking.torch_threads import torch_threads
from scholargraph.registry import load_state, read_config, save_state, write_config

MODEL_NAME = "nnselect"
VERSION = 2  # 2: tf-idf weighted bags (issue 28); a model of 1 summed raw counts
STATE_FILE, VOCAB_FILE = "state.pt", "vocabulary.json"


# --- small pure pieces (unit-tested on their own) ------------------------------------------------


def triplet_loss(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor,
                 margin: float) -> torch.Tensor:
    """Citeomatic's loss on L2-normalised rows: mean of max(0, margin - cos(a, p) + cos(a, n))."""
    pos = (anchor * positive).sum(-1)
    neg = (anchor * negative).sum(-1)
    return torch.relu(margin - pos + neg).mean()


def cited_by_cited_matrix(citations: sp.csr_matrix, queries: np.ndarray) -> sp.csr_matrix:
    """Row r: the papers cited by the references of paper queries[r], less those it cites and itself."""
    citations = sp.csr_matrix(citations)
    refs = citations[np.asarray(queries, dtype=np.int64)]
    second = sp.csr_matrix(refs @ citations)
    second.data[:] = 1.0
    # drop what the query cites and the query itself: subtract a mask large enough to make those <= 0
    own = sp.csr_matrix((np.ones(len(queries), np.float32), (np.arange(len(queries)), queries)),
                        shape=second.shape)
    kept = sp.csr_matrix(second - 2 * (refs + own))
    kept.data[kept.data < 0.5] = 0.0
    kept.eliminate_zeros()
    kept.sort_indices()
    return kept


def cited_by_cited(citations: sp.csr_matrix, query: int) -> np.ndarray:
    """Papers cited by the query's references but not by the query itself (nor the query): close to the
    citations in the graph, yet not chosen, so they make informative negatives."""
    return cited_by_cited_matrix(citations, np.array([query])).indices.astype(np.int64)


def hard_negatives(query: int, neighbours: np.ndarray, cited: np.ndarray, embeddings: np.ndarray,
                   max_cosine: float) -> np.ndarray:
    """Nearest neighbours of the query that it does not cite, dropping those whose cosine to some true
    citation reaches `max_cosine` (they are likely relevant papers the authors just did not cite)."""
    cand = np.asarray(neighbours, dtype=np.int64)
    cand = cand[(cand >= 0) & (cand != query)]
    cand = cand[~np.isin(cand, cited)]
    if len(cand) == 0 or len(cited) == 0:
        return cand
    sims = embeddings[cand] @ embeddings[np.asarray(cited, dtype=np.int64)].T
    return cand[sims.max(axis=1) < max_cosine]


class Candidates(NamedTuple):
    """What the selector proposes for one draft: paper indexes with their NNSelect cosines (best first),
    and the nearest neighbours they came from (whose citations also entered)."""

    indexes: np.ndarray
    cosines: np.ndarray
    neighbours: np.ndarray

    def neighbour_citations(self, citations: sp.csr_matrix, papers: np.ndarray | None = None) -> np.ndarray:
        """For each paper (default: the candidates), how many of the neighbours cite it."""
        papers = self.indexes if papers is None else np.asarray(papers, dtype=np.int64)
        cited = np.sort(citations[self.neighbours].indices) if len(self.neighbours) else np.zeros(0, np.int32)
        return (np.searchsorted(cited, papers, side="right") - np.searchsorted(cited, papers, side="left")).astype(
            np.float32)


# --- the model ------------------------------------------------------------------------------------


class _Embedder(nn.Module):
    """Sum of word vectors per field, each field's sum normalised, fields mixed by learned scalars."""

    def __init__(self, n_words: int, dim: int, seed: int):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.words = nn.Parameter(torch.randn(max(n_words, 1), dim, generator=g) / np.sqrt(dim),
                                  requires_grad=False)  # trained by LazyAdam, row by row
        self.field_weights = nn.Parameter(torch.ones(2))

    def combine(self, title: torch.Tensor, abstract: torch.Tensor) -> torch.Tensor:
        t = nn.functional.normalize(title, dim=-1)
        a = nn.functional.normalize(abstract, dim=-1)
        return nn.functional.normalize(self.field_weights[0] * t + self.field_weights[1] * a, dim=-1)


@dataclass(frozen=True)
class NNSelectParams:
    """Hyperparameters (all saved in the JSON config)."""

    dim: int = 200
    max_vocab: int = 50_000
    min_df: int = 2
    margin: float = 0.3
    lr: float = 0.02
    batch_size: int = 512
    epochs: int = 8  # 4 until issue 28: on hep-th, 8 gave NNSelect +0.007 F1@20 and +0.028 MRR
    max_triplets: int = 400_000
    random_negatives: float = 0.4
    hard_negatives: float = 0.4
    cited_by_cited_negatives: float = 0.2
    hard_k: int = 20
    hard_max_cosine: float = 0.9
    k_nn: int = 100
    expand_citations: bool = True
    index: str = "exact"
    nprobe: int = 16
    exact_mining_below: int = 50_000
    seed: int = 0
    weighting: str = "tfidf"
    # torch threads while training. One: on hep-th two threads trained models 0.01 F1@20 worse (issue 28),
    # and with one the same seed gives the same model whatever the machine's cores. 0: torch's default.
    threads: int = 1


def weigh_bags(bags: Bags, idf: np.ndarray, weighting: str) -> Bags:
    """The bags as the embedding sums them: raw word counts ("count"), or log(1 + count) x the word's BM25
    IDF ("tfidf"), so that rare words, which say what a paper is about, outweigh common ones from the start
    (the untrained table is then a random projection of TF-IDF)."""
    if weighting == "count":
        return bags
    if weighting != "tfidf":
        raise ValueError(f"unknown weighting {weighting!r}: count or tfidf")
    out = []
    for m in bags.fields():
        m = m.astype(np.float32, copy=True)
        m.data = np.log1p(m.data) * idf[m.indices]
        out.append(m)
    return Bags(*out)


class NNSelect:
    """Citeomatic's candidate selector: a text-only document embedding trained so that a paper lies closer
    to what it cites than to other papers, and an index over a paper collection that returns a query's
    nearest neighbours plus the papers those neighbours cite, never the query itself nor its future."""

    def __init__(self, **params):
        self.params = NNSelectParams(**params)

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFitted("NNSelect is not fitted: call fit() or load() first")

    def _check_indexed(self) -> None:
        self._check_fitted()
        if not hasattr(self, "corpus_"):
            raise NotFitted("NNSelect has no paper index: call index_snapshot(snapshot) after load()")

    # --- training --------------------------------------------------------------------------------

    def fit(self, snapshot: GraphSnapshot, as_of: int | None = None, epochs: int | None = None,
            queries: Sequence[int] | np.ndarray | None = None, quiet: bool = True) -> NNSelect:
        """Learn the vocabulary and word vectors from `snapshot` as of `as_of` (all of it when None), then
        index that snapshot. `queries` restricts the citing papers trained on (indexes into the as-of
        snapshot); by default every paper with text that cites a paper with text."""
        with flushed_denormals(), torch_threads(self.params.threads):
            return self._fit(snapshot, as_of, epochs, queries, quiet)

    def _fit(self, snapshot: GraphSnapshot, as_of: int | None, epochs: int | None,
             queries: Sequence[int] | np.ndarray | None, quiet: bool) -> NNSelect:
        train = snapshot.as_of(as_of) if as_of is not None else snapshot
        epochs = self.params.epochs if epochs is None else epochs
        rng = np.random.default_rng(self.params.seed)
        self.vocabulary_, bags = fit_vocabulary(train, max_size=self.params.max_vocab, min_df=self.params.min_df)
        self.model_ = _Embedder(len(self.vocabulary_), self.params.dim, self.params.seed)
        corpus = Corpus.of(train, self.vocabulary_, bags)
        weighted = self._weigh(corpus.bags)
        cit = train.citations.tocsr()
        cit = (sp.diags(corpus.has_text.astype(np.float32)) @ cit @ sp.diags(corpus.has_text.astype(np.float32)))
        cit = sp.csr_matrix(cit)
        cit.eliminate_zeros()
        # The pairs are drawn in this order: sorted, the model depends on the graph, not on how it was loaded
        # (a snapshot from files keeps each paper's references in file order, one from Neo4j sorts them).
        cit.sort_indices()
        src = np.repeat(np.arange(cit.shape[0]), np.diff(cit.indptr))
        dst = cit.indices.astype(np.int64)
        if queries is not None:
            keep = np.isin(src, np.asarray(queries, dtype=np.int64))
            src, dst = src[keep], dst[keep]
        uq, per_query = np.unique(src, return_counts=True)
        self.trained_queries_ = int(len(uq))
        self.history_ = []
        sparse_opt = LazyAdam([self.model_.words.data], lr=self.params.lr)
        dense_opt = DenseAdam([self.model_.field_weights], lr=self.params.lr)
        text_ids = np.flatnonzero(corpus.has_text)
        for epoch in range(epochs):
            t0 = time.perf_counter()
            if len(src) > self.params.max_triplets:
                # Whole queries, so that each mined query serves all its edges.
                order = rng.permutation(len(uq))
                take = np.searchsorted(np.cumsum(per_query[order]), self.params.max_triplets) + 1
                keep = np.isin(src, uq[order[:take]])
                e_src, e_dst = src[keep], dst[keep]
            else:
                e_src, e_dst = src, dst
            if len(e_src) == 0 or len(text_ids) < 3:
                break
            emb = self._embed_weighted(weighted)
            neg = self._sample_negatives(e_src, e_dst, cit, corpus, emb, text_ids, rng)
            t_mined = time.perf_counter()
            order = rng.permutation(len(e_src))
            e_src, e_dst, neg = e_src[order], e_dst[order], neg[order]
            total, steps = 0.0, 0
            bar = progress(total=len(e_src), desc=f"nnselect epoch {epoch + 1}/{epochs}", unit="triplet",
                           quiet=quiet)
            self.model_.train()
            bs = self.params.batch_size
            for s in range(0, len(e_src), bs):
                q, p, n = e_src[s:s + bs], e_dst[s:s + bs], neg[s:s + bs]
                docs, inverse = np.unique(np.concatenate([q, p, n]), return_inverse=True)
                bags = weighted.rows(docs)
                out = self.model_.combine(*embed_bags(sparse_opt, 0, bags.title, bags.abstract))
                b = len(q)
                inv = torch.from_numpy(inverse)
                loss = triplet_loss(out[inv[:b]], out[inv[b:2 * b]], out[inv[2 * b:]], self.params.margin)
                dense_opt.zero_grad()
                loss.backward()
                sparse_opt.step()
                dense_opt.step()
                total += float(loss.detach()) * b
                steps += b
                bar.update(b)
            bar.close()
            seconds = time.perf_counter() - t_mined
            self.history_.append({"epoch": epoch + 1, "loss": round(total / max(steps, 1), 5), "triplets": steps,
                                  "mining_seconds": round(t_mined - t0, 2), "train_seconds": round(seconds, 2),
                                  "triplets_per_s": round(steps / max(seconds, 1e-9))})
        self.model_.eval()
        self.index_snapshot(train, corpus)
        return self

    def _sample_negatives(self, src: np.ndarray, dst: np.ndarray, cit: sp.csr_matrix, corpus: Corpus,
                          emb: np.ndarray, text_ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One negative per (query, positive) edge: random, a hard nearest neighbour from the current index
        (the previous epoch's model), or a paper cited by the citations; random when a kind has none."""
        prm = self.params
        shares = np.array([prm.random_negatives, prm.hard_negatives, prm.cited_by_cited_negatives], float)
        shares = shares / shares.sum() if shares.sum() > 0 else np.array([1.0, 0.0, 0.0])
        kind = rng.choice(3, size=len(src), p=shares)
        neg = text_ids[rng.integers(len(text_ids), size=len(src))]
        pools: dict[int, np.ndarray] = {}
        if shares[1] > 0:
            need = np.unique(src[kind == 1])
            if len(need):
                index = (ExactIndex(emb, corpus.years, corpus.has_text) if len(emb) <= self.params.exact_mining_below
                         else IVFIndex(emb, corpus.years, corpus.has_text, nprobe=8, seed=int(rng.integers(1 << 30))))
                excl = [cit.indices[cit.indptr[q]:cit.indptr[q + 1]].tolist() + [int(q)] for q in need]
                nbrs, _ = index.search(emb[need], self.params.hard_k, max_years=corpus.years[need], exclude=excl)
                for q, row in zip(need.tolist(), nbrs):
                    cited = cit.indices[cit.indptr[q]:cit.indptr[q + 1]]
                    pools[q] = hard_negatives(q, row, cited, emb, self.params.hard_max_cosine)
        cbc: dict[int, np.ndarray] = {}
        if shares[2] > 0:
            need = np.unique(src[kind == 2])
            second = cited_by_cited_matrix(cit, need)
            for r, q in enumerate(need.tolist()):
                cbc[q] = second.indices[second.indptr[r]:second.indptr[r + 1]]
        for i in np.flatnonzero(kind > 0):
            q = int(src[i])
            pool = pools.get(q) if kind[i] == 1 else cbc.get(q)
            if pool is not None and len(pool):
                neg[i] = pool[rng.integers(len(pool))]
        # A random draw that hit one of the query's citations (or itself) is no negative: redraw (rare).
        for _ in range(3):
            bad = np.flatnonzero((neg == src) | (np.asarray(cit[src, neg]).ravel() > 0))
            if len(bad) == 0:
                break
            neg[bad] = text_ids[rng.integers(len(text_ids), size=len(bad))]
        return neg

    # --- encoding and search ---------------------------------------------------------------------

    def _weigh(self, bags: Bags) -> Bags:
        return weigh_bags(bags, self.vocabulary_.idf, self.params.weighting)

    def _embed_bags(self, bags: Bags) -> np.ndarray:
        return self._embed_weighted(self._weigh(bags))

    def _embed_weighted(self, bags: Bags) -> np.ndarray:
        words = self.model_.words.detach().numpy()
        w = self.model_.field_weights.detach().numpy()
        title = normalise_rows(np.asarray(bags.title @ words))
        abstract = normalise_rows(np.asarray(bags.abstract @ words))
        return normalise_rows(w[0] * title + w[1] * abstract)

    def encode(self, titles: Sequence[str | None], abstracts: Sequence[str | None]) -> np.ndarray:
        """L2-normalised embeddings (n x dim, float32); a text without known words gives a zero row."""
        self._check_fitted()
        return self._embed_bags(Bags.of(self.vocabulary_, titles, abstracts))

    def index_snapshot(self, snapshot: GraphSnapshot, corpus: Corpus | None = None) -> NNSelect:
        """Embed every paper of `snapshot` and index them: the collection candidates come from."""
        self._check_fitted()
        corpus = corpus if corpus is not None and corpus.matches(snapshot) else Corpus.of(snapshot, self.vocabulary_)
        self.corpus_ = corpus
        self.embeddings_ = self._embed_bags(corpus.bags)
        prm = self.params
        self.index_ = make_index(prm.index, self.embeddings_, corpus.years, corpus.has_text,
                                 **({"nprobe": prm.nprobe, "seed": prm.seed} if prm.index == "ivf" else {}))
        return self

    def candidates(self, title: str | None, abstract: str | None, year: int | None = None,
                   exclude_ids: Iterable[str] = (), exclude: Iterable[int] = (),
                   k_nn: int | None = None) -> Candidates:
        """Candidate papers for a draft: its `k_nn` nearest neighbours and the papers they cite, none after
        `year`, none excluded (by id, DOI in any spelling, or index), best cosine first."""
        self._check_indexed()
        q = self.encode([title], [abstract])[0]
        excluded = set(self.corpus_.lookup(exclude_ids)) | {int(i) for i in exclude}
        return self.candidates_batch(q[None, :], [year], [excluded], k_nn)[0]

    def candidates_batch(self, vectors: np.ndarray, years: Sequence[int | None], excluded: Sequence[set[int]],
                         k_nn: int | None = None) -> list[Candidates]:
        """candidates() for many query vectors at once (one blocked search)."""
        self._check_indexed()
        corpus = self.corpus_
        k = self.params.k_nn if k_nn is None else k_nn
        caps = np.array([NO_YEAR if y is None else y for y in years], dtype=np.int64)
        nbrs_all, _ = self.index_.search(vectors, k, max_years=caps, exclude=[sorted(e) for e in excluded])
        cit = corpus.snapshot.citations
        out = []
        for q, nbrs, year, ex in zip(vectors, nbrs_all, years, excluded):
            nbrs = nbrs[nbrs >= 0]
            if self.params.expand_citations and len(nbrs):
                cited = np.unique(cit[nbrs].indices).astype(np.int64)
                cited = cited[corpus.has_text[cited]]
                if year is not None and year != NO_YEAR:
                    cited = cited[corpus.years[cited] <= year]
                if ex:
                    cited = cited[~np.isin(cited, np.fromiter(ex, dtype=np.int64))]
                cand = np.union1d(nbrs, cited)
            else:
                cand = nbrs
            sims = self.embeddings_[cand] @ q
            order = np.argsort(-sims, kind="stable")
            out.append(Candidates(cand[order], sims[order].astype(np.float32), nbrs))
        return out

    def with_papers(self, found: Candidates, papers: Sequence[int] | np.ndarray, query: np.ndarray) -> Candidates:
        """`found` with `papers` added (another retriever's finds for the same draft, already filtered),
        best cosine to the `query` vector first; the neighbours stay the selector's."""
        self._check_indexed()
        cand = np.union1d(found.indexes, np.asarray(papers, dtype=np.int64))
        sims = self.embeddings_[cand] @ query
        order = np.argsort(-sims, kind="stable")
        return Candidates(cand[order], sims[order].astype(np.float32), found.neighbours)

    # --- persistence -----------------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """config.json (hyperparameters, version), state.pt (torch state dict), vocabulary.json."""
        self._check_fitted()
        d = write_config(directory, MODEL_NAME, VERSION,
                         {"params": asdict(self.params), "vocabulary": self.vocabulary_.fingerprint(),
                          "history": self.history_})
        save_state(self.model_.state_dict(), d / STATE_FILE)
        self.vocabulary_.save(d / VOCAB_FILE)
        return d

    @classmethod
    def load(cls, directory: str | Path, snapshot: GraphSnapshot | None = None) -> NNSelect:
        """A saved model; indexes `snapshot` when given (else call index_snapshot before candidates)."""
        d = Path(directory)
        config = read_config(d, MODEL_NAME, VERSION, label="NNSelect", known_params=NNSelectParams.__dataclass_fields__)
        model = cls(**config["params"])
        try:
            model.vocabulary_ = Vocabulary.load(d / VOCAB_FILE)
            state = load_state(d / STATE_FILE, "NNSelect")
        except (OSError, ValueError, RuntimeError) as e:
            raise NotFitted(f"cannot read the NNSelect model in {d}: {e}") from e
        if model.vocabulary_.fingerprint() != config.get("vocabulary"):
            raise NotFitted(f"{d}: vocabulary does not match the model")
        model.model_ = _Embedder(len(model.vocabulary_), model.params.dim, model.params.seed)
        try:
            model.model_.load_state_dict(state)
        except RuntimeError as e:
            raise NotFitted(f"{d}: weights do not fit the configuration: {e}") from e
        model.model_.eval()
        model.history_ = config.get("history", [])
        if snapshot is not None:
            model.index_snapshot(snapshot)
        return model


__all__ = ["Candidates", "NNSelect", "NNSelectParams", "cited_by_cited", "cited_by_cited_matrix", "hard_negatives",
           "triplet_loss"]
