"""Reviewer-recommendation evaluation: Soft/Hard P@5/P@10 over judged candidates, baselines, ablations, charts."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from scholargraph.conference.submissions import Query, ReviewerPool, read_candidates
from scholargraph.graph import text as textlib
from scholargraph.graph.records import paper_text
from scholargraph.ranking.metrics import mean_over_queries, precision_at_k, reciprocal_rank
from scholargraph.ranking.reviewers.aggregate import top_mean
from scholargraph.ranking.reviewers.cof import CoF
from scholargraph.ranking.reviewers.evidence import EvidenceIndex, reviewer_profiles
from scholargraph.ranking.reviewers.reco_rank import RecoRank
from scholargraph.ranking.reviewers.training import TrainingQuery, judged_queries, self_supervised_queries
from scholargraph.tables import text_table

# score(query, pool rows) -> one score per row, higher is better
Ranker = Callable[[Query, np.ndarray], np.ndarray]
RankerFactory = Callable[[EvidenceIndex, ReviewerPool], Ranker]

METRICS = ("soft_p5", "soft_p10", "hard_p5", "hard_p10")
ABLATIONS: dict[str, dict] = {
    "RECO-Rank": {},
    "w/o calibration": {"calibration": False},
    "w/o compensation": {"compensation": False},
    "w/o gate & reliability": {"gate_reliability": False},
    "w/o top-k loss": {"topk_loss": False},
}


# --- semantic-only rankers ---------------------------------------------------------------------------------


class TfidfRanker:
    """Semantic-only baseline: TF-IDF cosine (sublinear tf, smoothed idf, the shared tokeniser) between the
    submission and each of the reviewer's papers; a reviewer scores the mean of their best three."""

    name = "TF-IDF"

    def __init__(self, index: EvidenceIndex, pool: ReviewerPool, texts: Mapping[str, str] | None = None):
        self.index, self.pool = index, pool
        snap = index.snapshot
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        vals: list[int] = []
        for i in range(snap.n_papers):
            counts: dict[int, int] = {}
            for tok in textlib.tokenize(snap.text(i)):
                j = vocab.setdefault(tok, len(vocab))
                counts[j] = counts.get(j, 0) + 1
            rows.extend([i] * len(counts))
            cols.extend(counts)
            vals.extend(counts.values())
        tf = sp.csr_matrix((np.asarray(vals, np.float32), (rows, cols)), shape=(snap.n_papers, max(len(vocab), 1)))
        df = np.bincount(tf.indices, minlength=tf.shape[1])
        self.idf = (np.log((snap.n_papers + 1) / (df + 1)) + 1).astype(np.float32)
        tf.data = 1 + np.log(tf.data)
        x = tf @ sp.diags(self.idf)
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        self.x = (sp.diags(np.divide(1, norms, out=np.zeros_like(norms), where=norms > 0)) @ x).tocsr()
        self.vocab = vocab
        self.texts = texts or {}

    def query_vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.x.shape[1], dtype=np.float32)
        for tok in textlib.tokenize(text):
            j = self.vocab.get(tok)
            if j is not None:
                v[j] += 1
        nz = v > 0
        v[nz] = (1 + np.log(v[nz])) * self.idf[nz]
        n = float(np.linalg.norm(v))
        return v / n if n > 0 else v

    def query_text(self, q: Query) -> str:
        if q.id in self.texts:
            return self.texts[q.id]
        return self.index.snapshot.text(q.paper_index) if q.paper_index is not None else q.title

    def __call__(self, q: Query, rows: np.ndarray) -> np.ndarray:
        owner, paper = self.index.eligible_pairs(q, self.pool, rows)
        qv = self.query_vector(self.query_text(q))
        scores = self.x[paper] @ qv if len(paper) else np.zeros(0)
        return top_mean(owner, np.asarray(scores, dtype=np.float64), len(rows))


