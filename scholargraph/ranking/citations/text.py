"""Tokenisation, a capped vocabulary with IDF, and per-field bag-of-words matrices for the citation models."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from scholargraph.graph.records import normalize_doi
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot

FIELDS = ("title", "abstract")

# English function words plus the boilerplate of abstracts: they carry no topic, and dropping them
# keeps bags short (faster) and intersections meaningful.
STOPWORDS = frozenset("""
a about above after again against all also although am an and any are as at be because been before being
below between both but by can could did do does doing down during each either et etc few for from further
had has have having he her here hers him his how however i if in into is it its itself just may me might
more most much must my neither no nor not now of off on once only or other our ours out over own per same
she should since so some such than that the their theirs them then there therefore these they this those
through thus to too under until up upon us very via was we were what when where whether which while who
whom why will with within without would yet you your
""".split())

_TOKEN = re.compile(r"[^\W_]+")


def raw_tokens(text: str | None) -> list[str]:
    """Lower-cased word tokens, stop words and all: the fast path (a vocabulary never holds the rest)."""
    return _TOKEN.findall(text.lower()) if text else []


def _keep(word: str) -> bool:
    return len(word) > 1 and word not in STOPWORDS and not word.isdigit()


def tokenize(text: str | None) -> list[str]:
    """Lower-cased word tokens of at least two characters, without stop words and bare numbers."""
    return [w for w in raw_tokens(text) if _keep(w)]


class Vocabulary:
    """Words kept for the models (most frequent by document frequency, capped) and their IDF.

    OOV words are dropped when texts become bags. IDF is the BM25 form log(1 + (N - df + .5) / (df + .5)):
    positive for every word, high for rare ones."""

    VERSION = 1

    def __init__(self, words: Sequence[str], df: Sequence[int], n_docs: int):
        if len(words) != len(df):
            raise ValueError("words and df must have the same length")
        self.words = list(words)
        self.df = np.asarray(df, dtype=np.int64)
        self.n_docs = int(n_docs)
        self.index = {w: i for i, w in enumerate(self.words)}
        self.idf = np.log1p((self.n_docs - self.df + 0.5) / (self.df + 0.5)).astype(np.float32)

    def __len__(self) -> int:
        return len(self.words)

    @classmethod
    def build(cls, texts: Iterable[str | None], max_size: int = 50_000, min_df: int = 2) -> Vocabulary:
        """From documents (each the full text of one paper): the `max_size` words with the highest
        document frequency among those in at least `min_df` documents (ties broken alphabetically)."""
        return cls.from_tokens((raw_tokens(t) for t in texts), max_size, min_df)

    @classmethod
    def from_tokens(cls, documents: Iterable[Iterable[str]], max_size: int = 50_000, min_df: int = 2) -> Vocabulary:
        """build() from documents already split by raw_tokens (stop words are dropped here)."""
        counts: Counter[str] = Counter()
        n = 0
        for tokens in documents:
            n += 1
            counts.update(set(tokens))
        kept = sorted(((w, c) for w, c in counts.items() if c >= min_df and _keep(w)), key=lambda wc: (-wc[1], wc[0]))
        kept = kept[:max_size]
        return cls([w for w, _ in kept], [c for _, c in kept], n)

    @classmethod
    def from_counts(cls, words: Sequence[str], df: np.ndarray, n_docs: int, max_size: int = 50_000,
                    min_df: int = 2) -> tuple[Vocabulary, np.ndarray]:
        """build() from the distinct raw tokens and their document frequencies; also returns the map from
        the tokens' positions to vocabulary ids (-1: not kept)."""
        keep = [i for i, w in enumerate(words) if df[i] >= min_df and _keep(w)]
        keep.sort(key=lambda i: (-int(df[i]), words[i]))
        keep = keep[:max_size]
        remap = np.full(len(words), -1, dtype=np.int64)
        remap[np.asarray(keep, dtype=np.int64)] = np.arange(len(keep))
        return cls([words[i] for i in keep], [int(df[i]) for i in keep], n_docs), remap

    def ids(self, text: str | None) -> list[int]:
        index = self.index
        return [index[w] for w in raw_tokens(text) if w in index]

    def bags(self, texts: Sequence[str | None], binary: bool = False, chunk: int = 50_000) -> sp.csr_matrix:
        """Documents x words counts (or 0/1 with `binary`), float32 CSR with sorted indices; OOV words dropped.
        Works through the texts in chunks, so that only one chunk's tokens are ever alive."""
        parts = [self.bags_from_tokens([raw_tokens(t) for t in texts[s:s + chunk]], binary)
                 for s in range(0, len(texts), chunk)]
        if not parts:
            return sp.csr_matrix((0, len(self.words)), dtype=np.float32)
        return parts[0] if len(parts) == 1 else sp.csr_matrix(sp.vstack(parts, format="csr"))

    def bags_from_tokens(self, documents: Sequence[Sequence[str]], binary: bool = False) -> sp.csr_matrix:
        index = self.index
        ids = [[index[w] for w in tokens if w in index] for tokens in documents]
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        indptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        indices = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int32, count=int(indptr[-1]))
        m = sp.csr_matrix((np.ones(len(indices), dtype=np.float32), indices, indptr),
                          shape=(len(ids), len(self.words)))
        m.sum_duplicates()  # also sorts the indices
        if binary:
            m.data[:] = 1.0
        return m

    def fingerprint(self) -> str:
        """A short hash of the word list: models sharing bags must share it."""
        return hashlib.sha1("\n".join(self.words).encode("utf-8")).hexdigest()[:16]

    # --- persistence ------------------------------------------------------------------------------

    def to_json(self) -> dict:
        return {"version": self.VERSION, "n_docs": self.n_docs, "words": self.words, "df": self.df.tolist()}

    @classmethod
    def from_json(cls, data: dict) -> Vocabulary:
        if data.get("version") != cls.VERSION:
            raise ValueError(f"vocabulary version {data.get('version')!r}, expected {cls.VERSION}")
        return cls(data["words"], data["df"], data["n_docs"])

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json()), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


