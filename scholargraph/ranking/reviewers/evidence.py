"""Evidence for reviewer recommendation: semantic, topic and citation scores of (submission, reviewer paper) pairs."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from scholargraph.conference.conflicts import AuthorDetails, ConflictChecker
from scholargraph.conference.submissions import Query, ReviewerPool, submission_authors
from scholargraph.errors import NotFitted, UsageError
from scholargraph.graph.records import paper_text
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot
from scholargraph.graph.vectors import citation_vector_for_references
from scholargraph.user_files import read_jsonl

CITATION_PARTS = ("vector", "direct", "coupling", "cocitation")
QUERY_FEATURES = ("sem_mean", "sem_std", "topic_mean", "topic_std", "vec_mean", "vec_std", "lex_mean", "lex_std",
                  "has_text", "has_topic", "has_refs", "log_refs", "topic_entropy")
# Floors on the background spread: a query whose text matches nothing would otherwise divide by ~0.
_MIN_STD = {"semantic": 0.02, "topic": 0.02, "vector": 0.02, "lexical": 0.01}
_EPS = 1e-12


# --- per-query evidence -----------------------------------------------------------------------------


@dataclass
class Evidence:
    """The evidence of one query against some reviewers, padded to [R, P] (P papers per reviewer at most).

    Raw scores: `semantic` (text cosine), `topic` (1 - Jensen-Shannon distance of topic mixtures),
    `citation_parts[..., k]` for CITATION_PARTS (citation-vector cosine; the paper is a reference of the
    query; bibliographic coupling with the query; co-citation with the query's references) and `citation`
    (their fixed combination, for baselines). `mask[..., m]` says whether evidence m exists for the pair: a
    missing one is not a zero. `background` holds the mean and spread of semantic, topic and vector scores of
    the query against a fixed random sample of the corpus (the calibration's reference), then those of the
    lexical (TF-IDF) cosine, which `lexical` holds per pair when the index has TF-IDF rows (the second
    component of semantic evidence: exact terms, where the text vectors see latent ones)."""

    query_id: str
    reviewer_rows: np.ndarray
    reviewer_ids: list[str]
    papers: np.ndarray
    valid: np.ndarray
    semantic: np.ndarray
    topic: np.ndarray
    citation_parts: np.ndarray
    citation: np.ndarray
    mask: np.ndarray
    background: np.ndarray
    query_features: np.ndarray
    n_papers: np.ndarray
    no_history: np.ndarray
    extra: dict = field(default_factory=dict)
    lexical: np.ndarray | None = None
    # Corpus-level mean and spread of the same 8 scores between random pairs of papers: the scale on which
    # evidence is calibrated, the same for every submission, so that scores compare across submissions.
    reference: np.ndarray | None = None
    # [R, P] per-paper weights from the reviewers' own expertise settings (conference/profiles.py), multiplying
    # a paper's calibrated evidence; None: every paper weighs 1.
    weight: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.papers.shape

    def raw(self) -> np.ndarray:
        """[R, P, 3] raw semantic, topic and combined citation scores (0 where missing)."""
        return np.stack([self.semantic, self.topic, self.citation], axis=-1) * self.mask


def combine_citation(parts: np.ndarray) -> np.ndarray:
    """One citation score in [0, 1] from the CITATION_PARTS: a direct link is decisive; otherwise a noisy-OR
    of coupling and co-citation with the positive part of the vector cosine, halved because FastRP cosines of
    unrelated papers in one field are well above zero."""
    vec, direct, coupling, cocit = (parts[..., k] for k in range(4))
    soft = 1.0 - (1.0 - np.clip(coupling, 0, 1)) * (1.0 - np.clip(cocit, 0, 1)) * (1.0 - 0.5 * np.clip(vec, 0, 1))
    return np.maximum(direct, soft).astype(np.float32)


def topic_similarity(q: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """1 - Jensen-Shannon distance (base 2, so in [0, 1]) between a mixture q and each row."""
    q = np.asarray(q, dtype=np.float64)
    p = np.asarray(rows, dtype=np.float64)
    q = q / max(q.sum(), _EPS)
    p = p / np.maximum(p.sum(axis=1, keepdims=True), _EPS)
    m = 0.5 * (p + q[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        kl_p = np.where(p > 0, p * np.log2(np.maximum(p, _EPS) / np.maximum(m, _EPS)), 0.0).sum(axis=1)
        kl_q = np.where(q[None, :] > 0, q[None, :] * np.log2(np.maximum(q[None, :], _EPS) / np.maximum(m, _EPS)),
                        0.0).sum(axis=1)
    jsd = np.clip(0.5 * (kl_p + kl_q), 0.0, 1.0)
    return (1.0 - np.sqrt(jsd)).astype(np.float32)


def _l2_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def lexical_matrix(snapshot: GraphSnapshot, encoder, texts: Sequence[str] | None = None) -> sp.csr_matrix | None:
    """Every paper's TF-IDF row from an encoder that has `tfidf(texts)` (empty rows without text); None for
    encoders without one."""
    if not hasattr(encoder, "tfidf"):
        return None
    texts = texts if texts is not None else [snapshot.text(i) for i in range(snapshot.n_papers)]
    idx = np.flatnonzero([bool(t and t.strip()) for t in texts])
    if len(idx) == 0:
        return sp.csr_matrix((snapshot.n_papers, 1), dtype=np.float32)
    rows = sp.csr_matrix(encoder.tfidf([texts[int(i)] for i in idx]), dtype=np.float32)
    pick = sp.csr_matrix((np.ones(len(idx), np.float32), (idx, np.arange(len(idx)))),
                         shape=(snapshot.n_papers, len(idx)))
    return (pick @ rows).tocsr()


def _topic_rows(topic_model, texts: Sequence[str]) -> np.ndarray:
    """Topic mixtures with zero rows for texts the model cannot read (it returns them uniform)."""
    try:
        theta, empty = topic_model.transform(texts, return_empty=True)
    except TypeError:
        theta, empty = topic_model.transform(texts), None
    theta = np.asarray(theta, dtype=np.float32)
    if empty is not None:
        theta[np.asarray(empty, dtype=bool)] = 0.0
    return theta


def _stored_topic_rows(topic_model, stored: np.ndarray, texts: Sequence[str]) -> np.ndarray:
    """`_topic_rows` from the mixtures `features` stored (float32 rows of the same deterministic inference):
    only which texts the model cannot read is worked out again, from their words, without inference."""
    theta = np.array(stored, dtype=np.float32)
    theta[np.diff(topic_model.vectorize(texts).indptr) == 0] = 0.0
    return theta


def _segment_rank(owner: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Rank (0 = best) of each entry within its owner's segment, by descending score."""
    order = np.lexsort((-score, owner))
    sorted_owner = owner[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_owner)) + 1]
    seg_start = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - seg_start
    return rank