class BM25Ranker(TfidfRanker):
    """Semantic-only baseline: BM25 (bm25s, Lucene variant) of the submission against each reviewer paper;
    a reviewer scores the mean of their best three."""

    name = "BM25"

    def __init__(self, index: EvidenceIndex, pool: ReviewerPool, texts: Mapping[str, str] | None = None):
        import bm25s

        self.index, self.pool = index, pool
        self.texts = texts or {}
        snap = index.snapshot
        corpus = [textlib.tokenize(snap.text(i)) or [""] for i in range(snap.n_papers)]
        self.bm25 = bm25s.BM25()
        self.bm25.index(corpus, show_progress=False)
        self.known = set(self.bm25.vocab_dict)

    def __call__(self, q: Query, rows: np.ndarray) -> np.ndarray:
        owner, paper = self.index.eligible_pairs(q, self.pool, rows)
        toks = [t for t in textlib.tokenize(self.query_text(q)) if t in self.known]
        if not toks or len(paper) == 0:
            return top_mean(owner, np.zeros(len(paper)), len(rows))
        scores = self.bm25.get_scores(toks)
        return top_mean(owner, np.asarray(scores[paper], dtype=np.float64), len(rows))


class EmbeddingRanker:
    """Semantic-only baseline over text embeddings: mean of the best three cosines. By default the index's own
    text vectors (the evidence encoder); `vectors` (n_papers x d, zero rows = no text) with
    `query_vectors` ({query id: vector}; in-graph queries default to their paper's row) for another encoder."""

    name = "Embedding"

    def __init__(self, index: EvidenceIndex, pool: ReviewerPool, vectors: np.ndarray | None = None,
                 query_vectors: Mapping[str, np.ndarray] | None = None):
        self.index, self.pool = index, pool
        self.vectors = index.text if vectors is None else np.asarray(vectors, dtype=np.float32)
        self.has = np.linalg.norm(self.vectors, axis=1) > 0
        self.query_vectors = query_vectors or {}

    def _query_vector(self, q: Query) -> np.ndarray | None:
        if q.id in self.query_vectors:
            return np.asarray(self.query_vectors[q.id], dtype=np.float32)
        if self.vectors is self.index.text:
            return q.text_vector if q.has_text else None
        if q.paper_index is not None and self.has[q.paper_index]:
            return self.vectors[q.paper_index]
        return None

    def __call__(self, q: Query, rows: np.ndarray) -> np.ndarray:
        owner, paper = self.index.eligible_pairs(q, self.pool, rows)
        qv = self._query_vector(q)
        if qv is None or len(paper) == 0:
            return top_mean(owner, np.zeros(len(paper)), len(rows))
        norm = float(np.linalg.norm(qv))
        scores = self.vectors[paper] @ (qv / norm if norm > 0 else qv)
        scores = np.where(self.has[paper], scores, -1.0)
        return top_mean(owner, scores.astype(np.float64), len(rows))


def model_ranker(model: RecoRank, index: EvidenceIndex, pool: ReviewerPool) -> Ranker:
    return lambda q, rows: model.score(index, q, pool, rows)


def cof_ranker(cof: CoF, index: EvidenceIndex, pool: ReviewerPool) -> Ranker:
    return lambda q, rows: cof.score(index, q, pool, rows)


# --- protocol ---------------------------------------------------------------------------------------------


@dataclass
class Judgments:
    """What an evaluation ranks: queries, their judged candidates (the CoF protocol ranks only these) and
    graded judgments (0-3)."""

    queries: list[Query]
    qrels: dict[str, dict[str, int]]
    candidates: dict[str, list[str]]
    texts: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_records(cls, index: EvidenceIndex, records: Sequence[Mapping], qrels: dict[str, dict[str, int]],
                     candidates: dict[str, list[str]]) -> Judgments:
        """Judgments of submission records (user_files.read_jsonl's), their texts kept for the text rankers."""
        return cls(index.queries_from_records(records), qrels, candidates, record_texts(records))

    def pool(self, index: EvidenceIndex) -> ReviewerPool:
        ids = sorted({a for c in self.candidates.values() for a in c})
        return ReviewerPool.from_snapshot(index.snapshot, author_ids=ids)


