"""RECO-Rank's training data and loss: self-supervised hidden papers, reviewer-centric groups, graded
judgments, and the (top-k) pairwise logistic loss."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import nn

from scholargraph.conference.submissions import Query, ReviewerPool
from scholargraph.ranking.reviewers.evidence import (
    Evidence,
    EvidenceIndex,
    reviewer_profiles,
)


def pairwise_loss(score: torch.Tensor, grades: torch.Tensor, reviewer: torch.Tensor, weights: torch.Tensor,
                  k: int | None, temperature: float) -> torch.Tensor:
    """Pairwise logistic loss over pairs with different grades; with k, only pairs with a member in the
    current top k (the top-k-oriented loss). Pairs weigh 2^g_i - 2^g_j times the query weight."""
    labelled = reviewer & (grades >= 0)
    gi, gj = grades[:, :, None], grades[:, None, :]
    pair = (gi > gj) & labelled[:, :, None] & labelled[:, None, :]
    if k is not None:
        s = score.detach().masked_fill(~labelled, -1e9)
        rank = torch.argsort(torch.argsort(s, dim=1, descending=True), dim=1)
        top = (rank < k) & labelled
        pair &= top[:, :, None] | top[:, None, :]
    w = (torch.pow(2.0, gi) - torch.pow(2.0, gj)) * pair * weights[:, None, None]
    diff = (score[:, :, None] - score[:, None, :]) / temperature
    total = w.sum()
    if total <= 0:
        return score.sum() * 0.0
    return (w * nn.functional.softplus(-diff)).sum() / total



@dataclass
class TrainingQuery:
    evidence: Evidence
    grades: np.ndarray
    weight: float = 1.0
    kind: str = "self"


def _hidden_papers(index: EvidenceIndex, pool: ReviewerPool, recent_years: int,
                   until_year: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The papers training hides (with text, of the `recent_years` up to `until_year`, default the snapshot's
    last year), and each snapshot author's pool row (-1 outside the pool)."""
    snap = index.snapshot
    last = snap.max_year if until_year is None else until_year
    pool_of_author = np.full(snap.n_authors, -1, dtype=np.int64)
    known = pool.author_rows >= 0
    pool_of_author[pool.author_rows[known]] = np.flatnonzero(known)
    if last < 0 or len(pool) == 0:
        return np.zeros(0, dtype=np.int64), pool_of_author
    years = index.year
    hidden = np.flatnonzero((years > last - recent_years) & (years <= last) & index.has_text
                            & ~np.asarray(snap.paper_stub))
    return hidden, pool_of_author


