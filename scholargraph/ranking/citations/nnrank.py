"""NNRank (Citeomatic): re-scores NNSelect's candidates from text similarities, shared words and popularity."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from scholargraph.errors import NotFitted
from scholargraph.graph.snapshot import NO_VENUE, NO_YEAR, GraphSnapshot
from scholargraph.progress import progress
from scholargraph.ranking.citations.ann import ExactIndex, normalise_rows
from scholargraph.ranking.citations.bm25 import BM25
from scholargraph.ranking.citations.nnselect import (
    Candidates,
    NNSelect,
    cited_by_cited_matrix,
    weigh_bags,
)
from scholargraph.ranking.citations.optim import DenseAdam, LazyAdam, embed_bags, flushed_denormals
from scholargraph.ranking.citations.text import (
    Bags,
    Corpus,
    Vocabulary,
    bm25_document_weights,
    bm25_pair_scores,
    intersection_idf,
)
from scholargraph.ranking.torch_threads import torch_threads
from scholargraph.registry import load_state, read_config, save_state, write_config

MODEL_NAME = "nnrank"
VERSION = 1
STATE_FILE, VOCAB_FILE = "state.pt", "vocabulary.json"

COSINE_FEATURES = ("title_cosine", "abstract_cosine")
BASE_FEATURES = ("title_shared_idf", "abstract_shared_idf", "log_citations")
SELECTOR_FEATURES = ("nnselect_cosine",)
AGE_FEATURES = ("log_age",)
NEIGHBOUR_FEATURES = ("log_neighbour_citations",)
METADATA_FEATURES = ("venue_prior", "author_prior")
BM25_FEATURES = ("log_bm25",)
ENCODER_FEATURES = ("encoder_cosine", "log_encoder_neighbour_citations")


class EncoderEvidence:
    """A pretrained text encoder's view of (query, candidate) pairs: the cosine of their vectors, and how
    many of the query's nearest papers by that encoder (published no later than the query, never the query
    itself) cite the candidate. The encoder never saw the citation graph, so neither is inflated on the
    ranker's training pairs the way NNSelect's own cosine and neighbours are."""

    def __init__(self, vectors: np.ndarray, snapshot: GraphSnapshot, neighbours: int):
        if len(vectors) != snapshot.n_papers:
            raise ValueError(f"{len(vectors)} encoder vectors for {snapshot.n_papers} papers")
        self.vectors = normalise_rows(np.asarray(vectors, dtype=np.float32))
        self.has_vector: np.ndarray = np.asarray(self.vectors.any(axis=1))
        self.index = ExactIndex(self.vectors, snapshot.paper_year, self.has_vector)
        self.citations = sp.csr_matrix(snapshot.citations)
        self.neighbours = neighbours

    def pairs(self, query_vectors: np.ndarray, query_of_pair: np.ndarray, candidates: np.ndarray,
              max_years: np.ndarray, excluded: list[list[int]]) -> np.ndarray:
        """(pairs, 2): the cosine and log(1 + neighbour citations) of pair i, query query_of_pair[i] (a row of
        `query_vectors`, with its year cap and excluded papers) and candidate candidates[i]. A query without
        a vector has no neighbours and cosine 0."""
        out = np.zeros((len(candidates), 2), dtype=np.float32)
        if len(candidates) == 0:
            return out
        q = normalise_rows(np.asarray(query_vectors, dtype=np.float32))
        out[:, 0] = np.einsum("ij,ij->i", q[query_of_pair], self.vectors[candidates])
        k = min(self.neighbours, int(self.has_vector.sum()))
        if k == 0:
            return out
        nbrs, _ = self.index.search(q, k, max_years=max_years, exclude=excluded)
        order = np.argsort(query_of_pair, kind="stable")
        bounds = np.searchsorted(query_of_pair[order], np.arange(len(q) + 1))
        for r in range(len(q)):
            rows = order[bounds[r]:bounds[r + 1]]
            found = nbrs[r][nbrs[r] >= 0]
            if len(rows) == 0 or not q[r].any() or len(found) == 0:
                continue
            cited = np.sort(self.citations[found].indices)
            c = candidates[rows]
            out[rows, 1] = np.log1p(np.searchsorted(cited, c, side="right") - np.searchsorted(cited, c, side="left"))
        return out


def ranking_triplet_loss(pos_scores: torch.Tensor, neg_scores: torch.Tensor, margin: float) -> torch.Tensor:
    """mean of max(0, margin - s(q, d+) + s(q, d-)) over (query, positive, negative) triplets."""
    return torch.relu(margin - pos_scores + neg_scores).mean()


class _Ranker(nn.Module):
    """Own title and abstract word vectors (cosines per field), plus fixed features, through two ELU layers
    and a sigmoid."""

    mean: torch.Tensor  # buffers (register_buffer), typed for the type checker
    std: torch.Tensor

    def __init__(self, n_words: int, dim: int, n_fixed: int, hidden: int, seed: int):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        # Trained by LazyAdam row by row, hence no autograd on the tables themselves.
        self.title = nn.Parameter(torch.randn(max(n_words, 1), dim, generator=g) / np.sqrt(dim), requires_grad=False)
        self.abstract = nn.Parameter(torch.randn(max(n_words, 1), dim, generator=g) / np.sqrt(dim),
                                     requires_grad=False)
        self.register_buffer("mean", torch.zeros(n_fixed))
        self.register_buffer("std", torch.ones(n_fixed))
        self.hidden1 = nn.Linear(2 + n_fixed, hidden)
        self.hidden2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)
        for layer in (self.hidden1, self.hidden2, self.out):
            nn.init.xavier_uniform_(layer.weight, generator=g)
            nn.init.zeros_(layer.bias)

    def fields(self, bags: Bags, opt: LazyAdam | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Normalised title and abstract vectors of the bags (through `opt` when training)."""
        if opt is not None:
            (t,), (a,) = embed_bags(opt, 0, bags.title), embed_bags(opt, 1, bags.abstract)
        else:
            t = torch.from_numpy(np.asarray(bags.title @ self.title.numpy(), dtype=np.float32))
            a = torch.from_numpy(np.asarray(bags.abstract @ self.abstract.numpy(), dtype=np.float32))
        return nn.functional.normalize(t, dim=-1), nn.functional.normalize(a, dim=-1)

    def head(self, cos_title: torch.Tensor, cos_abstract: torch.Tensor, fixed: torch.Tensor) -> torch.Tensor:
        x = torch.cat([cos_title[:, None], cos_abstract[:, None], (fixed - self.mean) / self.std], dim=1)
        x = nn.functional.elu(self.hidden1(x))
        x = nn.functional.elu(self.hidden2(x))
        return torch.sigmoid(self.out(x)).squeeze(-1)