def run_ranker(ranker: Ranker, judgments: Judgments, pool: ReviewerPool) -> dict[str, list[tuple[str, float]]]:
    """The judged candidates of each query, ranked (ties keep the candidates' file order)."""
    run = {}
    for q in judgments.queries:
        cands = judgments.candidates.get(q.id, [])
        rows = pool.rows(cands)
        scores = np.asarray(ranker(q, rows), dtype=np.float64)
        order = np.argsort(-scores, kind="stable")
        run[q.id] = [(cands[i], float(scores[i])) for i in order]
    return run


def run_metrics(run: Mapping[str, Sequence[tuple[str, float]]], qrels: Mapping[str, Mapping[str, int]]) -> dict:
    ranked = {q: [d for d, _ in r] for q, r in run.items()}
    judged = {q: j for q, j in qrels.items() if q in ranked}
    out = {}
    for k in (5, 10):
        out[f"soft_p{k}"] = mean_over_queries(precision_at_k, ranked, judged, k=k, min_grade=2)
        out[f"hard_p{k}"] = mean_over_queries(precision_at_k, ranked, judged, k=k, min_grade=3)
    out["hard_mrr"] = mean_over_queries(reciprocal_rank, ranked, judged, min_grade=3)
    return out


def evaluate_rankers(rankers: Mapping[str, Ranker], judgments: Judgments, pool: ReviewerPool) -> dict[str, dict]:
    """{ranker name: metrics (+ seconds per query)}."""
    results = {}
    for name, ranker in rankers.items():
        t0 = time.perf_counter()
        run = run_ranker(ranker, judgments, pool)
        m = run_metrics(run, judgments.qrels)
        m["ms_per_query"] = 1000 * (time.perf_counter() - t0) / max(len(judgments.queries), 1)
        results[name] = m
    return results


# --- training sets and experiments --------------------------------------------------------------------------


def train_variants(index: EvidenceIndex, training: Sequence[TrainingQuery], variants: Mapping[str, dict] = ABLATIONS,
                   seeds: Sequence[int] = (0,), **params) -> dict[str, list[RecoRank]]:
    """Each variant trained on the same queries, once per seed."""
    out = {}
    for name, overrides in variants.items():
        out[name] = [RecoRank(**{**params, **overrides, "seed": s}).train_on(training) for s in seeds]
    return out


def _mean_metrics(per_seed: Sequence[dict]) -> dict:
    keys = per_seed[0].keys()
    out = {k: float(np.mean([m[k] for m in per_seed])) for k in keys}
    if len(per_seed) > 1:
        out.update({f"{k}_std": float(np.std([m[k] for m in per_seed])) for k in METRICS})
    return out


@dataclass
class Experiment:
    """Results of one evaluation: metrics per ranker, the table, and what was measured on."""

    title: str
    results: dict[str, dict]
    info: dict = field(default_factory=dict)

    def table(self) -> str:
        return format_table(self.results, self.title, self.info)