def self_supervised_queries(index: EvidenceIndex, pool: ReviewerPool, n: int, *, hard: int = 12, random: int = 8,
                            recent_years: int = 3, cross_weight: float = 2.0, seed: int = 0, max_papers: int = 16,
                            per_evidence: int = 4, until_year: int | None = None) -> list[TrainingQuery]:
    """Hide papers of the `recent_years` years up to `until_year` (default: the snapshot's last year) and rank
    candidate authors for each, on the evidence of the years before the hidden paper. Its authors are the
    positives (grade 3 with at least 3 earlier papers, else 2); hard negatives work on the same topics
    (closest topic profiles; grade 1: plausible but not the authors) and random negatives are grade 0, so
    that topical closeness is learnt as relevant, below authorship. Cross-topic papers (far from their
    authors' topic profile) and cross-venue papers (in a venue none of its authors used before) weigh more."""
    snap = index.snapshot
    rng = np.random.default_rng(seed)
    years = index.year
    if n <= 0:
        return []
    cand, pool_of_author = _hidden_papers(index, pool, recent_years, until_year)
    auth_csc = snap.authorship.tocsc()
    profiles = reviewer_profiles(index, pool)
    venue = np.asarray(snap.paper_venue)
    rng.shuffle(cand)
    out: list[TrainingQuery] = []
    for p in cand:
        if len(out) >= n:
            break
        authors = auth_csc.indices[auth_csc.indptr[p]:auth_csc.indptr[p + 1]]
        prow = pool_of_author[authors]
        prow = prow[prow >= 0]
        if len(prow) == 0:
            continue
        # Judged on the years before it, as a submission is: same-year papers of its authors would give it away.
        q = replace(index.query_for_paper(int(p)), year=int(years[p]) - 1)
        owner, papers = index.eligible_pairs(q, pool, prow)
        counts = np.bincount(owner, minlength=len(prow))
        pos = prow[counts > 0]
        if len(pos) == 0:
            continue
        pos_counts = counts[counts > 0]
        sims = profiles @ index.topics[p]
        sims[pos] = -np.inf
        top = np.argsort(-sims)[: max(200, 4 * hard)]
        top = top[np.isfinite(sims[top])]
        hard_rows = rng.choice(top, size=min(hard, len(top)), replace=False) if len(top) else np.zeros(0, np.int64)
        others = np.setdiff1d(rng.choice(len(pool), size=min(len(pool), 3 * random + len(pos)), replace=False),
                              np.r_[pos, hard_rows])[:random]
        rows = np.r_[pos, hard_rows, others].astype(np.int64)
        grades = np.r_[np.where(pos_counts >= 3, 3.0, 2.0), np.ones(len(hard_rows)),
                       np.zeros(len(others))].astype(np.float32)
        ev = index.evidence(q, pool, rows, max_papers=max_papers, per_evidence=per_evidence)
        keep = ~ev.no_history
        if not keep[: len(pos)].any() or keep[len(pos):].sum() == 0:
            continue
        # Cross-topic: how far the hidden paper lies from its authors' usual topics.
        prof = profiles[pos].mean(axis=0)
        denom = float(np.linalg.norm(prof) * np.linalg.norm(index.topics[p]))
        cross_topic = 1.0 - float(prof @ index.topics[p]) / denom if denom > 0 else 0.0
        cross_venue = 0.0
        if venue[p] >= 0:
            earlier = np.unique(venue[papers[np.isin(owner, np.flatnonzero(counts > 0))]])
            cross_venue = float(venue[p] not in set(earlier.tolist()))
        weight = 1.0 + cross_weight * (0.5 * cross_topic + 0.5 * cross_venue)
        out.append(TrainingQuery(ev, grades, weight, "self"))
    return out


def merge_pairs(items: Sequence[Evidence]) -> Evidence:
    """Single-reviewer evidence of several queries as one Evidence whose rows are (query, reviewer) pairs,
    each row with its own query's background and features: a reviewer-centric training group."""
    P = max(e.papers.shape[1] for e in items)

    def cat(name: str, fill=0.0) -> np.ndarray:
        arrs = []
        for e in items:
            a = getattr(e, name)
            pad = [(0, 0), (0, P - a.shape[1])] + [(0, 0)] * (a.ndim - 2)
            arrs.append(np.pad(a, pad, constant_values=fill))
        return np.concatenate(arrs)

    lexical = cat("lexical") if all(e.lexical is not None for e in items) else None
    return Evidence(
        query_id="|".join(e.query_id for e in items), reviewer_rows=np.concatenate([e.reviewer_rows for e in items]),
        reviewer_ids=[i for e in items for i in e.reviewer_ids], papers=cat("papers", -1), valid=cat("valid", False),
        semantic=cat("semantic"), topic=cat("topic"), citation_parts=cat("citation_parts"), citation=cat("citation"),
        mask=cat("mask", False), background=np.stack([e.background for e in items for _ in e.reviewer_ids]),
        query_features=np.stack([e.query_features for e in items for _ in e.reviewer_ids]),
        n_papers=np.concatenate([e.n_papers for e in items]), no_history=np.concatenate([e.no_history for e in items]),
        lexical=lexical, reference=items[0].reference)


