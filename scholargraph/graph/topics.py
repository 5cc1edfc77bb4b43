"""LDA topics of titles and abstracts (gensim), and the author topic features built on them."""

from __future__ import annotations

import hashlib
import math
import os
import pickle  # only to recognise gensim's load errors
from array import array
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from scholargraph.errors import NotFitted
from scholargraph.graph import text as textlib
from scholargraph.registry import read_config, write_config

MODEL_NAME = "TopicModel"
MODEL_VERSION = 1
CONFIG_FILE = "topics.json"
LDA_FILE = "lda.gensim"
DICTIONARY_FILE = "dictionary.gensim"
PHRASES_FILE = "phrases.gensim"

_INFER_CHUNK = 2000  # documents per inference call in transform (rows do not depend on it)


class _MeanInit:
    """Stands in for the LDA model's RandomState during `transform`: gensim starts each document's
    variational gamma from random Gamma(100, 1/100) draws; starting from their mean (1.0) instead makes a
    document's topics independent of the batch it comes in and of earlier calls."""

    @staticmethod
    def gamma(shape: float, scale: float, size) -> np.ndarray:
        return np.full(size, shape * scale)


def auto_no_below(n_docs: int) -> int:
    """Default `Dictionary.filter_extremes(no_below=...)`: a word must appear in n_docs/1000 documents,
    at least 2 and at most 20 (3k docs -> 3, 20k+ -> 20). Rarer words cannot shape 10-50 topics and
    only slow training down."""
    return int(min(20, max(2, n_docs // 1000)))


def _csr(indptr: np.ndarray, ids: np.ndarray, counts: np.ndarray, n_vocab: int) -> sp.csr_matrix:
    """Documents x vocabulary counts from flat per-document runs; ids of -1 (filtered words) are dropped."""
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    keep = ids >= 0
    m = sp.csr_matrix((counts[keep], (rows[keep], ids[keep])), shape=(len(indptr) - 1, n_vocab))
    m.sum_duplicates()
    m.sort_indices()
    return m


def auto_passes(n_docs: int) -> int:
    """Default passes: about 100k document updates in all, between 2 and 20 passes (110k docs -> 2,
    20k -> 5, 5k or fewer -> 20). Online LDA needs many updates to settle; big corpora give them in one pass."""
    return int(min(20, max(2, math.ceil(100_000 / max(n_docs, 1)))))


def auto_chunksize(n_docs: int) -> int:
    """Default documents per online update: n_docs/16, between 256 and 2000, so that even a small corpus
    gets several updates per pass."""
    return int(min(2000, max(256, n_docs // 16)))


def in_fit_sample(paper_ids: Iterable[str], fraction: float, seed: int = 0) -> np.ndarray:
    """Boolean mask: the papers a topic fit on a sample reads (`features --topic-sample`). Each paper is in with
    probability `fraction`, decided by a hash of the seed and its id alone, so the same papers are drawn
    whatever the order, the batching or the engine (in process, or in Spark partitions: spark/topics.py)."""
    cut = int(min(max(fraction, 0.0), 1.0) * 2**64)
    return np.array([int.from_bytes(hashlib.blake2b(f"{seed}\0{pid}".encode(), digest_size=8).digest(), "big") < cut
                     for pid in paper_ids], dtype=bool)


def fit_sample_fraction(sample: int | None, n_papers: int) -> float | None:
    """The share of the papers a fit on about `sample` papers draws; None when it reads every paper."""
    if sample is None or n_papers <= sample:
        return None
    return sample / n_papers


class TopicModel:
    """LDA over title + abstract.

    Text pipeline: `text.words` (lower-case alphabetic words) -> gensim `Phrases` bigrams (connector
    words allowed inside) -> stop words dropped (gensim's STOPWORDS + scholarly boilerplate) -> a gensim
    `Dictionary` filtered by `filter_extremes(no_below, no_above, keep_n)`.

    Hyperparameters (defaults chosen so ACM-CR, ~110k documents, trains in a few minutes on 2 cores):
    - num_topics=10; iterations=50 per document E-step;
    - passes=None -> `auto_passes(n_docs)` (2 for ACM-CR); chunksize=None -> `auto_chunksize(n_docs)`
      (documents per online update; 2000 for ACM-CR);
    - alpha='symmetric', eta=None (gensim's 1/K priors);
    - no_below=None -> `auto_no_below(n_docs)`; no_above=0.5; keep_n=100_000;
    - phrase_min_count=None -> max(5, no_below); phrase_threshold=10.0 (gensim's default scoring);
    - workers=0 trains with the single-process `LdaModel`, deterministic for a given `random_state`;
      workers=k >= 1 uses `LdaMulticore` with k worker processes (plus the master that runs the M-step),
      faster but its result depends on process scheduling (and it has no alpha='auto').
    Learned state: `lda_` (gensim LdaModel), `dictionary_`, `phrases_` (FrozenPhrases), `n_docs_`,
    and the resolved `no_below_`, `phrase_min_count_`, `passes_`, `chunksize_`.
    """

    def __init__(self, num_topics: int = 10, passes: int | None = None, iterations: int = 50,
                 chunksize: int | None = None, alpha: str | float = "symmetric", eta: str | float | None = None,
                 no_below: int | None = None,
                 no_above: float = 0.5, keep_n: int = 100_000, phrase_min_count: int | None = None,
                 phrase_threshold: float = 10.0, workers: int = 0, random_state: int = 0):
        self.num_topics = num_topics
        self.passes = passes
        self.iterations = iterations
        self.chunksize = chunksize
        self.alpha = alpha
        self.eta = eta
        self.no_below = no_below
        self.no_above = no_above
        self.keep_n = keep_n
        self.phrase_min_count = phrase_min_count
        self.phrase_threshold = phrase_threshold
        self.workers = workers
        self.random_state = random_state

    def get_params(self) -> dict:
        return {k: getattr(self, k) for k in ("num_topics", "passes", "iterations", "chunksize", "alpha", "eta",
                                              "no_below", "no_above", "keep_n", "phrase_min_count",
                                              "phrase_threshold", "workers", "random_state")}

    # --- fitting ----------------------------------------------------------------------------------

    def fit(self, texts: Sequence[str | None], progress: Callable[[str, int], None] | None = None) -> TopicModel:
        """Learn phrases, vocabulary and topics from `texts` (one title + abstract per document).
        `progress(stage, n)` is called after each stage, if given. Returns self."""
        self._fit(texts, progress)
        return self

    def fit_transform(self, texts: Sequence[str | None], return_empty: bool = False,
                      progress: Callable[[str, int], None] | None = None):
        """`fit(texts)` then `transform(texts, return_empty)`, without tokenising twice."""
        theta, empty = self._infer(self._fit(texts, progress))
        return (theta, empty) if return_empty else theta

    def _fit(self, texts: Sequence[str | None], progress) -> sp.csr_matrix:
        from gensim.corpora import Dictionary
        from gensim.matutils import Sparse2Corpus
        from gensim.models import LdaModel, LdaMulticore
        from gensim.models.phrases import Phrases

        texts = list(texts)
        n_docs = len(texts)
        no_below, phrase_min_count, passes, chunksize = self.resolved(n_docs)

        # Pass 1: phrase statistics, streamed (a list of token lists would cost GBs on 1M abstracts).
        phrases = Phrases((textlib.words(t) for t in texts), min_count=phrase_min_count,
                          threshold=self.phrase_threshold, connector_words=textlib.CONNECTOR_WORDS)
        frozen = phrases.freeze()
        del phrases
        if progress:
            progress("phrases", n_docs)

        # Pass 2: raw vocabulary; each document kept as compact id/count arrays until the vocabulary is
        # filtered (lists of (id, count) tuples would take ~10x the memory).
        dictionary = Dictionary()
        ids, counts, indptr = array("q"), array("f"), array("q", [0])
        for t in texts:
            bow = dictionary.doc2bow(self._tokens(t, frozen), allow_update=True)
            ids.extend(i for i, _ in bow)
            counts.extend(c for _, c in bow)
            indptr.append(len(ids))
        raw_ids = dict(dictionary.token2id)
        dictionary.filter_extremes(no_below=no_below, no_above=self.no_above, keep_n=self.keep_n)
        if len(dictionary) == 0:
            raise ValueError("no word survives the vocabulary filter: too few or too short documents "
                             f"(no_below={no_below}, no_above={self.no_above})")
        # filter_extremes renumbers the surviving words: map the ids the bags were built with.
        old2new = np.full(len(raw_ids), -1, dtype=np.int64)
        for token, new_id in dictionary.token2id.items():
            old2new[raw_ids[token]] = new_id
        del raw_ids
        matrix = _csr(np.frombuffer(indptr, dtype=np.int64), old2new[np.frombuffer(ids, dtype=np.int64)],
                      np.frombuffer(counts, dtype=np.float32), len(dictionary))
        del ids, counts, indptr
        if progress:
            progress("vocabulary", len(dictionary))

        corpus = Sparse2Corpus(matrix, documents_columns=False)
        common = dict(corpus=corpus, id2word=dictionary, num_topics=self.num_topics, chunksize=chunksize,
                      passes=passes, iterations=self.iterations, alpha=self.alpha, eta=self.eta, eval_every=None,
                      random_state=self.random_state)
        if self.workers and self.workers >= 1:
            lda = LdaMulticore(workers=self.workers, **common)
        else:
            lda = LdaModel(update_every=1, **common)
        if progress:
            progress("lda", n_docs)
        self.lda_ = lda
        self.dictionary_ = dictionary
        self.phrases_ = frozen
        self.n_docs_ = n_docs
        self.no_below_ = no_below
        self.phrase_min_count_ = phrase_min_count
        self.passes_ = passes
        self.chunksize_ = chunksize
        return matrix

    def resolved(self, n_docs: int) -> tuple[int, int, int, int]:
        """(no_below, phrase_min_count, passes, chunksize) for a corpus of n_docs: the set ones, else the auto_*."""
        if self.num_topics < 2:
            raise ValueError(f"num_topics must be at least 2, not {self.num_topics}")
        if n_docs == 0:
            raise ValueError("cannot fit a topic model on no documents")
        no_below = auto_no_below(n_docs) if self.no_below is None else self.no_below
        phrase_min_count = max(5, no_below) if self.phrase_min_count is None else self.phrase_min_count
        passes = auto_passes(n_docs) if self.passes is None else self.passes
        chunksize = auto_chunksize(n_docs) if self.chunksize is None else self.chunksize
        return no_below, phrase_min_count, passes, chunksize

    def frozen_phrases(self, phrasegrams: dict[str, float], min_count: int):
        """The FrozenPhrases that `fit` would learn from counts giving these phrase scores (what a
        distributed count computes: scholargraph.spark.topics)."""
        from gensim.models.phrases import Phrases

        frozen = Phrases(min_count=min_count, threshold=self.phrase_threshold,
                         connector_words=textlib.CONNECTOR_WORDS).freeze()
        frozen.phrasegrams = dict(phrasegrams)
        return frozen

    def with_topics(self, topics_lambda: np.ndarray, dictionary, phrases, n_docs: int) -> TopicModel:
        """Set this model's learned state from topic-word variational parameters (K x vocabulary: what
        online variational Bayes learns, e.g. Spark MLlib's `topicsMatrix().T`) over `dictionary`'s ids, with
        this model's priors (alpha, eta): inference, top words, save and load are then those of a model that
        `fit` trained. Returns self."""
        from gensim.models import LdaModel

        lam = np.asarray(topics_lambda, dtype=np.float64)
        if lam.shape != (self.num_topics, len(dictionary)):
            raise ValueError(f"topics have shape {lam.shape}: expected ({self.num_topics}, {len(dictionary)})")
        no_below, phrase_min_count, passes, chunksize = self.resolved(n_docs)
        lda = LdaModel(id2word=dictionary, num_topics=self.num_topics, chunksize=chunksize, passes=passes,
                       iterations=self.iterations, alpha=self.alpha, eta=self.eta, eval_every=None,
                       random_state=self.random_state)
        lda.state.sstats[...] = lam - lda.eta  # gensim's lambda is eta + sstats
        lda.sync_state()
        self.lda_, self.dictionary_, self.phrases_, self.n_docs_ = lda, dictionary, phrases, n_docs
        self.no_below_, self.phrase_min_count_, self.passes_, self.chunksize_ = (no_below, phrase_min_count,
                                                                                 passes, chunksize)
        return self

    @staticmethod
    def _tokens(text: str | None, frozen) -> list[str]:
        return textlib.drop_stopwords(frozen[textlib.words(text)])

    # --- inference --------------------------------------------------------------------------------

    def _check(self) -> None:
        if not hasattr(self, "lda_"):
            raise NotFitted("topic model is not fitted: call fit() or load() first")

    def vectorize(self, texts: Iterable[str | None]) -> sp.csr_matrix:
        """Documents x vocabulary word counts, through the fitted phrases and dictionary."""
        self._check()
        ids, counts, indptr = array("q"), array("f"), array("q", [0])
        for t in texts:
            bow = self.dictionary_.doc2bow(self._tokens(t, self.phrases_))
            ids.extend(i for i, _ in bow)
            counts.extend(c for _, c in bow)
            indptr.append(len(ids))
        return _csr(np.frombuffer(indptr, dtype=np.int64), np.frombuffer(ids, dtype=np.int64),
                    np.frombuffer(counts, dtype=np.float32), len(self.dictionary_))

    def transform(self, texts: Iterable[str | None], return_empty: bool = False):
        """Topic distributions of `texts` (n x K, rows sum to 1) from the fitted model.

        A text with no word of the vocabulary (empty, or only unknown/stop words) gets the uniform row
        1/K; `return_empty=True` returns `(theta, empty)` with `empty` the boolean mask of those rows.
        Deterministic: each document's inference starts from the same point, so its row depends on its
        text only (not on the batch, the call order, or a save/load round trip). Not thread-safe.
        """
        self._check()
        theta, empty = self._infer(self.vectorize(texts))
        return (theta, empty) if return_empty else theta

    def _infer(self, matrix: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        k = self.lda_.num_topics
        theta = np.full((matrix.shape[0], k), 1.0 / k)
        empty = np.diff(matrix.indptr) == 0
        todo = np.flatnonzero(~empty)
        saved = self.lda_.random_state
        self.lda_.random_state = _MeanInit()
        try:
            for lo in range(0, len(todo), _INFER_CHUNK):
                rows = todo[lo:lo + _INFER_CHUNK]
                chunk = [list(zip(matrix.indices[matrix.indptr[r]:matrix.indptr[r + 1]].tolist(),
                                  matrix.data[matrix.indptr[r]:matrix.indptr[r + 1]].tolist())) for r in rows]
                gamma, _ = self.lda_.inference(chunk)
                theta[rows] = gamma / gamma.sum(axis=1, keepdims=True)
        finally:
            self.lda_.random_state = saved
        return theta, empty

    # --- inspection ---------------------------------------------------------------------------------

    def top_words(self, n: int = 10) -> list[list[tuple[str, float]]]:
        """For each topic its n most probable words (phrases with a space: "neural network") and their
        probabilities, most probable first."""
        self._check()
        return [[(w.replace("_", " "), float(p)) for w, p in self.lda_.show_topic(k, topn=n)]
                for k in range(self.lda_.num_topics)]

    # --- persistence ----------------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Directory `path`: gensim's own files for the LDA model, dictionary and phrases, and a JSON config
        with the hyperparameters and the format version."""
        self._check()
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        self.lda_.save(os.fspath(out / LDA_FILE))
        self.dictionary_.save(os.fspath(out / DICTIONARY_FILE))
        self.phrases_.save(os.fspath(out / PHRASES_FILE))
        import gensim

        return write_config(out, MODEL_NAME, MODEL_VERSION, {
            "params": self.get_params(), "n_docs": self.n_docs_, "no_below": self.no_below_,
            "phrase_min_count": self.phrase_min_count_, "passes": self.passes_, "chunksize": self.chunksize_,
            "vocabulary": len(self.dictionary_), "gensim": gensim.__version__}, filename=CONFIG_FILE)

    @classmethod
    def load(cls, path: str | Path) -> TopicModel:
        """A model saved by `save`; NotFitted when the directory holds none or an incompatible version."""
        from gensim.corpora import Dictionary
        from gensim.models import LdaModel
        from gensim.models.phrases import FrozenPhrases

        src = Path(path)
        config = read_config(src, MODEL_NAME, MODEL_VERSION, label="topic", filename=CONFIG_FILE)
        try:
            model = cls(**config["params"])
            model.n_docs_ = config["n_docs"]
            model.no_below_ = config["no_below"]
            model.phrase_min_count_ = config["phrase_min_count"]
            model.passes_ = config["passes"]
            model.chunksize_ = config["chunksize"]
        except (KeyError, TypeError) as exc:
            raise NotFitted(f"corrupt topic model config in {src}: {exc!r}") from None
        try:
            lda = LdaModel.load(os.fspath(src / LDA_FILE))
            dictionary = Dictionary.load(os.fspath(src / DICTIONARY_FILE))
            phrases = FrozenPhrases.load(os.fspath(src / PHRASES_FILE))
        except FileNotFoundError as exc:
            raise NotFitted(f"incomplete topic model in {src}: {exc.filename} missing") from None
        except (OSError, EOFError, ValueError, AttributeError, ImportError, pickle.UnpicklingError) as exc:
            raise NotFitted(f"unreadable topic model in {src}: {exc}") from None
        lda.id2word = dictionary
        model.lda_, model.dictionary_, model.phrases_ = lda, dictionary, phrases
        return model


# --- quality --------------------------------------------------------------------------------------------


def _bags(model: TopicModel, texts: Iterable[str | None]) -> list[list[tuple[int, int]]]:
    return [b for b in (model.dictionary_.doc2bow(model._tokens(t, model.phrases_)) for t in texts) if b]


def held_out_perplexity(model: TopicModel, texts: Sequence[str | None]) -> float:
    """2^-(per-word variational bound) of `texts` under the model (gensim's `log_perplexity`; lower is better);
    the bound's E-step starts from the same random draws whatever the model, so two models compare."""
    model._check()
    lda = model.lda_
    saved = lda.random_state
    lda.random_state = np.random.RandomState(0)
    try:
        return float(2 ** -lda.log_perplexity(_bags(model, texts)))
    finally:
        lda.random_state = saved


def umass_coherence(model: TopicModel, texts: Sequence[str | None], topn: int = 10) -> float:
    """Mean UMass coherence of the topics' `topn` top words over the bags of `texts` (gensim's CoherenceModel;
    closer to 0 is better)."""
    from gensim.models.coherencemodel import CoherenceModel

    model._check()
    return float(CoherenceModel(model=model.lda_, corpus=_bags(model, texts), dictionary=model.dictionary_,
                                coherence="u_mass", topn=topn).get_coherence())


# --- author features -------------------------------------------------------------------------------------


def _papers_with_topics(authorship: sp.spmatrix, paper_topics: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """0/1 authorship restricted to papers with topic mass (rows of all zeros mean "no text"), and the
    topics as float64."""
    pt = np.asarray(paper_topics, dtype=np.float64)
    if pt.ndim != 2 or pt.shape[0] != authorship.shape[1]:
        raise ValueError(f"paper_topics has shape {pt.shape}: expected ({authorship.shape[1]}, K)")
    b = sp.csr_matrix(authorship, dtype=np.float64, copy=True)
    b.sum_duplicates()
    b.eliminate_zeros()
    b.data[:] = 1.0
    has = pt.sum(axis=1) > 0
    if not has.all():
        b = (b @ sp.diags(has.astype(np.float64))).tocsr()
        b.eliminate_zeros()
    return b, pt


def author_topic_distribution(authorship: sp.spmatrix, paper_topics: np.ndarray) -> np.ndarray:
    """p(r|a) (authors x K): the mean topic distribution of the author's papers,
    `p(r|a) = (1/|P_a|) sum_{p in P_a} theta_{p,r}`, P_a = the author's papers with a non-zero topic row.
    An author with no such paper gets a row of zeros (no topic mass)."""
    b, pt = _papers_with_topics(authorship, paper_topics)
    n = np.asarray(b.sum(axis=1)).ravel()
    total = np.asarray(b @ pt)
    return np.divide(total, n[:, None], out=np.zeros_like(total), where=n[:, None] > 0)


def topic_diversity(authorship: sp.spmatrix, paper_topics: np.ndarray) -> np.ndarray:
    """Per author: the mean Shannon entropy (natural log, nats) of their papers' topic distributions,
    `TD_a = (1/|P_a|) sum_{p in P_a} -sum_r theta_{p,r} ln theta_{p,r}` (0 ln 0 = 0); 0 for an author
    with no paper with topics. Ranges from 0 (single-topic papers) to ln K."""
    b, pt = _papers_with_topics(authorship, paper_topics)
    safe = np.where(pt > 0, pt, 1.0)
    entropy = -(pt * np.log(safe)).sum(axis=1)
    n = np.asarray(b.sum(axis=1)).ravel()
    total = b @ entropy
    return np.divide(total, n, out=np.zeros_like(total), where=n > 0)


def topic_authority_matrix(authorship: sp.spmatrix, paper_topics: np.ndarray,
                           paper_citations: np.ndarray) -> np.ndarray:
    """Per author and topic (authors x K): the citations their papers received, each paper's credited
    to the topics in proportion to its topic shares, `A_{a,r} = sum_{p in P_a} theta_{p,r} * c_p`."""
    b, pt = _papers_with_topics(authorship, paper_topics)
    c = np.asarray(paper_citations, dtype=np.float64).ravel()
    if c.shape != (pt.shape[0],):
        raise ValueError(f"paper_citations has {c.shape[0]} entries: expected one per paper ({pt.shape[0]})")
    return np.asarray(b @ (pt * c[:, None]))


def topic_authority(authorship: sp.spmatrix, paper_topics: np.ndarray, paper_citations: np.ndarray) -> np.ndarray:
    """Per author: their authority in the topics they work on (IIRL's topic authority, after Zhang et al.,
    "Identifying the Academic Rising Stars"): citations per topic (`topic_authority_matrix`), damped by a
    log and weighted by how much the author works on each topic,
    `TA_a = sum_r p(r|a) * ln(1 + A_{a,r})`, with `A_{a,r} = sum_{p in P_a} theta_{p,r} * c_p` and p(r|a)
    from `author_topic_distribution`. 0 for an author without cited papers or without topics."""
    p = author_topic_distribution(authorship, paper_topics)
    a = topic_authority_matrix(authorship, paper_topics, paper_citations)
    return (p * np.log1p(a)).sum(axis=1)


def paper_topic_edges(paper_topics: np.ndarray, threshold: float = 0.1,
                      paper_mask: np.ndarray | None = None) -> sp.csr_matrix:
    """HAS_TOPIC edges: papers x K, `theta_{p,r}` where it is >= threshold, nothing elsewhere.
    `paper_mask` (bool per paper) keeps only the rows it marks: pass `~empty` from `transform` so that
    papers without text (uniform rows) get no edge. `networks.edge_rows(m, paper_ids, topic_ids)` turns
    the result into write-back rows."""
    pt = np.asarray(paper_topics, dtype=np.float64)
    if pt.ndim != 2:
        raise ValueError(f"paper_topics must be 2-D, not shape {pt.shape}")
    keep = pt >= threshold
    if paper_mask is not None:
        mask = np.asarray(paper_mask, dtype=bool)
        if mask.shape != (pt.shape[0],):
            raise ValueError("paper_mask must have one entry per paper")
        keep &= mask[:, None]
    m = sp.csr_matrix(np.where(keep, pt, 0.0))
    m.eliminate_zeros()
    return m