@dataclass
class Bags:
    """Per-field bag-of-words matrices of a set of documents (same rows in each)."""

    title: sp.csr_matrix
    abstract: sp.csr_matrix

    @classmethod
    def of(cls, vocabulary: Vocabulary, titles: Sequence[str | None], abstracts: Sequence[str | None]) -> Bags:
        if len(titles) != len(abstracts):
            raise ValueError("titles and abstracts must have the same length")
        return cls(vocabulary.bags(titles), vocabulary.bags(abstracts))

    def __len__(self) -> int:
        return self.title.shape[0]

    def fields(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        return self.title, self.abstract

    def rows(self, index: np.ndarray | Sequence[int]) -> Bags:
        index = np.asarray(index, dtype=np.int64)
        return Bags(self.title[index], self.abstract[index])

    def words(self) -> sp.csr_matrix:
        """0/1 documents x words over all fields (what the explanations and intersections look at)."""
        m = (self.title + self.abstract).tocsr()
        m.data[:] = 1.0
        return m


@dataclass
class Corpus:
    """A snapshot's papers as the citation models see them: bags per field, years, in-corpus citation
    counts (as of the snapshot), and which papers can be recommended at all (they have text)."""

    snapshot: GraphSnapshot
    vocabulary: Vocabulary
    bags: Bags
    years: np.ndarray
    cited_count: np.ndarray
    has_text: np.ndarray

    @classmethod
    def of(cls, snapshot: GraphSnapshot, vocabulary: Vocabulary, bags: Bags | None = None) -> Corpus:
        """`bags` (the snapshot's, under this vocabulary) saves tokenising again when the caller has them."""
        if bags is None:
            bags = Bags.of(vocabulary, *snapshot.text_fields())
        has_text = (np.diff(bags.title.indptr) + np.diff(bags.abstract.indptr)) > 0
        cited = np.asarray(snapshot.citations.sum(axis=0)).ravel().astype(np.float32)
        return cls(snapshot, vocabulary, bags, np.asarray(snapshot.paper_year), cited, has_text)

    def __len__(self) -> int:
        return len(self.years)

    def matches(self, snapshot: GraphSnapshot) -> bool:
        return self.snapshot is snapshot or self.snapshot.paper_ids == snapshot.paper_ids

    def lookup(self, ids: Iterable[str]) -> list[int]:
        """Indexes of the papers with these ids (a DOI in any spelling finds its paper); unknown ids are skipped."""
        index = self.snapshot.paper_index
        out = []
        for raw in ids:
            for key in (raw, raw.lower(), normalize_doi(raw)):
                if key is not None and key in index:
                    out.append(index[key])
                    break
        return out

    def allowed(self, year: int | None, exclude: Iterable[int] = ()) -> np.ndarray:
        """Mask of papers a query of `year` may get: with text, not excluded, and not after `year` (undated
        papers are allowed: only stubs lack a year, and those have no text)."""
        mask = self.has_text.copy()
        if year is not None and year != NO_YEAR:
            mask &= self.years <= year
        ex = np.fromiter(exclude, dtype=np.int64)
        if len(ex):
            mask[ex] = False
        return mask


def count_fields(titles: Sequence[str | None], abstracts: Sequence[str | None],
                 chunk: int = 50_000) -> tuple[list[str], sp.csr_matrix, sp.csr_matrix]:
    """One tokenising pass over both fields: the distinct raw tokens, and documents x tokens count matrices
    per field. Tokens become int32 ids chunk by chunk (a million abstracts as Python strings would take
    gigabytes)."""
    index: dict[str, int] = {}
    out = []
    for texts in (titles, abstracts):
        parts = []
        for s in range(0, len(texts), chunk):
            ids = [[index.setdefault(w, len(index)) for w in raw_tokens(t)] for t in texts[s:s + chunk]]
            lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
            indptr = np.zeros(len(ids) + 1, dtype=np.int64)
            np.cumsum(lengths, out=indptr[1:])
            flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int32, count=int(indptr[-1]))
            parts.append((flat, indptr))
        out.append(parts)
    words = list(index)
    mats = []
    for parts in out:
        mats_f = []
        for flat, indptr in parts:
            m = sp.csr_matrix((np.ones(len(flat), np.float32), flat, indptr), shape=(len(indptr) - 1, len(words)))
            m.sum_duplicates()
            mats_f.append(m)
        if not mats_f:
            mats.append(sp.csr_matrix((0, len(words)), dtype=np.float32))
        else:
            mats.append(mats_f[0] if len(mats_f) == 1 else sp.csr_matrix(sp.vstack(mats_f, format="csr")))
    return words, mats[0], mats[1]