def reviewer_centric_queries(index: EvidenceIndex, pool: ReviewerPool, n: int, *, hard: int = 6, random: int = 6,
                             recent_years: int = 3, seed: int = 0, max_papers: int = 16, per_evidence: int = 4,
                             until_year: int | None = None) -> list[TrainingQuery]:
    """Training groups that rank submissions for one reviewer, as an assignment (and the expertise judgments
    of reviewers rating papers) compares them: a hidden paper of the reviewer's (grade 3 with >= 3 earlier
    papers, else 2) against hidden papers of others, the topically closest to the reviewer's profile (grade
    1) and random ones (grade 0). Within-submission training leaves every per-submission shift of the score
    unpunished; these pairs make a score mean the same for every submission."""
    snap = index.snapshot
    rng = np.random.default_rng(seed + 1)
    years = index.year
    hidden, pool_of_author = _hidden_papers(index, pool, recent_years, until_year)
    if n <= 0 or len(hidden) < 3:
        return []
    auth_csc = snap.authorship.tocsc()
    profiles = reviewer_profiles(index, pool)
    hidden_topics = index.topics[hidden]
    queries: dict[int, Query] = {}

    def query(p: int) -> Query:
        if p not in queries:
            queries[p] = replace(index.query_for_paper(int(p)), year=int(years[p]) - 1)
        return queries[p]

    order = rng.permutation(hidden)
    out: list[TrainingQuery] = []
    for p in order:
        if len(out) >= n:
            break
        prow = pool_of_author[auth_csc.indices[auth_csc.indptr[p]:auth_csc.indptr[p + 1]]]
        prow = prow[prow >= 0]
        if len(prow) == 0:
            continue
        r = int(rng.choice(prow))
        own = set(pool.papers[r].indices.tolist())
        others = np.array([h for h in hidden if h not in own and h != p], dtype=np.int64)
        if len(others) < 2:
            continue
        sims = hidden_topics[np.searchsorted(hidden, others)] @ profiles[r]
        close = others[np.argsort(-sims)[: max(4 * hard, 20)]]
        hard_p = rng.choice(close, size=min(hard, len(close)), replace=False)
        rest = np.setdiff1d(others, hard_p)
        rand_p = rng.choice(rest, size=min(random, len(rest)), replace=False) if len(rest) else rest
        items, grades = [], []
        for q_p, grade in [(p, None), *((h, 1.0) for h in hard_p), *((h, 0.0) for h in rand_p)]:
            ev = index.evidence(query(int(q_p)), pool, np.array([r]), max_papers=max_papers,
                                per_evidence=per_evidence)
            if ev.no_history[0]:
                if grade is None:
                    break
                continue
            if grade is None:
                grade = 3.0 if ev.n_papers[0] >= 3 else 2.0
            items.append(ev)
            grades.append(grade)
        if len(items) < 3 or grades[0] < 2:
            continue
        out.append(TrainingQuery(merge_pairs(items), np.asarray(grades, np.float32), 1.0, "reviewer"))
    return out


def judged_queries(index: EvidenceIndex, queries: Sequence[Query], judgments: Mapping[str, Mapping[str, int]],
                   pool: ReviewerPool, weight: float = 2.0, max_papers: int = 16,
                   per_evidence: int = 4) -> list[TrainingQuery]:
    """Graded judgments (qrels 0-3) as training queries over the judged candidates."""
    out = []
    for q in queries:
        judged = judgments.get(q.id) or {}
        if not judged:
            continue
        ids = list(judged)
        rows = pool.rows(ids)
        ok = rows >= 0
        if ok.sum() < 2:
            continue
        ev = index.evidence(q, pool, rows[ok], max_papers=max_papers, per_evidence=per_evidence)
        grades = np.array([judged[a] for a, k in zip(ids, ok) if k], dtype=np.float32)
        out.append(TrainingQuery(ev, grades, weight, "judged"))
    return out
