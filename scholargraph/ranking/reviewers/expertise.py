"""Expertise protocol: reviewers' own 1-5 ratings of papers, scored by the weighted Kendall loss with a bootstrap.

The Stelmakh et al. gold standard: each reviewer rated, for papers they had read, their expertise to review
them. A system scores every rated (paper, reviewer) pair; for each reviewer, every pair of rated papers with
different ratings counts |difference| when the system orders it wrongly and half of that on a tie. The loss
is those counts over the sum of |difference| of all pairs, pooled over reviewers: 0 is perfect, 0.5 random.
A score must therefore mean the same for every paper, as the affinities an assignment adds up must.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from scholargraph.conference.submissions import Query, ReviewerPool
from scholargraph.ranking.reviewers.aggregate import top_mean
from scholargraph.ranking.reviewers.cof import CoF
from scholargraph.ranking.reviewers.evaluate import EmbeddingRanker, Ranker, cof_ranker, model_ranker
from scholargraph.ranking.reviewers.evidence import EvidenceIndex
from scholargraph.ranking.reviewers.reco_rank import RecoRank
from scholargraph.tables import text_table
from scholargraph.user_files import Repeats, Warn, bad_line, data_lines, no_warning, parse_float

# (query, pool row of the reviewer) -> affinity
PairScorer = Callable[[Query, int], float]


def read_expertise_qrels(path: str, what: str = "--qrels", warn: Warn = no_warning) -> dict[str, dict[str, float]]:
    """`paper 0 reviewer expertise` lines (expertise may be fractional, e.g. 4.5) -> {reviewer: {paper: e}}; a
    rating repeated is kept once (`warn` says so), one repeated with another value is a UsageError."""
    out: dict[str, dict[str, float]] = {}
    repeats = Repeats(what, path, "rating")
    for n, parts in data_lines(path, what):
        if len(parts) != 4:
            raise bad_line(what, path, n, f"expected `paper 0 reviewer expertise`, got {' '.join(parts)[:60]!r}")
        expertise = parse_float(parts[3], what, path, n, "the expertise")
        if repeats.first((parts[2], parts[0]), n, expertise):
            out.setdefault(parts[2], {})[parts[0]] = expertise
    if not out:
        raise bad_line(what, path, None, "holds no ratings (expected `paper 0 reviewer expertise` lines)")
    repeats.report(warn)
    return out


def reviewer_loss_terms(scores: Sequence[float], expertise: Sequence[float]) -> tuple[float, float]:
    """(weighted wrong-order mass, total mass) over one reviewer's pairs of rated papers."""
    s = np.asarray(scores, dtype=float)
    e = np.asarray(expertise, dtype=float)
    iu = np.triu_indices(len(e), k=1)
    de = (e[:, None] - e[None, :])[iu]
    ds = (s[:, None] - s[None, :])[iu]
    w = np.abs(de)
    wrong = (np.sign(ds) != np.sign(de)) & (ds != 0)
    tie = ds == 0
    return float((w * wrong).sum() + 0.5 * (w * tie).sum()), float(w.sum())


def pooled_loss(terms: np.ndarray) -> float:
    """terms [n_reviewers, 2] -> sum of wrong mass / sum of total mass."""
    total = terms[:, 1].sum()
    return float(terms[:, 0].sum() / total) if total > 0 else 0.0