def select_columns(m: sp.csr_matrix, remap: np.ndarray, n_columns: int) -> sp.csr_matrix:
    """`m` with its column j moved to remap[j] and dropped where remap[j] < 0 (sorted indices)."""
    new = remap[m.indices]
    keep = new >= 0
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))[keep]
    indptr = np.zeros(m.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=m.shape[0]), out=indptr[1:])
    out = sp.csr_matrix((m.data[keep], new[keep].astype(np.int32), indptr), shape=(m.shape[0], n_columns))
    out.sort_indices()
    return out


def fit_vocabulary(snapshot: GraphSnapshot, max_size: int = 50_000, min_df: int = 2) -> tuple[Vocabulary, Bags]:
    """Vocabulary of a snapshot's texts (document = title + abstract) and its per-field bags, in one pass."""
    words, title, abstract = count_fields(*snapshot.text_fields())
    both = (title + abstract).tocsr()
    both.data[:] = 1.0
    df = np.asarray(both.sum(axis=0)).ravel().astype(np.int64)
    vocabulary, remap = Vocabulary.from_counts(words, df, snapshot.n_papers, max_size, min_df)
    n = len(vocabulary)
    return vocabulary, Bags(select_columns(title, remap, n), select_columns(abstract, remap, n))


def shared_terms(vocabulary: Vocabulary, query_words: np.ndarray, doc_words: np.ndarray, top: int = 5) -> list[str]:
    """The highest-IDF words two documents share (word id arrays, any order)."""
    common = np.intersect1d(query_words, doc_words)
    if len(common) == 0:
        return []
    order = np.argsort(-vocabulary.idf[common], kind="stable")[:top]
    return [vocabulary.words[i] for i in common[order]]


def intersection_idf(query: sp.csr_matrix, docs: sp.csr_matrix, idf: np.ndarray) -> np.ndarray:
    """Summed IDF of the words each doc row shares with its query row (row-aligned matrices)."""
    if query.shape[0] == 0:
        return np.zeros(0, dtype=np.float32)
    q = query.copy()
    q.data[:] = 1.0
    d = docs.copy()
    d.data[:] = 1.0
    return np.asarray(q.multiply(d) @ idf, dtype=np.float32).ravel()


def bm25_document_weights(bags: Bags, idf: np.ndarray, k1: float = 1.2, b: float = 0.75) -> sp.csr_matrix:
    """Documents x words: each word's BM25 contribution to a document (Lucene's, as bm25s computes it: IDF x
    tf / (tf + k1 (1 - b + b dl / avgdl))), over title and abstract together. A query's BM25 score against a
    document is then the sum of these weights over the query's word occurrences (`bm25_pair_scores`)."""
    counts = (bags.title + bags.abstract).tocsr().astype(np.float32)
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    norm = k1 * (1 - b + b * lengths / max(float(lengths[lengths > 0].mean()) if (lengths > 0).any() else 1.0, 1e-9))
    tf = counts.data
    rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
    weights = counts.copy()
    weights.data = (idf[counts.indices] * tf / (tf + norm[rows])).astype(np.float32)
    return weights


def bm25_pair_scores(query: Bags, query_rows: np.ndarray, doc_weights: sp.csr_matrix) -> np.ndarray:
    """BM25 of query row query_rows[i] against document row i of `doc_weights` (row-aligned pairs)."""
    if len(query_rows) == 0:
        return np.zeros(0, dtype=np.float32)
    q = (query.title + query.abstract).tocsr()[np.asarray(query_rows, dtype=np.int64)]
    return np.asarray(q.multiply(doc_weights).sum(axis=1), dtype=np.float32).ravel()


__all__ = ["FIELDS", "STOPWORDS", "Bags", "Corpus", "Vocabulary", "bm25_document_weights", "bm25_pair_scores",
           "count_fields", "fit_vocabulary", "intersection_idf", "raw_tokens", "select_columns", "shared_terms",
           "tokenize"]