def run_experiment(index: EvidenceIndex, judgments: Judgments, *, title: str, training: Sequence[TrainingQuery],
                   seeds: Sequence[int] = (0,), variants: Mapping[str, dict] = ABLATIONS,
                   cof_settings: Mapping[str, CoF] | None = None,
                   semantic: Sequence[str] = ("tfidf", "bm25", "embedding"), model_params: Mapping | None = None,
                   extra_rankers: Mapping[str, RankerFactory] | None = None) -> Experiment:
    """RECO-Rank and its ablations (trained on `training`, averaged over seeds), CoF and the semantic-only
    baselines (plus `extra_rankers`, each made from the index and the candidates' pool), all ranking the
    judged candidates of `judgments`."""
    pool = judgments.pool(index)
    params = dict(model_params or {})
    t0 = time.perf_counter()
    models = train_variants(index, training, variants, seeds, **params)
    train_s = time.perf_counter() - t0
    results: dict[str, dict] = {}
    for name, ms in models.items():
        results[name] = _mean_metrics([evaluate_rankers({name: model_ranker(m, index, pool)}, judgments, pool)[name]
                                       for m in ms])
    cofs = cof_settings or {"CoF": CoF()}
    results.update(evaluate_rankers({n: cof_ranker(c, index, pool) for n, c in cofs.items()}, judgments, pool))
    sem: dict[str, Ranker] = {}
    if "tfidf" in semantic:
        sem["TF-IDF"] = TfidfRanker(index, pool, judgments.texts)
    if "bm25" in semantic:
        sem["BM25"] = BM25Ranker(index, pool, judgments.texts)
    if "embedding" in semantic:
        sem["Embedding"] = EmbeddingRanker(index, pool)
    results.update(evaluate_rankers(sem, judgments, pool))
    if extra_rankers:
        results.update(evaluate_rankers({n: make(index, pool) for n, make in extra_rankers.items()}, judgments,
                                        pool))
    info = {"queries": len(judgments.queries), "training_queries": len(training), "seeds": list(seeds),
            "candidates_per_query": float(np.mean([len(c) for c in judgments.candidates.values()] or [0])),
            "train_seconds_all_variants": round(train_s, 1)}
    exp = Experiment(title, results, info)
    exp.models = models  # type: ignore[attr-defined]
    return exp


def synthetic_judgments(index: EvidenceIndex, queries_path: str, qrels_path: str,
                        candidates_path: str) -> Judgments:
    """The synthetic world's reviewer queries, qrels and candidate sets (scholargraph synth)."""
    from scholargraph.ranking.metrics import read_qrels
    from scholargraph.user_files import read_jsonl

    return Judgments.from_records(index, read_jsonl(queries_path, "--queries"), read_qrels(qrels_path),
                                  read_candidates(candidates_path))


def record_texts(records) -> dict[str, str]:
    """{query id: its title and abstract as one text} of submission records (user_files.read_jsonl's)."""
    return {str(r["id"]): paper_text(r.get("title"), r.get("abstract")) for r in records}


def heldout_judgments(index: EvidenceIndex, test_year: int, *, n_queries: int = 200, min_papers: int = 2,
                      hard_negatives: int = 15, random_negatives: int = 15, seed: int = 0,
                      pool: ReviewerPool | None = None) -> tuple[Judgments, ReviewerPool]:
    """Self-supervised held-out-author protocol on real data: papers of `test_year` are the submissions,
    judged only against the graph up to `test_year - 1`; their authors in the pool (authors with at least
    `min_papers` papers up to then) are the relevant reviewers (grade 3), beside hard negatives (closest
    topic profiles) and random pool members (grade 0). Soft and hard precision coincide here."""
    snap = index.snapshot
    T = test_year - 1
    pool = pool or ReviewerPool.from_snapshot(snap, min_papers=min_papers, until_year=T)
    rng = np.random.default_rng(seed)
    pool_of_author = np.full(snap.n_authors, -1, dtype=np.int64)
    pool_of_author[pool.author_rows[pool.author_rows >= 0]] = np.flatnonzero(pool.author_rows >= 0)
    cand = np.flatnonzero((snap.paper_year == test_year) & index.has_text & ~np.asarray(snap.paper_stub))
    rng.shuffle(cand)
    auth = snap.authorship.tocsc()
    profiles = reviewer_profiles(index, pool)
    queries: list[Query] = []
    qrels, candidates = {}, {}
    for p in cand:
        if len(queries) >= n_queries:
            break
        rows = pool_of_author[auth.indices[auth.indptr[p]:auth.indptr[p + 1]]]
        rows = rows[rows >= 0]
        if len(rows) == 0:
            continue
        q = replace(index.query_for_paper(int(p)), year=T)
        sims = profiles @ index.topics[p]
        sims[rows] = -np.inf
        hard = np.argsort(-sims)[:hard_negatives]
        rest = np.setdiff1d(np.arange(len(pool)), np.r_[rows, hard])
        rnd = rng.choice(rest, size=min(random_negatives, len(rest)), replace=False)
        ids = [pool.author_ids[r] for r in np.r_[rows, hard, rnd]]
        order = rng.permutation(len(ids))  # no ranker may profit from the file order of ties
        ids = [ids[i] for i in order]
        queries.append(q)
        rel = {pool.author_ids[r] for r in rows}
        qrels[q.id] = {a: 3 if a in rel else 0 for a in ids}
        candidates[q.id] = ids
    return Judgments(queries, qrels, candidates), pool