@dataclass
class PoolFeatures:
    """The features of every paper of one pool, gathered into contiguous arrays (sorted paper indices)."""

    papers: np.ndarray
    text: np.ndarray
    topics: np.ndarray
    cvec: np.ndarray
    has_text: np.ndarray
    has_topic: np.ndarray
    has_cvec: np.ndarray
    lexical: sp.csr_matrix | None = None
    position: np.ndarray | None = None  # snapshot paper index -> row here (-1 outside the pool)


class EvidenceIndex:
    """Paper-level features of a snapshot and the machinery to score submissions against reviewers' papers.

    text_vectors: (n x d) text embeddings (zero row = no text); topic_vectors: (n x K) topic mixtures (zero row
    = no text); citation_vectors: (n x c) citation embeddings (zero row = no citation evidence); lexical
    (optional, n x V sparse): TF-IDF rows, a second semantic component. The encoder and topic model are needed
    only for submissions given as text (JSONL), not for in-graph papers; lexical rows of such submissions come
    from the encoder's `tfidf(texts)` (tfidf-svd has it).
    """

    # What the store holds beyond the snapshot for conflicts (use_author_details): none until the service
    # gives it. Class-level, so an index loaded from the evidence cache has them too.
    author_details: AuthorDetails | None = None
    institution_years: int | None = 3
    _coi: ConflictChecker | None = None
    # Where the text vectors of submissions are kept (remember_encodings): none unless the service gives one.
    _encodings: Any = None

    def __init__(self, snapshot: GraphSnapshot, text_vectors: np.ndarray, topic_vectors: np.ndarray,
                 citation_vectors: np.ndarray, *, encoder=None, topic_model=None, background: int = 2000,
                 seed: int = 0, lexical: sp.spmatrix | None = None, normalized: bool = False):
        """`normalized`: the arrays are already this class's own (`load` of what `save` wrote), so they are
        kept as they are: normalising unit rows again would move them by a rounding error."""
        n = snapshot.n_papers
        for name, arr in (("text_vectors", text_vectors), ("topic_vectors", topic_vectors),
                          ("citation_vectors", citation_vectors)):
            if arr.shape[0] != n:
                raise ValueError(f"{name} has {arr.shape[0]} rows, the snapshot {n} papers")
        self.snapshot = snapshot
        self.text = text_vectors if normalized else _l2_rows(text_vectors)
        topics = np.asarray(topic_vectors, dtype=np.float32)
        sums = topics.sum(axis=1, keepdims=True)
        self.topics = topics if normalized else np.divide(topics, sums, out=np.zeros_like(topics), where=sums > 0)
        self.cvec = citation_vectors if normalized else _l2_rows(citation_vectors)
        self.encoder = encoder
        self.topic_model = topic_model
        self.has_text = np.linalg.norm(self.text, axis=1) > 0
        self.has_topic = self.topics.sum(axis=1) > 0
        self.lexical = None
        self.has_lex = np.zeros(n, dtype=bool)
        if lexical is not None:
            if lexical.shape[0] != n:
                raise ValueError(f"lexical has {lexical.shape[0]} rows, the snapshot {n} papers")
            lex = sp.csr_matrix(lexical, dtype=np.float32)
            norms = np.sqrt(np.asarray(lex.multiply(lex).sum(axis=1)).ravel())
            self.lexical = lex if normalized else (
                sp.diags(np.divide(1, norms, out=np.zeros_like(norms), where=norms > 0)) @ lex).tocsr()
            self.has_lex = norms > 0
        cit = snapshot.citations.tocsr().astype(np.float32)
        cit.sort_indices()
        self.citations = cit
        self.cited_by = cit.T.tocsr()
        self.cited_by.sort_indices()
        self.out_degree = np.diff(cit.indptr).astype(np.float32)
        self.in_degree = np.diff(self.cited_by.indptr).astype(np.float32)
        self.has_cvec = np.linalg.norm(self.cvec, axis=1) > 0
        self.has_citation = self.has_cvec | (self.out_degree > 0) | (self.in_degree > 0)
        self.year = np.asarray(snapshot.paper_year)
        rng = np.random.default_rng(seed)
        pool = np.flatnonzero(self.has_text & ~np.asarray(snapshot.paper_stub))
        if len(pool) == 0:
            pool = np.arange(n)
        self.background = np.sort(rng.choice(pool, size=min(background, len(pool)), replace=False))
        self._seed = seed
        self._mark = np.zeros(n, dtype=np.float32)
        self._pool_features: tuple[ReviewerPool, PoolFeatures] | None = None
        self._background_rows: tuple | None = None
        self._last_background: tuple[Query, np.ndarray] | None = None
        self._reference: np.ndarray | None = None

    # --- building -----------------------------------------------------------------------------------

    @classmethod
    def build(cls, snapshot: GraphSnapshot, *, encoder=None, num_topics: int = 10, citation_dim: int = 64,
              fit_sample: int | None = 200_000, seed: int = 0, topic_model=None,
              until_year: int | None = None, lexical: bool = True,
              text_vectors: np.ndarray | None = None, stored_topic_vectors: np.ndarray | None = None,
              stored_citation_vectors: np.ndarray | None = None) -> EvidenceIndex:
        """Fit the text encoder and topic model on the snapshot's texts (a sample of `fit_sample` at most) and
        compute every paper's vectors. `encoder` is an encoder object (used as it is when already fitted) or
        a name in graph.vectors' ENCODERS (default: tfidf-svd); a given `topic_model` is used as it is.
        With `until_year` (held-out evaluations), the models are fitted on the papers up to that year only,
        and citation vectors ignore the references of later papers, so that a held-out paper's own citations
        cannot pull its references towards anyone's papers. With `lexical` and an encoder that has
        `tfidf(texts)`, its TF-IDF rows become the lexical component of semantics. `text_vectors` (the
        vectors `features` stored with this fitted encoder) are used instead of encoding every text again;
        likewise `stored_topic_vectors` (Paper.topicVector of this topic model) and `stored_citation_vectors`
        (Paper.citationVector), when the caller knows that `features` computed them on the graph as it is now
        (they are the same computations: the features pipeline owns them). Not with `until_year`."""
        if until_year is not None and (stored_topic_vectors is not None or stored_citation_vectors is not None):
            raise ValueError("stored topic and citation vectors see the whole graph: not for a held-out build")
        from scholargraph.graph import topics as topics_mod
        from scholargraph.graph import vectors as vectors_mod

        texts = [snapshot.text(i) for i in range(snapshot.n_papers)]
        has = np.array([bool(t.strip()) for t in texts])
        idx = np.flatnonzero(has)
        past = np.ones(snapshot.n_papers, dtype=bool)
        if until_year is not None:
            y = np.asarray(snapshot.paper_year)
            past = (y == NO_YEAR) | (y <= until_year)
        fit_pool = np.flatnonzero(has & past)
        rng = np.random.default_rng(seed)
        fit_idx = fit_pool if fit_sample is None or len(fit_pool) <= fit_sample else np.sort(
            rng.choice(fit_pool, fit_sample, replace=False))
        fit_texts = [texts[i] for i in fit_idx]
        if encoder is None:
            encoder = vectors_mod.make_encoder()
        elif isinstance(encoder, str):
            encoder = vectors_mod.make_encoder(encoder)
        if not getattr(encoder, "fitted_", False):  # a fitted encoder (the graph's own) is used as it is
            encoder.fit(fit_texts)
        if topic_model is None:
            topic_model = topics_mod.TopicModel(num_topics=num_topics)
            topic_model.fit(fit_texts)
        stored = text_vectors is not None
        text_vectors = (np.asarray(text_vectors, dtype=np.float32) if stored
                        else np.zeros((snapshot.n_papers, 1), dtype=np.float32))
        topic_vectors = np.zeros((snapshot.n_papers, 1), dtype=np.float32)
        if len(idx):
            if not stored:
                titles, abstracts = snapshot.text_fields()
                enc = np.asarray(encoder.encode_fields([titles[int(i)] for i in idx], [abstracts[int(i)] for i in idx]),
                                 dtype=np.float32)
                text_vectors = np.zeros((snapshot.n_papers, enc.shape[1]), dtype=np.float32)
                text_vectors[idx] = enc
            top = (_stored_topic_rows(topic_model, stored_topic_vectors[idx], [texts[i] for i in idx])
                   if stored_topic_vectors is not None else _topic_rows(topic_model, [texts[i] for i in idx]))
            topic_vectors = np.zeros((snapshot.n_papers, top.shape[1]), dtype=np.float32)
            topic_vectors[idx] = top
        cit = snapshot.citations
        if until_year is not None:
            cit = (sp.diags(past.astype(np.float32)) @ cit).tocsr()
            cit.eliminate_zeros()
        citation_vectors = np.asarray(
            stored_citation_vectors if stored_citation_vectors is not None
            else vectors_mod.citation_vectors(cit, dim=citation_dim, seed=seed), dtype=np.float32)
        # Lexical rows come from an encoder fitted on the corpus (tfidf-svd: its latent dimensions lose exact
        # terms). A pretrained sentence encoder goes without: with library TF-IDF rows beside MiniLM, the
        # expertise loss on the gold-standard dev half rose from 0.194 to 0.215 (docs/reviewers.md).
        lex = lexical_matrix(snapshot, encoder, texts) if lexical else None
        return cls(snapshot, text_vectors, topic_vectors, citation_vectors, encoder=encoder,
                   topic_model=topic_model, seed=seed, lexical=lex)

    # --- on disk (a cache: the evidence of one graph state, built once for many queries) ----------------

    def save(self, directory) -> Path:
        """The snapshot and the per-paper arrays as `load` reads them back (npz and JSON, no pickles). The
        encoder and topic model are not written: they are saved models of their own, given to `load`."""
        path = Path(directory)
        self.snapshot.save(path / "snapshot")
        arrays = {"text": self.text, "topics": self.topics, "cvec": self.cvec,
                  "background": np.asarray([len(self.background), self._seed], dtype=np.int64)}
        if self.lexical is not None:
            arrays.update({"lex_data": self.lexical.data, "lex_indices": self.lexical.indices,
                           "lex_indptr": self.lexical.indptr, "lex_shape": np.asarray(self.lexical.shape)})
        np.savez(path / "evidence.npz", allow_pickle=False, **arrays)
        return path

    @classmethod
    def load(cls, directory, *, encoder=None, topic_model=None,
             load_topic_model: Callable[[], Any] | None = None) -> EvidenceIndex:
        """The index `save` wrote, with the encoder and topic model it was built with; ValueError when the
        files are missing or broken. `load_topic_model` instead of `topic_model`: called the first time the
        topic model is needed (a submission given as text), so that in-graph queries never load gensim."""
        path = Path(directory)
        snapshot = GraphSnapshot.load(path / "snapshot")
        try:
            with np.load(path / "evidence.npz", allow_pickle=False) as npz:
                a = {k: npz[k] for k in npz.files}
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: not a saved evidence index ({exc})") from None
        lexical = (sp.csr_matrix((a["lex_data"], a["lex_indices"], a["lex_indptr"]),
                                 shape=tuple(int(x) for x in a["lex_shape"])) if "lex_data" in a else None)
        background, seed = (int(x) for x in a["background"])
        index = cls(snapshot, a["text"], a["topics"], a["cvec"], encoder=encoder, topic_model=topic_model,
                    background=background, seed=seed, lexical=lexical, normalized=True)
        if topic_model is None:
            index._load_topic_model = load_topic_model
        return index

    @property
    def topic_model(self):
        """The topic model that turns submission texts into topic mixtures (None: the index has none)."""
        if self._load_topic_model is not None:
            self._topic_model, self._load_topic_model = self._load_topic_model(), None
        return self._topic_model

    @topic_model.setter
    def topic_model(self, model) -> None:
        self._topic_model, self._load_topic_model = model, None

    def id_resolver(self):
        """The snapshot's IdResolver (built once): user ids to node ids."""
        if getattr(self, "_ids", None) is None:
            from scholargraph.graph.ids import IdResolver

            self._ids = IdResolver.for_snapshot(self.snapshot)
        return self._ids

    def conflict_checker(self):
        """The default ConflictChecker of this snapshot (built once), with the authors' institutions and email
        domains when the service gave them (use_author_details)."""
        if self._coi is None:
            self._coi = ConflictChecker(self.snapshot, details=self.author_details,
                                        institution_years=self.institution_years)
        return self._coi

    def use_author_details(self, details, institution_years: int | None = 3) -> None:
        """What the store holds beyond the snapshot for conflicts (conflicts.AuthorDetails), read by the service."""
        self.author_details = details
        self.institution_years = institution_years
        self._coi = None

    def pool_features(self, pool: ReviewerPool) -> PoolFeatures:
        """Contiguous copies of the pool's paper features, kept for the last pool asked about."""
        if self._pool_features is None or self._pool_features[0] is not pool:
            u = np.unique(pool.papers.indices).astype(np.int64)
            lex = self.lexical[u] if self.lexical is not None else None
            position = np.full(self.snapshot.n_papers, -1, dtype=np.int64)
            position[u] = np.arange(len(u))
            self._pool_features = (pool, PoolFeatures(u, self.text[u], self.topics[u], self.cvec[u], self.has_text[u],
                                                      self.has_topic[u], self.has_cvec[u], lex, position))
        return self._pool_features[1]

    # --- queries ------------------------------------------------------------------------------------

    def reference_vector(self, refs: np.ndarray) -> np.ndarray | None:
        """The query's citation vector: the normalised mean of its references' vectors (None without any)."""
        refs = np.asarray(refs, dtype=np.int64)
        if len(refs) == 0 or not self.has_cvec[refs].any():
            return None
        return citation_vector_for_references(self.cvec, refs)

    def query_for_paper(self, paper: str | int, *, author_names: Sequence[str] | None = None) -> Query:
        """A paper of the snapshot as a submission (held out: it is never its own evidence)."""
        i = self.snapshot.paper_index.get(paper, -1) if isinstance(paper, str) else int(paper)
        if not 0 <= i < self.snapshot.n_papers:
            raise UsageError(f"unknown paper {paper!r}")
        refs = self.citations.indices[self.citations.indptr[i]:self.citations.indptr[i + 1]].astype(np.int64)
        year = int(self.year[i]) if self.year[i] != NO_YEAR else None
        a_rows = self.snapshot.authorship.tocsc()[:, i].indices
        ids = tuple(self.snapshot.author_ids[a] for a in a_rows)
        names_all = self.snapshot.author_names or [None] * self.snapshot.n_authors
        names = tuple(author_names) if author_names is not None else tuple(n for a in a_rows if (n := names_all[a]))
        title = (self.snapshot.titles[i] if self.snapshot.titles is not None else None) or ""
        return Query(id=self.snapshot.paper_ids[i], text_vector=self.text[i] if self.has_text[i] else None,
                     topic_vector=self.topics[i] if self.has_topic[i] else None, references=refs, year=year,
                     submission_year=year,
                     author_names=names, author_ids=ids, paper_index=i,
                     citation_vector=self.reference_vector(refs), title=title,
                     lexical_vector=self.lexical[i] if self.lexical is not None and self.has_lex[i] else None)

    def encode_texts(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Text and topic vectors of new texts (zero rows for empty texts)."""
        if self.encoder is None or self.topic_model is None:
            raise NotFitted("this evidence index has no text encoder / topic model: submissions given as text "
                            "need EvidenceIndex.build() or an encoder and topic model")
        n = len(texts)
        has = np.array([bool(t and t.strip()) for t in texts], dtype=bool)
        text = np.zeros((n, self.text.shape[1]), dtype=np.float32)
        topics = np.zeros((n, self.topics.shape[1]), dtype=np.float32)
        if has.any():
            keep = [t for t, h in zip(texts, has) if h]
            text[has] = _l2_rows(self._encode(keep))
            topics[has] = _topic_rows(self.topic_model, keep)
        return text, topics

    def remember_encodings(self, cache) -> None:
        """Keep the text vectors of each set of submissions in `cache` (a graph.snapshot_cache.StateCache): the
        same submissions encoded again by the same encoder (a second `recommend` of one file, `evaluate` then
        `recommend`) are read back instead of encoded, bit for bit what the first call computed. The key is the
        whole list of texts, not each text: an int8 encoder's vector of a text depends on its batch."""
        self._encodings = cache

    def _encode(self, texts: list[str]) -> np.ndarray:
        def encode() -> np.ndarray:
            return np.asarray(self.encoder.encode(texts), dtype=np.float32)

        key = getattr(self.encoder, "key", None)
        if self._encodings is None or not isinstance(key, str):
            return encode()
        digest = hashlib.sha256(json.dumps(texts, ensure_ascii=False).encode("utf-8")).hexdigest()
        return self._encodings.get({"encoder": key, "texts": digest}, encode,
                                   lambda vectors, path: np.save(path / "vectors.npy", vectors),
                                   lambda path: np.load(path / "vectors.npy"))

    def lexical_rows(self, texts: Sequence[str]) -> sp.csr_matrix | None:
        """L2-normalised TF-IDF rows of new texts in the index's lexical space (None without one)."""
        if self.lexical is None or self.encoder is None or not hasattr(self.encoder, "tfidf"):
            return None
        lex = sp.csr_matrix(self.encoder.tfidf(list(texts)), dtype=np.float32)
        if lex.shape[1] != self.lexical.shape[1]:
            return None
        norms = np.sqrt(np.asarray(lex.multiply(lex).sum(axis=1)).ravel())
        return (sp.diags(np.divide(1, norms, out=np.zeros_like(norms), where=norms > 0)) @ lex).tocsr()

    def query_from_submission(self, record: Mapping, *, text_vector: np.ndarray | None = None,
                              topic_vector: np.ndarray | None = None,
                              lexical_vector: sp.csr_matrix | None = None) -> Query:
        """A submission `{id, title, abstract, year, authors: [names or {name, id?, email?, affiliation?}],
        author_ids?, references: [graph ids]}`.
        References unknown to the snapshot are dropped (they cannot link to anyone's papers)."""
        if "id" not in record:
            raise UsageError("a submission needs an id")
        text = paper_text(record.get("title"), record.get("abstract"))
        if text_vector is None or topic_vector is None:
            tv, pv = self.encode_texts([text])
            text_vector, topic_vector = tv[0], pv[0]
            lex = self.lexical_rows([text])
            lexical_vector = lex[0] if lex is not None else None
        index = self.snapshot.paper_index
        # References as the submission's source gives them: a qualified id, or a bare source id that exactly
        # one paper has (ids.IdResolver); unknown ones cannot link to anyone's papers and are dropped.
        given = [str(r) for r in record.get("references") or ()]
        resolved = self.id_resolver().resolve("paper", given).ids if given else {}
        refs = np.array(sorted({index[resolved[r]] for r in given if resolved.get(r) in index}), dtype=np.int64)
        own = index.get(record["id"])
        year = record.get("year")
        has_text = float(np.linalg.norm(text_vector)) > 0
        return Query(id=str(record["id"]), text_vector=text_vector if has_text else None,
                     topic_vector=topic_vector if has_text and float(topic_vector.sum()) > 0 else None,
                     references=refs, year=int(year) if year is not None else None,
                     submission_year=int(year) if year is not None else None, **submission_authors(record),
                     paper_index=own, citation_vector=self.reference_vector(refs),
                     title=record.get("title") or "",
                     lexical_vector=lexical_vector if lexical_vector is not None and lexical_vector.nnz else None)

    def read_queries(self, path: str, what: str = "--queries") -> list[Query]:
        """Submissions from a JSONL file (user_files.read_jsonl checks it), texts encoded in one batch."""
        return self.queries_from_records(read_jsonl(path, what))

    def queries_from_records(self, records: Sequence[Mapping]) -> list[Query]:
        """Submissions from their JSON records (read_jsonl's), texts encoded in one batch."""
        texts = [paper_text(r.get("title"), r.get("abstract")) for r in records]
        tv, pv = self.encode_texts(texts)
        lex = self.lexical_rows(texts)
        return [self.query_from_submission(r, text_vector=tv[k], topic_vector=pv[k],
                                           lexical_vector=lex[k] if lex is not None else None)
                for k, r in enumerate(records)]

    # --- evidence -----------------------------------------------------------------------------------

    def background_stats(self, query: Query) -> np.ndarray:
        """Mean and spread of the query's semantic, topic, vector and lexical scores against the background
        sample (remembered for the last query object: a recommendation asks twice)."""
        if self._last_background is not None and self._last_background[0] is query:
            return self._last_background[1]
        if self._background_rows is None:
            b = self.background
            self._background_rows = (self.text[b], self.topics[b][self.has_topic[b]], self.cvec[b][self.has_cvec[b]],
                                     self.lexical[b] if self.lexical is not None else None)
        text_b, topics_b, cvec_b, lex_b = self._background_rows
        out = np.zeros(8, dtype=np.float32)
        if query.has_text:
            s = text_b @ query.text_vector
            out[0:2] = s.mean(), max(float(s.std()), _MIN_STD["semantic"])
        else:
            out[1] = 1.0
        if query.has_topic and len(topics_b):
            assert query.topic_vector is not None, "has_topic means a topic vector"
            t = topic_similarity(query.topic_vector, topics_b)
            out[2:4] = t.mean(), max(float(t.std()), _MIN_STD["topic"])
        else:
            out[3] = 1.0
        if query.citation_vector is not None and len(cvec_b):
            v = cvec_b @ query.citation_vector
            out[4:6] = v.mean(), max(float(v.std()), _MIN_STD["vector"])
        else:
            out[5] = 1.0
        if query.lexical_vector is not None and lex_b is not None:
            lex = lex_b @ self.dense_lexical(query)
            out[6:8] = lex.mean(), max(float(lex.std()), _MIN_STD["lexical"])
        else:
            out[7] = 1.0
        self._last_background = (query, out)
        return out

    def reference_stats(self, n_probe: int = 200) -> np.ndarray:
        """Mean and spread of semantic, topic, vector and lexical scores between random pairs of background
        papers: one fixed scale per corpus (and encoder) for calibrating evidence, whatever the submission."""
        if self._reference is not None:
            return self._reference
        rng = np.random.default_rng(1)
        b = self.background
        probe = np.sort(rng.choice(b, size=min(n_probe, len(b)), replace=False))
        out = np.array([0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0], dtype=np.float32)

        def stats(sims: np.ndarray, k: int, floor: float) -> None:
            if sims.size:
                out[k:k + 2] = float(sims.mean()), max(float(sims.std()), floor)

        off_diag = probe[:, None] != b[None, :]
        t_p, t_b = self.has_text[probe], self.has_text[b]
        stats((self.text[probe] @ self.text[b].T)[off_diag & t_p[:, None] & t_b[None, :]], 0, _MIN_STD["semantic"])
        tp, tb = probe[self.has_topic[probe]][:50], b[self.has_topic[b]]
        if len(tp) and len(tb):
            stats(np.concatenate([topic_similarity(self.topics[i], self.topics[tb][tb != i]) for i in tp]), 2,
                  _MIN_STD["topic"])
        c_p, c_b = self.has_cvec[probe], self.has_cvec[b]
        stats((self.cvec[probe] @ self.cvec[b].T)[off_diag & c_p[:, None] & c_b[None, :]], 4, _MIN_STD["vector"])
        if self.lexical is not None:
            l_p, l_b = self.has_lex[probe], self.has_lex[b]
            lex = (self.lexical[probe] @ self.lexical[b].T).toarray()
            stats(lex[off_diag & l_p[:, None] & l_b[None, :]], 6, _MIN_STD["lexical"])
        self._reference = out
        return out

    def dense_lexical(self, query: Query) -> np.ndarray:
        """The query's lexical row as a dense vector (sparse x dense products beat sparse x sparse ones)."""
        assert self.lexical is not None and query.lexical_vector is not None, "asked only when both have one"
        out = np.zeros(self.lexical.shape[1], dtype=np.float32)
        row = query.lexical_vector.tocsr()
        out[row.indices] = row.data
        return out

    def query_features(self, query: Query, background: np.ndarray) -> np.ndarray:
        entropy = 0.0
        if query.has_topic:
            t = np.asarray(query.topic_vector, dtype=np.float64)
            t = t / t.sum()
            entropy = float(-(t[t > 0] * np.log(t[t > 0])).sum() / math.log(max(len(t), 2)))
        return np.array([*background, query.has_text, query.has_topic, query.has_refs,
                         math.log1p(len(query.references)) / 3.0, entropy], dtype=np.float32)

    def paper_scores(self, query: Query, papers: np.ndarray) -> dict[str, np.ndarray]:
        """Raw evidence of the query against each of `papers` (unique snapshot indices)."""
        papers = np.asarray(papers, dtype=np.int64)
        n = len(papers)
        sem = np.zeros(n, dtype=np.float32)
        top = np.zeros(n, dtype=np.float32)
        parts = np.zeros((n, 4), dtype=np.float32)
        m_sem = self.has_text[papers] & query.has_text
        m_top = self.has_topic[papers] & query.has_topic
        if query.has_text and n:
            assert query.text_vector is not None, "has_text means a text vector"
            sem = (self.text[papers] @ query.text_vector.astype(np.float32)).astype(np.float32)
        if query.has_topic and n:
            assert query.topic_vector is not None, "has_topic means a topic vector"
            top = topic_similarity(query.topic_vector, self.topics[papers])
        refs = np.asarray(query.references, dtype=np.int64)
        m_cit = np.zeros(n, dtype=bool)
        if len(refs) and n:
            if query.citation_vector is not None:
                parts[:, 0] = self.cvec[papers] @ query.citation_vector
            mark = self._mark
            mark[refs] = 1.0
            parts[:, 1] = mark[papers]
            coupling = self.citations[papers] @ mark
            mark[refs] = 0.0
            denom = np.sqrt(len(refs) * np.maximum(self.out_degree[papers], 1.0))
            parts[:, 2] = np.where(self.out_degree[papers] > 0, coupling / denom, 0.0)
            citers = np.unique(self.cited_by[refs].indices)
            if query.paper_index is not None:
                citers = citers[citers != query.paper_index]
            if query.year is not None:
                # Citing papers from after the submission are not evidence it could have had.
                cy = self.year[citers]
                citers = citers[(cy == NO_YEAR) | (cy <= query.year)]
            mark[citers] = 1.0
            cocited = self.cited_by[papers] @ mark
            mark[citers] = 0.0
            # Shrunk share of the paper's citers that also cite the query's references.
            parts[:, 3] = cocited / (self.in_degree[papers] + 2.0)
            m_cit = self.has_citation[papers] | (parts[:, 1] > 0)
        lex = np.zeros(n, dtype=np.float32)
        if query.lexical_vector is not None and self.lexical is not None and n:
            lex = (self.lexical[papers] @ self.dense_lexical(query)).astype(np.float32)
        sem[~m_sem] = 0.0
        top[~m_top] = 0.0
        lex[~m_sem] = 0.0
        parts[~m_cit] = 0.0
        return {"semantic": sem, "topic": top, "parts": parts, "citation": combine_citation(parts),
                "mask": np.stack([m_sem, m_top, m_cit], axis=1), "lexical": lex}

    def eligible_pairs(self, query: Query, pool: ReviewerPool, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(owner position in `rows`, paper) for every paper the reviewers may be judged on: published no later
        than the submission, and not the submission itself."""
        owner, paper, _ = self.eligible_weighted(query, pool, rows)
        return owner, paper

    def eligible_weighted(self, query: Query, pool: ReviewerPool, rows: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """eligible_pairs with each pair's weight: the pool's matrix value (1.0 unless the reviewer's own
        expertise settings weight that paper's source or venue, conference/profiles.py)."""
        sub = pool.papers[rows]
        owner = np.repeat(np.arange(len(rows)), np.diff(sub.indptr))
        paper = sub.indices.astype(np.int64)
        keep = np.ones(len(paper), dtype=bool)
        if query.year is not None:
            y = self.year[paper]
            keep &= (y == NO_YEAR) | (y <= query.year)
        if query.paper_index is not None:
            keep &= paper != query.paper_index
        return owner[keep], paper[keep], np.asarray(sub.data, dtype=np.float32)[keep]

    def evidence(self, query: Query, pool: ReviewerPool, rows: Sequence[int] | np.ndarray | None = None, *,
                 max_papers: int | None = 16, per_evidence: int = 4) -> Evidence:
        """Evidence of `query` against pool reviewers `rows` (default: all), padded to [R, P].

        With `max_papers`, each reviewer keeps at most that many papers: the union of their best
        `per_evidence` papers on each evidence and on the compensation gap (topic or citation z-score above the
        semantic one), best ranks first. With None every eligible paper is kept (baselines need them all)."""
        rows = np.arange(len(pool)) if rows is None else np.asarray(rows, dtype=np.int64)
        background = self.background_stats(query)
        owner, paper, weight = self.eligible_weighted(query, pool, rows)
        uniq, inverse = np.unique(paper, return_inverse=True)
        ps = self.paper_scores(query, uniq)
        sem, top, cit = ps["semantic"][inverse], ps["topic"][inverse], ps["citation"][inverse]
        lex = ps["lexical"][inverse]
        parts, mask = ps["parts"][inverse], ps["mask"][inverse]
        R = len(rows)
        n_papers = np.bincount(owner, minlength=R).astype(np.int64)
        if len(owner):
            z_sem = np.where(mask[:, 0], np.maximum((sem - background[0]) / background[1],
                                                    (lex - background[6]) / background[7]), -10.0)
            z_top = np.where(mask[:, 1], (top - background[2]) / background[3], -10.0)
            # Links count for more than a vector cosine a few spreads above the background.
            z_cit = np.where(mask[:, 2], 4.0 * cit + (parts[:, 0] - background[4]) / background[5], -10.0)
            gap = np.maximum(z_top, z_cit) - np.where(mask[:, 0], z_sem, 0.0)
            ranks = np.stack([_segment_rank(owner, s) for s in (z_sem, z_top, z_cit, gap)], axis=1)
            best = ranks.min(axis=1)
            if max_papers is not None:
                keep = best < per_evidence
                owner_k, best_k = owner[keep], best[keep]
                sel = np.flatnonzero(keep)
                order = np.lexsort((best_k, owner_k))
                sel, owner_k = sel[order], owner_k[order]
                pos = _segment_rank(owner_k, -np.arange(len(owner_k), dtype=np.float64))
                fits = pos < max_papers
                sel, owner_k, pos = sel[fits], owner_k[fits], pos[fits]
            else:
                order = np.lexsort((best, owner))
                sel, owner_k = order, owner[order]
                pos = _segment_rank(owner_k, -np.arange(len(owner_k), dtype=np.float64))
        else:
            sel = owner_k = pos = np.zeros(0, dtype=np.int64)
        P = int(pos.max()) + 1 if len(pos) else 1
        papers_pad = np.full((R, P), -1, dtype=np.int64)
        papers_pad[owner_k, pos] = paper[sel]
        valid = papers_pad >= 0

        def pad(values: np.ndarray, fill=0.0) -> np.ndarray:
            out = np.full((R, P, *values.shape[1:]), fill, dtype=values.dtype)
            out[owner_k, pos] = values[sel]
            return out

        no_history = n_papers == 0
        ids = [pool.author_ids[r] for r in rows]
        return Evidence(query_id=query.id, reviewer_rows=rows, reviewer_ids=ids, papers=papers_pad, valid=valid,
                        semantic=pad(sem), topic=pad(top), citation_parts=pad(parts), citation=pad(cit),
                        mask=pad(mask, False), background=background,
                        query_features=self.query_features(query, background), n_papers=n_papers,
                        no_history=no_history, lexical=pad(lex) if self.lexical is not None else None,
                        reference=self.reference_stats(),
                        weight=pad(weight, 1.0) if (weight != 1.0).any() else None)


def reviewer_profiles(index: EvidenceIndex, pool: ReviewerPool) -> np.ndarray:
    """Mean topic mixture of each reviewer's papers (zero row without any): used to draw hard negatives."""
    mats = pool.papers.astype(np.float32)
    prof = mats @ index.topics
    sums = prof.sum(axis=1, keepdims=True)
    return np.divide(prof, sums, out=np.zeros_like(prof), where=sums > 0)