@dataclass(frozen=True)
class NNRankParams:
    """Hyperparameters (all saved in the JSON config)."""

    dim: int | None = None  # None: NNSelect's dimension with init_from_selector, else 64
    # 64 and 4 since issue 28 (were 32 and 2): on hep-th +0.003 F1@20 without the encoder's evidence and
    # +0.006 with it (docs/citations.md)
    hidden: int = 64
    margin: float = 0.2
    lr: float = 0.01
    batch_size: int = 256
    epochs: int = 4
    max_queries: int = 3000
    min_refs: int = 2
    negatives_per_positive: int = 4
    candidate_negatives: float = 0.6
    random_negatives: float = 0.2
    cited_by_cited_negatives: float = 0.2
    use_age: bool = True
    use_metadata: bool = True
    use_neighbour_citations: bool = True
    use_bm25: bool = False
    # The paper's cosines of the ranker's own title and abstract embeddings. Off by default: on hep-th they
    # cost 0.006 F1@20 and 0.017 MRR (docs/citations.md); NNSelect's cosine carries the text similarity.
    use_text_cosines: bool = False
    # NNSelect's cosine of the pair. Off by default: the selector trains on every citing paper, the ranker's
    # queries included, so on the ranker's training pairs the cosine is inflated and the ranker learns to
    # over-trust it; on hep-th leaving it out gave +0.020 F1@20 and +0.055 MRR (docs/citations.md). The
    # candidates still come from NNSelect, ordered by it.
    use_selector_cosine: bool = False
    # A pretrained encoder's cosine and the citations of its nearest papers to the draft (EncoderEvidence):
    # vectors the recommender gives (CitationRecommender's `encoder`). On hep-th they took NNSelect + NNRank
    # from 0.211 to 0.224 F1@20 and 0.573 to 0.601 MRR (docs/citations.md).
    use_encoder: bool = False
    encoder_neighbours: int = 50
    without: tuple[str, ...] = ()  # features left out (ablations): names from all_feature_names
    # BM25's top this many papers join NNSelect's candidates (0: the selector's alone, as in the paper)
    lexical_candidates: int = 0
    # How the learned cosines sum a field's words: "count" (raw counts), or "tfidf" as NNSelect does. With
    # tables initialised from a tf-idf NNSelect, "tfidf" would seem the match; on hep-th it cost 0.016 F1@20
    # and 0.032 MRR (docs/citations.md), so the default stays "count".
    weighting: str = "count"
    embedding_lr_scale: float = 0.1
    init_from_selector: bool = True
    negative_popularity: float = 0.0
    candidate_positives: bool = True
    seed: int = 0
    threads: int = 1  # torch threads while training, as NNSelectParams.threads (why one)