def heldout_training(index: EvidenceIndex, pool: ReviewerPool, test_year: int, n: int = 600, seed: int = 0,
                     **kw) -> list[TrainingQuery]:
    """Self-supervised training queries hidden from the years before `test_year` (never a test paper)."""
    return self_supervised_queries(index, pool, n, seed=seed, until_year=test_year - 1, **kw)


def synthetic_training(index: EvidenceIndex, pool: ReviewerPool, n: int = 600, seed: int = 0,
                       judged: Judgments | None = None, **kw) -> list[TrainingQuery]:
    out = self_supervised_queries(index, pool, n, seed=seed, **kw)
    if judged is not None:
        out += judged_queries(index, judged.queries, judged.qrels, judged.pool(index))
    return out


def precision_ceiling(judgments: Judgments) -> dict[str, float]:
    """The best Hard P@5 / P@10 any ranking could reach (fewer relevant candidates than k cap it)."""
    out = {}
    for k in (5, 10):
        vals = [min(k, sum(g >= 3 for g in judgments.qrels.get(q.id, {}).values())) / k for q in judgments.queries]
        out[f"hard_p{k}_ceiling"] = round(float(np.mean(vals)), 3) if vals else 0.0
    return out


COF_GRID = tuple((n1, n2) for n1 in (0.1, 0.2, 0.3, 0.5, 1.0) for n2 in (0.25, 0.5, 1.0))


def cof_oracle(index: EvidenceIndex, judgments: Judgments, pool: ReviewerPool,
               grid: Sequence[tuple[float, float]] = COF_GRID, key: str = "hard_p5") -> tuple[str, dict]:
    """CoF with the (n1, n2) that does best on these very judgments: an upper bound on the baseline, tuned
    on the test queries (which RECO-Rank never sees)."""
    best_name, best = "", {key: -1.0}
    for n1, n2 in grid:
        m = evaluate_rankers({"c": cof_ranker(CoF(n1=n1, n2=n2), index, pool)}, judgments, pool)["c"]
        if m[key] > best[key]:
            best_name, best = f"CoF oracle (n1={n1}, n2={n2})", m
    return best_name, best


def synthetic_experiment(index: EvidenceIndex, world_dir: str, *, seeds: Sequence[int] = (0, 1, 2),
                         training_queries: int = 600, min_papers: int = 3, variants: Mapping[str, dict] = ABLATIONS,
                         semantic: Sequence[str] = ("tfidf", "bm25", "embedding"), oracle: bool = True,
                         model_params: Mapping | None = None, title: str | None = None,
                         extra_rankers: Mapping[str, RankerFactory] | None = None) -> Experiment:
    """The synthetic world's judged reviewer queries (`scholargraph synth` output in `world_dir`): RECO-Rank
    trained self-supervised on the corpus only (never on the qrels), its ablations, CoF, semantic baselines."""
    import os

    judgments = synthetic_judgments(index, os.path.join(world_dir, "reviewers.queries.jsonl"),
                                    os.path.join(world_dir, "reviewers.qrels"),
                                    os.path.join(world_dir, "reviewers.candidates"))
    pool = ReviewerPool.from_snapshot(index.snapshot, min_papers=min_papers)
    params = dict(model_params or {})
    training = self_supervised_queries(index, pool, training_queries, seed=0,
                                       **{k: params[k] for k in ("max_papers", "per_evidence") if k in params})
    exp = run_experiment(index, judgments, title=title or f"synthetic world ({index.snapshot.n_papers:,} papers)",
                         training=training, seeds=seeds, variants=variants, semantic=semantic, model_params=params,
                         extra_rankers=extra_rankers)
    if oracle:
        name, m = cof_oracle(index, judgments, judgments.pool(index))
        exp.results[name] = m
    exp.info["reviewer_pool_for_training"] = len(pool)
    exp.judgments = judgments  # type: ignore[attr-defined]
    return exp