def bootstrap_interval(terms: np.ndarray, n: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the pooled loss over reviewers resampled with replacement."""
    rng = np.random.default_rng(seed)
    k = len(terms)
    if k == 0:
        return (float("nan"), float("nan"))
    picks = rng.integers(0, k, size=(n, k))
    wrong = terms[picks, 0].sum(axis=1)
    total = np.maximum(terms[picks, 1].sum(axis=1), 1e-12)
    lo, hi = np.quantile(wrong / total, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


@dataclass
class ExpertiseJudgments:
    """Rated papers as queries, and each reviewer's ratings keyed by the reviewer's pool row. Papers are judged
    against every paper of the reviewer: the ratings were given at collection time, so there is no as-of year."""

    queries: dict[str, Query]
    ratings: dict[str, dict[str, float]]  # reviewer id (graph form) -> {query id: expertise}
    pool: ReviewerPool
    texts: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(cls, index: EvidenceIndex, queries: Sequence[Query], qrels: Mapping[str, Mapping[str, float]],
              reviewer_ids: Mapping[str, str], texts: Mapping[str, str] | None = None) -> ExpertiseJudgments:
        """`reviewer_ids` maps the qrels' reviewer ids to graph author ids (the resolver's answer); reviewers
        it lacks, and ratings of papers missing from `queries`, are skipped and counted."""
        by_id = {q.id: replace(q, year=None) for q in queries}
        ratings: dict[str, dict[str, float]] = {}
        skipped = {"reviewers": 0, "ratings": 0}
        for given, rated in qrels.items():
            node = reviewer_ids.get(given)
            if node is None:
                skipped["reviewers"] += 1
                skipped["ratings"] += len(rated)
                continue
            kept = {p: e for p, e in rated.items() if p in by_id}
            skipped["ratings"] += len(rated) - len(kept)
            if len(kept) >= 2:
                ratings[node] = kept
        pool = ReviewerPool.from_snapshot(index.snapshot, author_ids=sorted(ratings))
        return cls(by_id, ratings, pool, dict(texts or {}), skipped)

    def n_ratings(self) -> int:
        return sum(len(r) for r in self.ratings.values())


@dataclass
class ExpertiseResult:
    loss: float
    low: float
    high: float
    terms: np.ndarray


def evaluate_scorer(scorer: PairScorer, judgments: ExpertiseJudgments, *, bootstrap: int = 2000,
                    seed: int = 0) -> ExpertiseResult:
    terms = []
    for reviewer, rated in judgments.ratings.items():
        row = judgments.pool.row(reviewer)
        papers = sorted(rated)
        scores = [scorer(judgments.queries[p], row) for p in papers]
        terms.append(reviewer_loss_terms(scores, [rated[p] for p in papers]))
    arr = np.asarray(terms, dtype=float).reshape(-1, 2)
    lo, hi = bootstrap_interval(arr, bootstrap, seed)
    return ExpertiseResult(pooled_loss(arr), lo, hi, arr)


# --- the rankers, each scoring one (paper, reviewer) pair on its own --------------------------------------


class LibraryTfidf:
    """scikit-learn's TfidfVectorizer (sublinear tf, English stop words) fitted on the corpus texts: the
    openreview-expertise style lexical evidence, beside an encoder without TF-IDF rows of its own."""

    def fit(self, texts: Sequence[str]) -> LibraryTfidf:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer_ = TfidfVectorizer(sublinear_tf=True, stop_words="english", dtype=np.float32)
        self.vectorizer_.fit([t for t in texts if t and t.strip()] or ["empty"])
        return self

    def tfidf(self, texts: Sequence[str]) -> sp.csr_matrix:
        return sp.csr_matrix(self.vectorizer_.transform(list(texts)), dtype=np.float32)


def pair_scorer(ranker: Ranker) -> PairScorer:
    """A ranker of pool rows asked about one reviewer at a time (no other candidate in the call)."""
    return lambda q, row: float(ranker(q, np.array([row]))[0])


def lexical_scorer(index: EvidenceIndex, pool: ReviewerPool, texts: Mapping[str, str]) -> PairScorer:
    """Mean of the best three TF-IDF cosines (LibraryTfidf fitted on the corpus) between the paper and the
    reviewer's papers."""
    snap = index.snapshot
    corpus = [snap.text(i) for i in range(snap.n_papers)]
    model = LibraryTfidf().fit(corpus)
    rows = model.tfidf(corpus)
    cache: dict[str, np.ndarray] = {}

    def score(q: Query, row: int) -> float:
        if q.id not in cache:
            cache[q.id] = np.asarray(model.tfidf([texts.get(q.id, q.title)]).toarray()[0], dtype=np.float32)
        owner, paper = index.eligible_pairs(q, pool, np.array([row]))
        if len(paper) == 0:
            return -1.0
        return float(top_mean(owner, np.asarray(rows[paper] @ cache[q.id], dtype=np.float64), 1)[0])
    return score


def sum_scorer(*scorers: PairScorer) -> PairScorer:
    return lambda q, row: float(sum(s(q, row) for s in scorers))


def expertise_experiment(index: EvidenceIndex, judgments: ExpertiseJudgments, model: RecoRank | None, *,
                         bootstrap: int = 2000) -> dict[str, ExpertiseResult]:
    """Every ranker of the protocol on the same pairs."""
    pool = judgments.pool
    # Mean of the best three cosines in the encoder's space (the index's own text vectors).
    enc = pair_scorer(EmbeddingRanker(index, pool))
    lex = lexical_scorer(index, pool, judgments.texts)
    scorers: dict[str, PairScorer] = {}
    if model is not None:
        scorers["RECO-Rank"] = pair_scorer(model_ranker(model, index, pool))
    # CoF's chain runs over the one reviewer's papers: its first stages rank the papers of the candidates
    # it is given, so the pair is scored on its own, as the protocol requires.
    scorers["CoF"] = pair_scorer(cof_ranker(CoF(), index, pool))
    scorers["mean-top-3 lexical (TF-IDF)"] = lex
    scorers[f"mean-top-3 encoder ({getattr(index.encoder, 'name', 'encoder')})"] = enc
    scorers["lexical + encoder"] = sum_scorer(lex, enc)
    return {name: evaluate_scorer(s, judgments, bootstrap=bootstrap) for name, s in scorers.items()}


def format_expertise_table(results: Mapping[str, ExpertiseResult], judgments: ExpertiseJudgments,
                           title: str = "expertise (weighted Kendall loss, lower is better; 0.5 = random)") -> str:
    lines = [title, text_table(["ranker", "loss", "95% bootstrap interval"],
                               [[name, f"{r.loss:.3f}", f"[{r.low:.3f}, {r.high:.3f}]"] for name, r in results.items()],
                               widths=[max([34, *map(len, results)]), 7, 24], sep=" ", rule="full")]
    lines.append(f"  reviewers={len(judgments.ratings)}, ratings={judgments.n_ratings()}, "
                 f"skipped reviewers={judgments.skipped.get('reviewers', 0)}, "
                 f"skipped ratings={judgments.skipped.get('ratings', 0)}")
    return "\n".join(lines)


def plot_expertise(results: Mapping[str, ExpertiseResult], path: str, title: str = "expertise loss") -> str:
    """Horizontal bars of the loss with the bootstrap interval as error bars (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results)
    loss = np.array([results[n].loss for n in names])
    err = np.array([[results[n].loss - results[n].low for n in names], [results[n].high - results[n].loss
                                                                          for n in names]])
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(names) + 1.2))
    ax.barh(range(len(names)), loss, xerr=err, color="#4c72b0", capsize=3)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.axvline(0.5, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("weighted Kendall loss (lower is better; 0.5 = random), 95% bootstrap interval")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