class NNRank:
    """Citeomatic's re-ranker. Features of a (query, candidate) pair: summed IDF of the words each field
    shares, log(1 + the candidate's in-corpus citations), NNSelect's cosine, the candidate's age at the
    query's year, how many of the query's neighbours cite it, metadata priors (venue, authors); optionally
    the paper's cosines of title and of abstract embeddings (its own word vectors) and the BM25 score.
    Trained with a triplet loss on NNSelect's candidates."""

    _bm25_cache: tuple[Corpus, sp.csr_matrix] | None = None  # the BM25 weights of the corpus last scored

    def __init__(self, **params):
        if "without" in params:  # a JSON config gives a list
            params["without"] = tuple(params["without"])
        self.params = NNRankParams(**params)
        unknown = set(self.params.without) - set(self.all_feature_names)
        if unknown:  # an error now, not after minutes of fitting
            raise ValueError(f"unknown NNRank feature(s) {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(self.all_feature_names)}")

    @property
    def all_feature_names(self) -> tuple[str, ...]:
        """The features the switches turn on, before `without` (the fixed ones in `_fixed`'s column order)."""
        return ((COSINE_FEATURES if self.params.use_text_cosines else ()) + BASE_FEATURES
                + (SELECTOR_FEATURES if self.params.use_selector_cosine else ())
                + (AGE_FEATURES if self.params.use_age else ())
                + (NEIGHBOUR_FEATURES if self.params.use_neighbour_citations else ())
                + (METADATA_FEATURES if self.params.use_metadata else ())
                + (BM25_FEATURES if self.params.use_bm25 else ())
                + (ENCODER_FEATURES if self.params.use_encoder else ()))

    @property
    def feature_names(self) -> tuple[str, ...]:
        """The features the ranker reads: those switched on, less `without` (the ablations)."""
        return tuple(n for n in self.all_feature_names if n not in self.params.without)

    def _weigh(self, bags: Bags) -> Bags:
        return weigh_bags(bags, self.vocabulary_.idf, self.params.weighting)

    @property
    def _n_fixed(self) -> int:
        return len([n for n in self.feature_names if n not in COSINE_FEATURES])

    @property
    def _uses_cosines(self) -> bool:
        return any(name in self.feature_names for name in COSINE_FEATURES)

    @property
    def _table_rows(self) -> int:
        """Rows of the title and abstract tables: one per word when a learned cosine is read, else none."""
        return len(self.vocabulary_) if self._uses_cosines else 0

    def _cosines(self, title: torch.Tensor, abstract: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The two learned cosines, zero when left out (the head keeps its inputs)."""
        return tuple(c if name in self.feature_names else torch.zeros_like(c)  # type: ignore[return-value]
                     for name, c in zip(COSINE_FEATURES, (title, abstract)))

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFitted("NNRank is not fitted: call fit() or load() first")

    # --- features --------------------------------------------------------------------------------

    def _priors(self, corpus: Corpus) -> tuple[np.ndarray, np.ndarray]:
        """Per paper: log(1 + mean citations of its venue), log(1 + most citations of one of its authors),
        from the corpus's own citation counts (cached per corpus)."""
        cache = getattr(self, "_prior_cache", None)
        if cache is not None and cache[0] is corpus:
            return cache[1], cache[2]
        snap = corpus.snapshot
        cites = corpus.cited_count.astype(np.float64)
        venue = snap.paper_venue
        has_v = venue != NO_VENUE
        nv = max(snap.n_venues, 1)
        v_sum = np.bincount(venue[has_v], weights=cites[has_v], minlength=nv)
        v_n = np.bincount(venue[has_v], minlength=nv)
        v_mean = v_sum / np.maximum(v_n, 1)
        venue_prior = np.where(has_v, np.log1p(v_mean[np.where(has_v, venue, 0)]), 0.0).astype(np.float32)
        auth = snap.authorship.tocsr().copy()
        auth.data[:] = 1.0
        author_cites = np.asarray(auth @ cites).ravel()
        by_author = sp.csr_matrix(auth.multiply(author_cites[:, None])).T.tocsr()  # papers x authors
        author_prior = np.log1p(by_author.max(axis=1).toarray().ravel()).astype(np.float32)
        self._prior_cache = (corpus, venue_prior, author_prior)
        return venue_prior, author_prior

    def _bm25_weights(self, corpus: Corpus) -> sp.csr_matrix:
        """The corpus's BM25 document weights under the selector's vocabulary (cached per corpus)."""
        if self._bm25_cache is None or self._bm25_cache[0] is not corpus:
            self._bm25_cache = (corpus, bm25_document_weights(corpus.bags, corpus.vocabulary.idf))
        return self._bm25_cache[1]

    def index_encoder(self, snapshot: GraphSnapshot, vectors: np.ndarray | None) -> NNRank:
        """The pretrained encoder's vectors of `snapshot`'s papers (rows in its order; zero rows: none), which
        `use_encoder` reads; the snapshot the selector indexes."""
        if not self.params.use_encoder:
            return self
        if vectors is None:
            raise NotFitted("NNRank(use_encoder=True) needs the pretrained encoder's vectors of the collection")
        self.encoder_evidence_ = EncoderEvidence(vectors, snapshot, self.params.encoder_neighbours)
        return self

    def _encoder_pairs(self, query_vectors: np.ndarray | None, query_of_pair: np.ndarray, cands: np.ndarray,
                       max_years: np.ndarray, excluded: list[list[int]]) -> np.ndarray | None:
        if not self.params.use_encoder:
            return None
        evidence = getattr(self, "encoder_evidence_", None)
        if evidence is None or query_vectors is None:
            raise NotFitted("NNRank(use_encoder=True) needs the encoder's vectors: of the collection "
                            "(index_encoder) and of the draft")
        return evidence.pairs(query_vectors, query_of_pair, cands, max_years, excluded)

    def _fixed(self, corpus: Corpus, q_bags: Bags, q_rows: np.ndarray, cands: np.ndarray, nn_cos: np.ndarray,
               q_years: np.ndarray, votes: np.ndarray | None, own_citation: np.ndarray | None = None,
               encoder_pairs: np.ndarray | None = None) -> np.ndarray:
        """Fixed (not learned) features of pairs (query row q_rows[i] of q_bags, candidate cands[i])."""
        idf = corpus.vocabulary.idf
        c_bags = corpus.bags.rows(cands)
        qt, qa = q_bags.title[q_rows], q_bags.abstract[q_rows]
        cols = [np.log1p(intersection_idf(qt, c_bags.title, idf)),
                np.log1p(intersection_idf(qa, c_bags.abstract, idf))]
        counts = corpus.cited_count[cands].astype(np.float32)
        if own_citation is not None:
            counts = counts - own_citation  # the query's own citation is not known when it is a draft
        cols.append(np.log1p(np.maximum(counts, 0.0)))
        if self.params.use_selector_cosine:
            cols.append(nn_cos.astype(np.float32))
        if self.params.use_age:
            cy = corpus.years[cands]
            age = np.where((cy == NO_YEAR) | (q_years == NO_YEAR), 0, q_years - cy)
            cols.append(np.log1p(np.maximum(age, 0)).astype(np.float32))
        if self.params.use_neighbour_citations:
            assert votes is not None, "neighbour citations are counted whenever the feature is on"
            cols.append(np.log1p(votes).astype(np.float32))
        if self.params.use_metadata:
            venue_prior, author_prior = self._priors(corpus)
            cols += [venue_prior[cands], author_prior[cands]]
        if self.params.use_bm25:
            cols.append(np.log1p(bm25_pair_scores(q_bags, q_rows, self._bm25_weights(corpus)[cands])))
        if self.params.use_encoder:
            assert encoder_pairs is not None, "the encoder's pair features are computed whenever they are on"
            cols += [encoder_pairs[:, 0], encoder_pairs[:, 1]]
        fixed = [name for name in self.all_feature_names if name not in COSINE_FEATURES]
        kept = [c for name, c in zip(fixed, cols) if name not in self.params.without]
        return np.stack(kept, axis=1).astype(np.float32) if len(cands) and kept else np.zeros((len(cands), len(kept)),
                                                                                              np.float32)

    # --- training --------------------------------------------------------------------------------

    def fit(self, snapshot: GraphSnapshot, selector: NNSelect, as_of: int | None = None, epochs: int | None = None,
            queries: Sequence[int] | np.ndarray | None = None, quiet: bool = True,
            lexical: BM25 | None = None, encoder_vectors: np.ndarray | None = None) -> NNRank:
        """Train on the citations of `snapshot` as of `as_of`: for sampled citing papers, the positives are
        what they cite, the negatives NNSelect's other candidates for them (what the ranker must tell apart
        at run time), random papers and papers cited by their citations. The selector must be fitted; it is
        (re-)indexed on the as-of snapshot if it indexes another one. `queries` (indexes into the as-of
        snapshot) restricts the citing papers. With `lexical_candidates`, `lexical` (a BM25 of the as-of
        snapshot; fitted here when not given) adds its top papers to each query's candidates, as
        CitationRecommender does for drafts. With `use_encoder`, `encoder_vectors` are the pretrained
        encoder's vectors of the as-of snapshot's papers (rows in its order)."""
        with flushed_denormals(), torch_threads(self.params.threads):
            return self._fit(snapshot, selector, as_of, epochs, queries, quiet, lexical, encoder_vectors)

    def _fit(self, snapshot: GraphSnapshot, selector: NNSelect, as_of: int | None, epochs: int | None,
             queries: Sequence[int] | np.ndarray | None, quiet: bool, lexical: BM25 | None,
             encoder_vectors: np.ndarray | None) -> NNRank:
        if not hasattr(selector, "model_"):
            raise NotFitted("NNRank.fit needs a fitted NNSelect")
        prm = self.params
        train = snapshot.as_of(as_of) if as_of is not None else snapshot
        if not hasattr(selector, "corpus_") or not selector.corpus_.matches(train):
            selector.index_snapshot(train)
        corpus = selector.corpus_
        self.vocabulary_ = corpus.vocabulary
        self.index_encoder(corpus.snapshot, encoder_vectors)
        epochs = prm.epochs if epochs is None else epochs
        rng = np.random.default_rng(prm.seed)
        t0 = time.perf_counter()
        cit = sp.csr_matrix(corpus.snapshot.citations).sorted_indices()  # as NNSelect: the graph, not its loading
        text = corpus.has_text
        refs_with_text = np.asarray(cit @ text.astype(np.float32)).ravel()
        eligible = np.flatnonzero(text & (refs_with_text >= prm.min_refs))
        if queries is not None:
            eligible = np.intersect1d(eligible, np.asarray(queries, dtype=np.int64))
        if len(eligible) > prm.max_queries:
            eligible = np.sort(rng.choice(eligible, size=prm.max_queries, replace=False))
        text_ids = np.flatnonzero(text)
        shares = np.array([prm.candidate_negatives, prm.random_negatives, prm.cited_by_cited_negatives], float)
        shares = shares / shares.sum()
        qs, ps, ns = [], [], []
        emb = selector.embeddings_
        bar = progress(total=len(eligible), desc="nnrank candidates", unit="query", quiet=quiet)
        cands: list[Candidates] = []
        snap = corpus.snapshot
        if prm.lexical_candidates and (lexical is None or lexical.snapshot_.paper_ids != snap.paper_ids):
            lexical = BM25().fit(snap)
        titles, abstracts = snap.text_fields()
        for s in range(0, len(eligible), 1024):
            block = eligible[s:s + 1024]
            years = [None if corpus.years[q] == NO_YEAR else int(corpus.years[q]) for q in block]
            found_block = selector.candidates_batch(emb[block], years, [{int(q)} for q in block])
            if prm.lexical_candidates and lexical is not None:
                bm25 = lexical
                found_block = [selector.with_papers(found, [i for i, _ in bm25.recommend(
                    titles[q], abstracts[q], y, (snap.paper_ids[q],), prm.lexical_candidates)], emb[q])
                    for q, y, found in zip(block.tolist(), years, found_block)]
            cands += found_block
        second = cited_by_cited_matrix(cit, eligible)
        vp, vn = [], []
        for r, (q, found) in enumerate(zip(eligible.tolist(), cands)):
            cand = found.indexes
            refs = cit.indices[cit.indptr[q]:cit.indptr[q + 1]]
            pos = refs[text[refs]].astype(np.int64)
            if prm.candidate_positives:
                # The ranker only ever orders candidates: a citation the selector missed teaches it what
                # missed papers look like (lower cosine, fewer citations), the opposite of what it needs.
                pos = pos[np.isin(pos, cand)]
            hard = cand[~np.isin(cand, refs)]
            cbc = second.indices[second.indptr[r]:second.indptr[r + 1]]
            cbc = cbc[text[cbc]]
            m = len(pos) * prm.negatives_per_positive
            kinds = rng.choice(3, size=m, p=shares)
            neg = text_ids[rng.integers(len(text_ids), size=m)]
            for kind, pool in ((0, hard), (2, cbc)):
                sel = np.flatnonzero(kinds == kind)
                if len(pool) and len(sel):
                    if prm.negative_popularity > 0:
                        # Popular uncited candidates are the ones that compete for the top of the ranking: drawn
                        # uniformly they are rare, and the ranker learns only "popular beats obscure".
                        w = (1.0 + corpus.cited_count[pool]) ** prm.negative_popularity
                        neg[sel] = pool[np.searchsorted(np.cumsum(w), rng.random(len(sel)) * w.sum()).clip(
                            0, len(pool) - 1)]
                    else:
                        neg[sel] = pool[rng.integers(len(pool), size=len(sel))]
            p_rep = np.repeat(pos, prm.negatives_per_positive)
            ok = (neg != q) & ~np.isin(neg, refs)
            qs.append(np.full(ok.sum(), q))
            ps.append(p_rep[ok])
            ns.append(neg[ok])
            vp.append(found.neighbour_citations(cit, p_rep[ok]))
            vn.append(found.neighbour_citations(cit, neg[ok]))
            bar.update(1)
        bar.close()
        q_all = np.concatenate(qs) if qs else np.zeros(0, np.int64)
        p_all = np.concatenate(ps) if ps else np.zeros(0, np.int64)
        n_all = np.concatenate(ns) if ns else np.zeros(0, np.int64)
        ncos_p = np.einsum("ij,ij->i", emb[q_all], emb[p_all]) if len(q_all) else np.zeros(0, np.float32)
        ncos_n = np.einsum("ij,ij->i", emb[q_all], emb[n_all]) if len(q_all) else np.zeros(0, np.float32)
        qy = corpus.years[q_all]
        v_pos = np.concatenate(vp) if vp else np.zeros(0, np.float32)
        v_neg = np.concatenate(vn) if vn else np.zeros(0, np.float32)
        e_pos = e_neg = None
        if prm.use_encoder:  # each query's neighbours by the encoder: no later paper, never itself
            uq, q_of = np.unique(q_all, return_inverse=True)
            vec, caps, excl = self.encoder_evidence_.vectors[uq], corpus.years[uq], [[int(q)] for q in uq]
            e_pos = self._encoder_pairs(vec, q_of, p_all, caps, excl)
            e_neg = self._encoder_pairs(vec, q_of, n_all, caps, excl)
        f_pos = self._fixed(corpus, corpus.bags, q_all, p_all, ncos_p, qy, v_pos,
                            own_citation=np.ones(len(q_all), np.float32), encoder_pairs=e_pos)
        own_n = np.asarray(cit[q_all, n_all]).ravel().astype(np.float32) if len(q_all) else np.zeros(0, np.float32)
        f_neg = self._fixed(corpus, corpus.bags, q_all, n_all, ncos_n, qy, v_neg, own_citation=own_n,
                            encoder_pairs=e_neg)
        prep_seconds = time.perf_counter() - t0
        n_fixed = self._n_fixed
        self.dim_ = int(prm.dim or (selector.params.dim if prm.init_from_selector else 64))
        self.model_ = _Ranker(self._table_rows, self.dim_, n_fixed, prm.hidden, prm.seed)
        if prm.init_from_selector and self._uses_cosines:
            # Start both field tables from NNSelect's word vectors (trained on other citing papers):
            # a text similarity that already means "likely cited", which the ranker then only adjusts.
            words = selector.model_.words.detach()
            if words.shape[1] != self.dim_:
                raise ValueError(f"init_from_selector needs dim={words.shape[1]} (NNSelect's), not {self.dim_}")
            with torch.no_grad():
                self.model_.title.copy_(words)
                self.model_.abstract.copy_(words)
        both = np.concatenate([f_pos, f_neg]) if len(f_pos) else np.zeros((1, n_fixed), np.float32)
        with torch.no_grad():
            self.model_.mean.copy_(torch.from_numpy(both.mean(axis=0)))
            self.model_.std.copy_(torch.from_numpy(np.maximum(both.std(axis=0), 1e-3)))
        sparse_opt = LazyAdam([self.model_.title.data, self.model_.abstract.data], lr=prm.lr * prm.embedding_lr_scale)
        dense_params = [p for name, p in self.model_.named_parameters() if not name.startswith(("title", "abstract"))]
        dense_opt = DenseAdam(dense_params, lr=prm.lr)
        self.history_ = [{"prepare_seconds": round(prep_seconds, 2), "queries": int(len(eligible)),
                          "triplets": int(len(q_all))}]
        for epoch in range(epochs):
            t1 = time.perf_counter()
            order = rng.permutation(len(q_all))
            total, seen = 0.0, 0
            bar = progress(total=len(order), desc=f"nnrank epoch {epoch + 1}/{epochs}", unit="triplet", quiet=quiet)
            self.model_.train()
            for s in range(0, len(order), prm.batch_size):
                b = order[s:s + prm.batch_size]
                loss = self._batch_loss(corpus, sparse_opt, q_all[b], p_all[b], n_all[b], f_pos[b], f_neg[b])
                dense_opt.zero_grad()
                loss.backward()
                sparse_opt.step()
                dense_opt.step()
                total += float(loss.detach()) * len(b)
                seen += len(b)
                bar.update(len(b))
            bar.close()
            seconds = time.perf_counter() - t1
            self.history_.append({"epoch": epoch + 1, "loss": total / max(seen, 1), "triplets": seen,
                                  "seconds": round(seconds, 2), "triplets_per_s": round(seen / max(seconds, 1e-9))})
        self.model_.eval()
        return self

    def _batch_loss(self, corpus: Corpus, opt: LazyAdam, q: np.ndarray, p: np.ndarray, n: np.ndarray, f_pos: np.ndarray,
                    f_neg: np.ndarray) -> torch.Tensor:
        if not self._uses_cosines:
            zero = torch.zeros(len(q))
            return ranking_triplet_loss(self.model_.head(zero, zero, torch.from_numpy(f_pos)),
                                        self.model_.head(zero, zero, torch.from_numpy(f_neg)), self.params.margin)
        docs, inverse = np.unique(np.concatenate([q, p, n]), return_inverse=True)
        t, a = self.model_.fields(self._weigh(corpus.bags.rows(docs)), opt)
        b = len(q)
        inv = torch.from_numpy(inverse)
        iq, ip, i_n = inv[:b], inv[b:2 * b], inv[2 * b:]
        s_pos = self.model_.head(*self._cosines((t[iq] * t[ip]).sum(-1), (a[iq] * a[ip]).sum(-1)),
                                 torch.from_numpy(f_pos))
        s_neg = self.model_.head(*self._cosines((t[iq] * t[i_n]).sum(-1), (a[iq] * a[i_n]).sum(-1)),
                                 torch.from_numpy(f_neg))
        return ranking_triplet_loss(s_pos, s_neg, self.params.margin)

    # --- scoring ---------------------------------------------------------------------------------

    def score(self, corpus: Corpus, title: str | None, abstract: str | None, candidates: Candidates,
              year: int | None = None, query_vector: np.ndarray | None = None,
              exclude: Sequence[int] = ()) -> np.ndarray:
        """Scores in (0, 1) of the selector's `candidates` (indexes into `corpus`, the selector's corpus) for
        a draft of `year` (None: a draft written now, the year after the corpus's last). With `use_encoder`,
        `query_vector` is the draft's by the pretrained encoder, and `exclude` the papers that are the draft
        itself (never its own neighbour)."""
        self._check_fitted()
        if corpus.vocabulary.fingerprint() != self.vocabulary_.fingerprint():
            raise NotFitted("NNRank was trained with another vocabulary than this corpus's selector")
        cands = np.asarray(candidates.indexes, dtype=np.int64)
        if len(cands) == 0:
            return np.zeros(0, dtype=np.float32)
        if year is None or year == NO_YEAR:
            year = int(corpus.years.max(initial=NO_YEAR)) + 1
        q_bags = Bags.of(self.vocabulary_, [title], [abstract])
        rows = np.zeros(len(cands), dtype=np.int64)
        qy = np.full(len(cands), year, dtype=np.int64)
        votes = (candidates.neighbour_citations(corpus.snapshot.citations) if self.params.use_neighbour_citations
                 else None)
        enc = self._encoder_pairs(None if query_vector is None else np.asarray(query_vector)[None, :], rows, cands,
                                  np.array([year]), [[int(i) for i in exclude]])
        fixed = self._fixed(corpus, q_bags, rows, cands, np.asarray(candidates.cosines, np.float32), qy, votes,
                            encoder_pairs=enc)
        with torch.no_grad():
            if self._uses_cosines:
                qt, qa = self.model_.fields(self._weigh(q_bags))
                ct, ca = self.model_.fields(self._weigh(corpus.bags.rows(cands)))
                cosines = self._cosines(ct @ qt[0], ca @ qa[0])
            else:
                cosines = (torch.zeros(len(cands)), torch.zeros(len(cands)))
            s = self.model_.head(*cosines, torch.from_numpy(fixed))
        return s.numpy().astype(np.float32)

    # --- persistence -----------------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """config.json (hyperparameters, version, features), state.pt (torch state dict), vocabulary.json."""
        self._check_fitted()
        d = write_config(directory, MODEL_NAME, VERSION,
                         {"params": asdict(self.params), "dim": self.dim_, "features": list(self.feature_names),
                          "vocabulary": self.vocabulary_.fingerprint(), "history": self.history_})
        save_state(self.model_.state_dict(), d / STATE_FILE)
        self.vocabulary_.save(d / VOCAB_FILE)
        return d

    @classmethod
    def load(cls, directory: str | Path) -> NNRank:
        d = Path(directory)
        config = read_config(d, MODEL_NAME, VERSION, label="NNRank", known_params=NNRankParams.__dataclass_fields__)
        model = cls(**config["params"])
        if list(model.feature_names) != config.get("features"):
            raise NotFitted(f"{d}: saved features {config.get('features')} differ from this code's")
        try:
            model.vocabulary_ = Vocabulary.load(d / VOCAB_FILE)
            state = load_state(d / STATE_FILE, "NNRank")
        except (OSError, ValueError, RuntimeError) as e:
            raise NotFitted(f"cannot read the NNRank model in {d}: {e}") from e
        if model.vocabulary_.fingerprint() != config.get("vocabulary"):
            raise NotFitted(f"{d}: vocabulary does not match the model")
        model.dim_ = int(config.get("dim") or 0)
        model.model_ = _Ranker(model._table_rows, model.dim_, model._n_fixed, model.params.hidden,
                               model.params.seed)
        try:
            model.model_.load_state_dict(state)
        except RuntimeError as e:
            raise NotFitted(f"{d}: weights do not fit the configuration: {e}") from e
        model.model_.eval()
        model.history_ = config.get("history", [])
        return model


__all__ = ["BASE_FEATURES", "COSINE_FEATURES", "ENCODER_FEATURES", "SELECTOR_FEATURES", "EncoderEvidence", "NNRank",
           "NNRankParams", "ranking_triplet_loss"]