def heldout_experiment(index: EvidenceIndex, test_year: int, *, n_queries: int = 200, min_papers: int = 2,
                       seeds: Sequence[int] = (0, 1, 2), training_queries: int = 600,
                       variants: Mapping[str, dict] = ABLATIONS,
                       semantic: Sequence[str] = ("tfidf", "bm25", "embedding"), oracle: bool = True,
                       model_params: Mapping | None = None, title: str = "", seed: int = 0,
                       extra_rankers: Mapping[str, RankerFactory] | None = None) -> Experiment:
    """Self-supervised held-out-author evaluation on real data: papers of `test_year` are the submissions,
    their authors the relevant reviewers, among hard and random negatives; RECO-Rank trains on papers
    hidden from the years before (build the index with `until_year=test_year - 1`)."""
    judgments, pool = heldout_judgments(index, test_year, n_queries=n_queries, min_papers=min_papers, seed=seed)
    params = dict(model_params or {})
    training = heldout_training(index, pool, test_year, n=training_queries, seed=seed,
                                **{k: params[k] for k in ("max_papers", "per_evidence") if k in params})
    exp = run_experiment(index, judgments, title=title or f"held-out authors, {test_year}", training=training,
                         seeds=seeds, variants=variants, semantic=semantic, model_params=params,
                         extra_rankers=extra_rankers)
    if oracle:
        name, m = cof_oracle(index, judgments, judgments.pool(index))
        exp.results[name] = m
    exp.info.update({"test_year": test_year, "reviewer_pool": len(pool), "min_papers": min_papers,
                     **precision_ceiling(judgments)})
    exp.judgments = judgments  # type: ignore[attr-defined]
    return exp


# --- output ------------------------------------------------------------------------------------------------


def format_table(results: Mapping[str, Mapping[str, float]], title: str = "", info: Mapping | None = None) -> str:
    """A fixed-width text table: Soft/Hard P@5/P@10 (and std over seeds where there are several)."""
    keys = ("soft_p5", "soft_p10", "hard_p5", "hard_p10", "hard_mrr")

    def cell(m: Mapping[str, float], k: str) -> str:
        sd = m.get(f"{k}_std")
        return f"{m.get(k, math.nan):.3f}" + (f"±{sd:.2f}" if sd is not None else "")

    table = text_table(["ranker", "Soft P@5", "Soft P@10", "Hard P@5", "Hard P@10", "Hard MRR"],
                       [[name, *(cell(m, k) for k in keys)] for name, m in results.items()],
                       widths=[26, 9, 10, 9, 10, 9], sep=" ", rule="full")
    lines = [title, table] if title else [table]
    if info:
        lines.append("  " + ", ".join(f"{k}={v}" for k, v in info.items()))
    return "\n".join(lines)


def plot_results(experiments: Sequence[Experiment], path: str) -> str:
    """A grouped bar chart per experiment (rankers x the four metrics), written as PNG."""
    from scholargraph.ranking.plots import grouped_bars

    return grouped_bars([(exp.title, exp.results) for exp in experiments], METRICS,
                        ["Soft P@5", "Soft P@10", "Hard P@5", "Hard P@10"], path)
