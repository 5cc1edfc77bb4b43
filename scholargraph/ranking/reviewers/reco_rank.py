"""RECO-Rank: compensatory multi-evidence reviewer ranking (calibrated evidence, semantic anchor, gated bridge)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace

import numpy as np
import torch
from torch import nn

from scholargraph.errors import NotFitted, UsageError
from scholargraph.ranking.reviewers.coi import ConflictChecker
from scholargraph.ranking.reviewers.evidence import (
    QUERY_FEATURES,
    Evidence,
    EvidenceIndex,
    Query,
    ReviewerPool,
    reviewer_profiles,
    topic_similarity,
)

MODEL_NAME = "reco-rank"
MODEL_VERSION = 1
NO_HISTORY_SCORE = -1.0  # below any reachable score (scores of reviewers with history are >= 0)
N_GATE_STATS = 10
_SEM, _TOP, _CIT = 0, 1, 2


@dataclass
class RecoRankConfig:
    """Hyperparameters (saved as JSON beside the weights). The four switches are the paper's ablations."""

    k_shortlist: int = 3  # per evidence, a reviewer's top-k papers enter the shortlist S(q, r)
    k_bridge: int = 3  # at most this many bridge papers (compensation gap) per reviewer
    bridge_gap: float = 0.15  # calibrated topic/citation this far above semantic makes a bridge paper
    # Floor of the aggregation temperature. Calibrated values lie in [0, 1], so at 20 the attention over the
    # semantic top-k stays within e^(1/20) (5 %) of uniform: the main path is the mean of the reviewer's k
    # closest papers (beside the null slot). Learnt from author identification the temperature sinks to any
    # lower floor (one near-identical paper gives an author away), and that near-max pooling ranked real
    # expertise judgments worse (docs/reviewers.md).
    tau_min: float = 20.0
    hidden: int = 16
    calibration: bool = True
    compensation: bool = True
    gate_reliability: bool = True
    topk_loss: bool = True
    query_temperature: bool = False  # tau from the query representation (True) or one learnt tau (False)
    semantic_values: bool = True  # the main path values semantics only (see RecoRankNet.value_mix)
    loss_k: int = 5
    loss_temperature: float = 0.1
    loss_all_pairs: float = 0.25  # weight of the all-pairs term added to the top-k loss (0: top-k only)
    steps: int = 300
    batch_size: int = 64  # queries per step (0: all)
    lr: float = 0.03
    weight_decay: float = 1e-4
    seed: int = 0
    # training data
    self_supervised: int = 600  # hidden papers
    reviewer_centric: int = 300  # groups ranking hidden papers for one reviewer (0: off)
    hard_negatives: int = 12
    random_negatives: int = 8
    recent_years: int = 3  # hidden papers come from the snapshot's last years
    min_papers: int = 3  # pool: authors with at least this many papers
    judged_weight: float = 2.0
    cross_weight: float = 2.0  # extra weight of cross-topic / cross-venue hidden papers
    # evidence
    max_papers: int = 16
    per_evidence: int = 4
    threads: int = 1  # torch intra-op threads while training/scoring: the tensors are small, threads only cost

    @classmethod
    def from_dict(cls, d: Mapping) -> RecoRankConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


# --- tensors ------------------------------------------------------------------------------------------


def _row_background(ev: Evidence) -> np.ndarray:
    """[R, 8] the scale evidence is calibrated on: the corpus reference when the evidence has one (the same
    for every submission), else the query's background (one query's, or one per row, see merge_pairs)."""
    scale = ev.reference if ev.reference is not None else ev.background
    return np.broadcast_to(np.asarray(scale, np.float32), (ev.papers.shape[0], 8))


def _cit_features(ev: Evidence) -> np.ndarray:
    bg = _row_background(ev)
    z_vec = (ev.citation_parts[..., 0] - bg[:, 4:5]) / bg[:, 5:6]
    return np.stack([z_vec * ev.mask[..., _CIT], ev.citation_parts[..., 1], ev.citation_parts[..., 2],
                     ev.citation_parts[..., 3]], axis=-1)


def evidence_batch(items: Sequence[Evidence], grades: Sequence[np.ndarray] | None = None,
                   weights: Sequence[float] | None = None) -> dict[str, torch.Tensor]:
    """Pad evidence of several queries to [B, R, P] tensors (grades -1 for padding)."""
    B = len(items)
    R = max(max(len(e.reviewer_ids) for e in items), 1)
    P = max(max(e.papers.shape[1] for e in items), 1)
    out = {
        "sem_x": np.zeros((B, R, P, 4), np.float32), "top_x": np.zeros((B, R, P, 2), np.float32),
        "cit_x": np.zeros((B, R, P, 4), np.float32), "raw": np.zeros((B, R, P, 3), np.float32),
        "mask": np.zeros((B, R, P, 3), bool), "valid": np.zeros((B, R, P), bool),
        "qf": np.zeros((B, R, len(QUERY_FEATURES)), np.float32), "n_papers": np.zeros((B, R), np.float32),
        "no_history": np.ones((B, R), bool), "reviewer": np.zeros((B, R), bool),
        "grades": np.full((B, R), -1.0, np.float32), "weights": np.ones(B, np.float32),
    }
    for b, e in enumerate(items):
        r, p = e.papers.shape
        bg = _row_background(e)
        m = e.mask
        z_sem = (e.semantic - bg[:, 0:1]) / bg[:, 1:2] * m[..., _SEM]
        z_top = (e.topic - bg[:, 2:3]) / bg[:, 3:4] * m[..., _TOP]
        lex = e.lexical if e.lexical is not None else np.zeros_like(e.semantic)
        z_lex = (lex - bg[:, 6:7]) / bg[:, 7:8] * m[..., _SEM] * (e.lexical is not None)
        out["sem_x"][b, :r, :p] = np.stack([z_sem, e.semantic, z_lex, lex], axis=-1)
        out["top_x"][b, :r, :p] = np.stack([z_top, e.topic], axis=-1)
        out["cit_x"][b, :r, :p] = _cit_features(e)
        out["raw"][b, :r, :p] = np.stack([np.clip(e.semantic, 0, 1), e.topic, e.citation], axis=-1) * m
        out["mask"][b, :r, :p] = m & e.valid[..., None]
        out["valid"][b, :r, :p] = e.valid
        out["qf"][b, :r] = e.query_features  # one row per query, or one per pair (merge_pairs)
        out["n_papers"][b, :r] = e.n_papers
        out["no_history"][b, :r] = e.no_history | ~e.valid.any(axis=1)
        out["reviewer"][b, :r] = True
        if grades is not None:
            out["grades"][b, :r] = grades[b]
        if weights is not None:
            out["weights"][b] = weights[b]
    return {k: torch.from_numpy(v) for k, v in out.items()}


@contextlib.contextmanager
def _threads(n: int):
    """torch's intra-op threads set to n for the block (a process-wide setting, restored afterwards)."""
    before = torch.get_num_threads()
    if n and n != before:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if n and n != before:
            torch.set_num_threads(before)


def _inv_softplus(x: torch.Tensor) -> torch.Tensor:
    return torch.log(torch.expm1(x))


def _masked_softmax(logits: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    logits = logits.masked_fill(~mask, -1e9)
    w = torch.softmax(logits, dim=dim) * mask
    return w / w.sum(dim=dim, keepdim=True).clamp_min(1e-12)


def _topk_mask(score: torch.Tensor, allowed: torch.Tensor, k: int) -> torch.Tensor:
    """Within the last dim, the k best allowed entries."""
    k = min(k, score.shape[-1])
    s = score.masked_fill(~allowed, -1e9)
    # A stable sort breaks ties by position (torch.topk's choice among equal scores depends on the tensor's
    # shape, so a reviewer's shortlist, and score, would depend on who else is scored in the batch).
    idx = torch.sort(s, dim=-1, descending=True, stable=True).indices[..., :k]
    out = torch.zeros_like(allowed)
    out.scatter_(-1, idx, True)
    return out & allowed


class RecoRankNet(nn.Module):
    """The scoring network. forward(batch) returns F [B, R] and everything the explanations need."""

    def __init__(self, cfg: RecoRankConfig):
        super().__init__()
        self.cfg = cfg
        nq = len(QUERY_FEATURES)
        # Per-evidence projections W_m over that evidence's components (z-score vs background, raw, links),
        # kept non-negative (softplus) so that a calibrated score never falls as its evidence grows: an
        # explanation's "topic 0.9" must mean more topical overlap than "topic 0.5".
        # Semantic components: dense z-score and cosine, then lexical (TF-IDF) z-score and cosine.
        self.w_sem = nn.Parameter(_inv_softplus(torch.tensor([1.0, 0.05, 0.05, 0.05])))
        self.w_top = nn.Parameter(_inv_softplus(torch.tensor([1.0, 0.05])))
        self.w_cit = nn.Parameter(_inv_softplus(torch.tensor([1.0, 6.0, 4.0, 4.0])))
        # Global affine correction a_m * s + b_m, plus a query-conditioned shift of b_m.
        self.a_raw = nn.Parameter(torch.full((3,), math.log(math.expm1(0.5))))
        self.b = nn.Parameter(torch.full((3,), -2.0))
        self.q_shift = nn.Linear(nq, 3)
        self.register_buffer("shift_mask", torch.tensor([0.0, 1.0, 1.0]), persistent=False)
        nn.init.zeros_(self.q_shift.weight)
        nn.init.zeros_(self.q_shift.bias)
        # Aggregation temperature tau_q from the query representation.
        self.q_temp = nn.Linear(nq, 1)
        nn.init.zeros_(self.q_temp.weight)
        nn.init.constant_(self.q_temp.bias, math.log(math.expm1(max(0.1, cfg.tau_min) - cfg.tau_min + 0.05)))
        # Main path: value mix over evidences, and a null slot (value 0) that thin histories cannot outweigh.
        self.beta = nn.Parameter(torch.tensor([1.0, 0.0, 0.0]))
        self.null_anchor = nn.Parameter(torch.tensor(0.3))
        # Compensation branch: value mix of topic and citation on bridge papers.
        self.gamma = nn.Parameter(torch.zeros(2))
        self.alpha_raw = nn.Parameter(torch.tensor(math.log(math.expm1(1.0))))
        # Gate from shortlist statistics.
        self.gate = nn.Sequential(nn.Linear(N_GATE_STATS, cfg.hidden), nn.Tanh(), nn.Linear(cfg.hidden, 1))
        nn.init.constant_(self.gate[2].bias, 1.0)
        # Reliability: topic-citation consistency sharpness, the prior when one of them is missing, and the
        # floor kept by a compensation set that does not survive removing its best paper.
        self.consistency_sharpness = nn.Parameter(torch.tensor(2.0))
        self.missing_consistency = nn.Parameter(torch.tensor(0.0))
        self.stability_floor = nn.Parameter(torch.tensor(-2.0))

    # --- pieces -------------------------------------------------------------------------------------

    def calibrate(self, batch: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """Calibrated evidence c [B, R, P, 3] in [0, 1] (0 where missing) and tau_q [B, R]. Query features
        come per pair ([B, R, nq]; [B, nq] is broadcast), so that a pair's score never depends on which other
        pairs share its batch."""
        mask = batch["mask"]
        B, R = mask.shape[:2]
        qf = batch["qf"]
        if qf.dim() == 2:
            qf = qf[:, None, :].expand(B, R, qf.shape[-1])
        if not self.cfg.calibration:
            return batch["raw"] * mask, torch.full((B, R), 0.1)
        sp = nn.functional.softplus
        z = torch.stack([batch["sem_x"] @ sp(self.w_sem), batch["top_x"] @ sp(self.w_top),
                         batch["cit_x"] @ sp(self.w_cit)], dim=-1)
        a = nn.functional.softplus(self.a_raw)
        # The query shifts topic and citation only: the semantic anchor stays on one scale for every
        # submission (a shift by the query's background similarity made a reviewer's scores of different
        # submissions incomparable: expertise loss 0.227 against 0.190 without it on the gold standard).
        b = self.b + self.q_shift(qf) * self.shift_mask  # [B, R, 3]
        c = torch.sigmoid(a * z + b[:, :, None, :]) * mask
        if not self.cfg.query_temperature:
            qf = torch.zeros_like(qf)  # one learnt temperature for every submission keeps scores comparable
        tau = self.cfg.tau_min + nn.functional.softplus(self.q_temp(qf)).squeeze(-1)
        return c, tau

    def value_mix(self) -> torch.Tensor:
        """Weights of semantic, topic and citation in a main-path paper's value. With `semantic_values` the
        main path values semantics alone (topic and citation count through the gated compensation branch;
        they stand in only for a paper without text): learnt from author identification, a topic share in
        the value ranked a reviewer's submissions worse on real expertise judgments."""
        if self.cfg.semantic_values:
            return torch.tensor([1.0, 1e-3, 1e-3])
        return torch.softmax(self.beta, dim=0)

    def forward(self, batch: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        cfg = self.cfg
        mask, valid = batch["mask"], batch["valid"]
        c, tau = self.calibrate(batch)
        t = tau[..., None]
        m_sem, m_top, m_cit = mask[..., _SEM], mask[..., _TOP], mask[..., _CIT]
        c_sem, c_top, c_cit = c[..., _SEM], c[..., _TOP], c[..., _CIT]

        # Dynamic shortlist S(q, r): high on any evidence, or well above semantic on topic/citation.
        with torch.no_grad():
            short = torch.zeros_like(valid)
            for m in range(3):
                short |= _topk_mask(c[..., m].detach(), mask[..., m], cfg.k_shortlist)
            side = torch.maximum(torch.where(m_top, c_top, -1.0), torch.where(m_cit, c_cit, -1.0))
            gap = side - torch.where(m_sem, c_sem, 0.0)
            bridge = _topk_mask(gap, valid & (m_top | m_cit) & (gap >= cfg.bridge_gap), cfg.k_bridge)
            short |= bridge
            short &= valid

        # Main path: attention from the semantic anchor over the shortlist, plus a null slot.
        beta = self.value_mix()
        wsum = (beta * mask).sum(-1)
        v = (beta * c).sum(-1) / wsum.clamp_min(1e-9)
        avail = mask.sum(-1).clamp_min(1)
        anchor = torch.where(m_sem, c_sem, 0.5 * c.sum(-1) / avail)
        logits = torch.cat([anchor / t, (self.null_anchor / t).expand(*anchor.shape[:2], 1)], dim=-1)
        on_main = short
        if cfg.semantic_values:
            # The main path attends over the reviewer's semantic shortlist (papers without text stand in
            # through their other evidence); topical or cited-only papers are the compensation branch's.
            with torch.no_grad():
                sem_top = _topk_mask(c_sem.detach(), m_sem & valid, cfg.k_shortlist)
                on_main = short & (sem_top | ~m_sem)
        att_mask = torch.cat([on_main, torch.ones_like(short[..., :1])], dim=-1)
        att = _masked_softmax(logits, att_mask)
        att_p = att[..., :-1]
        main_p = att_p * v
        s_main = main_p.sum(-1)

        # Compensation branch over bridge papers.
        gamma = torch.softmax(self.gamma, dim=0)
        gw = gamma[0] * m_top + gamma[1] * m_cit
        u = (gamma[0] * c_top * m_top + gamma[1] * c_cit * m_cit) / gw.clamp_min(1e-9)
        has_bridge = bridge.any(-1)
        w = _masked_softmax(u / t, bridge) * has_bridge[..., None]
        s_comp = (w * u).sum(-1)

        # Reliability: topic-citation consistency over the bridge papers x stability of the compensation set.
        both = m_top & m_cit
        cons_p = torch.where(both, torch.exp(-nn.functional.softplus(self.consistency_sharpness)
                                             * (c_top - c_cit).abs()), torch.sigmoid(self.missing_consistency))
        consistency = (w * cons_p).sum(-1)
        top_idx = w.argmax(-1, keepdim=True)
        loo_mask = bridge.clone()
        loo_mask.scatter_(-1, top_idx, False)
        has_loo = loo_mask.any(-1)
        w_loo = _masked_softmax(u / t, loo_mask) * has_loo[..., None]
        s_loo = (w_loo * u).sum(-1)
        stability = (s_loo / s_comp.clamp_min(1e-9)).clamp(0, 1) * has_loo
        floor = torch.sigmoid(self.stability_floor)
        rho = consistency * (floor + (1 - floor) * stability) * has_bridge

        # Gate from shortlist statistics.
        n_short = short.sum(-1).float()
        n_bridge = bridge.sum(-1).float()
        ent = -(att_p.clamp_min(1e-12).log() * att_p).sum(-1) / torch.log(n_short + 1.0).clamp_min(1e-6)

        def smax(x, m):
            return torch.where(m & short, x, torch.zeros_like(x)).amax(-1)

        stats = torch.stack([
            n_short / (3 * cfg.k_shortlist + cfg.k_bridge), n_bridge / cfg.k_bridge,
            smax(c_sem, m_sem), smax(c_top, m_top), smax(c_cit, m_cit),
            (u * bridge).sum(-1) / n_bridge.clamp_min(1), ent, torch.log1p(batch["n_papers"]) / 4.0, s_comp,
            (short & m_cit).sum(-1) / n_short.clamp_min(1)], dim=-1)
        g = torch.sigmoid(self.gate(stats)).squeeze(-1)
        alpha = nn.functional.softplus(self.alpha_raw)
        if not cfg.compensation:
            g_eff = torch.zeros_like(g)
        elif not cfg.gate_reliability:
            g_eff = has_bridge.float()
            g = torch.ones_like(g)
            rho = torch.ones_like(rho)
        else:
            g_eff = g * rho
        comp_scale = alpha * g_eff
        comp_p = comp_scale[..., None] * w * u
        s_comp_term = comp_p.sum(-1)
        dead = batch["no_history"] | ~batch["reviewer"]
        score = torch.where(dead, torch.full_like(s_main, NO_HISTORY_SCORE), s_main + s_comp_term)
        return {"score": score, "main": torch.where(dead, torch.full_like(s_main, NO_HISTORY_SCORE), s_main),
                "compensation": torch.where(dead, torch.zeros_like(s_main), s_comp_term),
                "gate": g, "reliability": rho, "s_comp": s_comp, "calibrated": c, "shortlist": short,
                "bridge": bridge, "main_p": main_p, "comp_p": comp_p, "tau": tau}


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


# --- explanations ---------------------------------------------------------------------------------------


@dataclass
class EvidencePaper:
    """One of a reviewer's papers behind a suggestion. Calibrated scores in [0, 1], None where missing."""

    paper_id: str
    title: str | None
    year: int | None
    semantic: float | None
    topic: float | None
    citation: float | None
    direct_link: bool
    bridge: bool
    main: float
    compensation: float


@dataclass
class Suggestion:
    """A suggested reviewer: score = main + compensation; main = sum of papers' main + other_main, and the
    same for compensation = alpha * gate * reliability * S_comp."""

    reviewer_id: str
    name: str | None
    rank: int
    score: float
    main: float
    compensation: float
    gate: float
    reliability: float
    no_history: bool
    papers: list[EvidencePaper] = field(default_factory=list)
    other_main: float = 0.0
    other_compensation: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


# --- training data -------------------------------------------------------------------------------------


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


# --- the model ---------------------------------------------------------------------------------------


class RecoRank:
    """fit / score / recommend / save / load. Hyperparameters are RecoRankConfig fields."""

    def __init__(self, **params):
        self.config = RecoRankConfig(**params)
        self.net_: RecoRankNet | None = None
        self.history_: list[float] = []
        self.fit_info_: dict = {}

    # --- training ------------------------------------------------------------------------------------

    def _check(self) -> RecoRankNet:
        if self.net_ is None:
            raise NotFitted("RECO-Rank is not fitted: call fit() or load() first")
        return self.net_

    def fit(self, index: EvidenceIndex, pool: ReviewerPool | None = None, *,
            judged: Sequence[tuple[Query, Mapping[str, int]]] = (), judged_pool: ReviewerPool | None = None,
            training: Sequence[TrainingQuery] | None = None, until_year: int | None = None,
            progress=None) -> RecoRank:
        """Train on self-supervised held-out papers of the index's snapshot (the pool defaults to authors with
        at least `min_papers` papers), hidden from the `recent_years` up to `until_year` (default: the last
        year), plus graded judgments `(query, {author id: grade})` when given. `training` replaces the
        generated queries (tests, reuse across ablations). `progress(step, loss)` is called every step."""
        cfg = self.config
        torch.manual_seed(cfg.seed)
        t0 = time.perf_counter()
        if training is None:
            if pool is None:
                pool = ReviewerPool.from_snapshot(index.snapshot, min_papers=cfg.min_papers)
            training = list(self_supervised_queries(
                index, pool, cfg.self_supervised, hard=cfg.hard_negatives, random=cfg.random_negatives,
                recent_years=cfg.recent_years, cross_weight=cfg.cross_weight, seed=cfg.seed,
                max_papers=cfg.max_papers, per_evidence=cfg.per_evidence, until_year=until_year))
            training += reviewer_centric_queries(
                index, pool, cfg.reviewer_centric, recent_years=cfg.recent_years, seed=cfg.seed,
                max_papers=cfg.max_papers, per_evidence=cfg.per_evidence, until_year=until_year)
            if judged:
                jp = judged_pool or ReviewerPool.from_snapshot(
                    index.snapshot, author_ids=sorted({a for _, j in judged for a in j}))
                training += judged_queries(index, [q for q, _ in judged], {q.id: j for q, j in judged}, jp,
                                           cfg.judged_weight, cfg.max_papers, cfg.per_evidence)
        if not training:
            raise UsageError("nothing to train on: the snapshot has no recent paper with an author in the pool, "
                             "and no judgments were given")
        self.train_on(training, progress=progress)
        self.fit_info_ = {"queries": len(training), "self_supervised": sum(t.kind == "self" for t in training),
                          "reviewer_centric": sum(t.kind == "reviewer" for t in training),
                          "judged": sum(t.kind == "judged" for t in training),
                          "seconds": round(time.perf_counter() - t0, 2)}
        return self

    def train_on(self, training: Sequence[TrainingQuery], progress=None) -> RecoRank:
        with _threads(self.config.threads):
            return self._train_on(training, progress)

    def _train_on(self, training: Sequence[TrainingQuery], progress=None) -> RecoRank:
        cfg = self.config
        torch.manual_seed(cfg.seed)
        net = RecoRankNet(cfg)
        batch = evidence_batch([t.evidence for t in training], [t.grades for t in training],
                               [t.weight for t in training])
        opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        k = cfg.loss_k if cfg.topk_loss else None
        self.history_ = []
        gen = torch.Generator().manual_seed(cfg.seed)
        n = len(training)
        for step in range(cfg.steps):
            opt.zero_grad()
            if cfg.batch_size and n > cfg.batch_size:
                pick = torch.randperm(n, generator=gen)[: cfg.batch_size]
                mb = {key: val[pick] for key, val in batch.items()}
            else:
                mb = batch
            out = net(mb)
            judged = mb["reviewer"] & ~mb["no_history"]
            loss = pairwise_loss(out["score"], mb["grades"], judged, mb["weights"], k, cfg.loss_temperature)
            if k is not None and cfg.loss_all_pairs > 0:
                loss = loss + cfg.loss_all_pairs * pairwise_loss(out["score"], mb["grades"], judged, mb["weights"],
                                                                 None, cfg.loss_temperature)
            loss.backward()
            opt.step()
            self.history_.append(float(loss.detach()))
            if progress is not None:
                progress(step, float(loss))
        net.eval()
        self.net_ = net
        return self

    # --- scoring -------------------------------------------------------------------------------------

    def forward_evidence(self, evidence: Evidence) -> dict[str, np.ndarray]:
        """Network outputs for one query's evidence, as numpy arrays (R first)."""
        net = self._check()
        with torch.no_grad(), _threads(self.config.threads):
            out = net(evidence_batch([evidence]))
        r, p = evidence.papers.shape
        res = {}
        for key, val in out.items():
            arr = val[0].numpy()
            if arr.ndim >= 1 and arr.shape[0] >= r:
                arr = arr[:r]
            if arr.ndim >= 2:
                arr = arr[:, :p]
            res[key] = arr
        return res

    def score_evidence(self, evidence: Evidence) -> np.ndarray:
        return self.forward_evidence(evidence)["score"]

    def score(self, index: EvidenceIndex, query: Query, pool: ReviewerPool,
              rows: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """Scores of pool reviewers `rows` (default all) for the query, in that order."""
        cfg = self.config
        ev = index.evidence(query, pool, rows, max_papers=cfg.max_papers, per_evidence=cfg.per_evidence)
        return self.score_evidence(ev)

    def recommend(self, index: EvidenceIndex, query: Query, pool: ReviewerPool, k: int = 10, *,
                  rows: Sequence[int] | np.ndarray | None = None, exclude: Sequence[int] | np.ndarray = (),
                  coi: ConflictChecker | bool = True, shortlist: int | None = 500,
                  papers_per_reviewer: int = 3) -> list[Suggestion]:
        """The top-k reviewers with explanations. Conflicts of interest are ruled out by default (`coi=True`:
        the submission's authors and their co-authors of the last 5 years, see coi.py; pass a
        ConflictChecker for other rules, False for none); `exclude` adds pool rows to rule out. With
        `shortlist`, a cheap first stage keeps that many reviewers (and any reviewer whose paper the
        submission cites) before the full model runs; None scores every reviewer."""
        cfg = self.config
        rows = np.arange(len(pool)) if rows is None else np.asarray(rows, dtype=np.int64)
        if coi is True:
            coi = index.conflict_checker()
        if coi:
            exclude = np.r_[np.asarray(exclude, dtype=np.int64), coi.pool_rows(pool, query)]
        if len(exclude):
            rows = rows[~np.isin(rows, np.asarray(exclude, dtype=np.int64))]
        if shortlist is not None and len(rows) > shortlist:
            rows = candidate_stage(index, query, pool, rows, shortlist, self.net_)
        ev = index.evidence(query, pool, rows, max_papers=cfg.max_papers, per_evidence=cfg.per_evidence)
        out = self.forward_evidence(ev)
        return explain(ev, out, index, pool, k, papers_per_reviewer)

    # --- persistence ---------------------------------------------------------------------------------

    def save(self, directory: str | os.PathLike) -> None:
        net = self._check()
        os.makedirs(directory, exist_ok=True)
        meta = {"model": MODEL_NAME, "version": MODEL_VERSION, "config": asdict(self.config),
                "query_features": list(QUERY_FEATURES), "fit_info": self.fit_info_}
        with open(os.path.join(directory, "config.json"), "w", encoding="utf-8") as fh:
            json.dump(meta, fh, indent=2)
        torch.save(net.state_dict(), os.path.join(directory, "state.pt"))

    @classmethod
    def load(cls, directory: str | os.PathLike) -> RecoRank:
        path = os.path.join(directory, "config.json")
        if not os.path.exists(path) or not os.path.exists(os.path.join(directory, "state.pt")):
            raise NotFitted(f"no RECO-Rank model in {directory}")
        with open(path, encoding="utf-8") as fh:
            meta = json.load(fh)
        if meta.get("model") != MODEL_NAME or meta.get("version") != MODEL_VERSION:
            raise NotFitted(f"{directory} holds {meta.get('model')} version {meta.get('version')}, "
                            f"this code reads {MODEL_NAME} version {MODEL_VERSION}")
        if meta.get("query_features") != list(QUERY_FEATURES):
            raise NotFitted(f"{directory} was trained on other query features")
        model = cls(**RecoRankConfig.from_dict(meta["config"]).__dict__)
        net = RecoRankNet(model.config)
        state = torch.load(os.path.join(directory, "state.pt"), map_location="cpu", weights_only=True)
        try:
            net.load_state_dict(state)
        except RuntimeError as exc:
            raise NotFitted(f"{directory}: incompatible weights ({exc})") from exc
        net.eval()
        model.net_ = net
        model.fit_info_ = meta.get("fit_info", {})
        return model


def candidate_stage(index: EvidenceIndex, query: Query, pool: ReviewerPool, rows: np.ndarray, keep: int,
                    net: RecoRankNet | None = None) -> np.ndarray:
    """Cheap first stage for large pools. Every pool paper gets the evidence that needs no graph walk
    (semantic, lexical, topic, citation-vector cosine, direct link; no coupling or co-citation) as dense or
    sparse products over the pool's papers (gathered once per pool, EvidenceIndex.pool_features). With the
    model's `net`, those go through its own calibration and value mix and a reviewer scores the mean of
    their best three papers (thin histories count zeros, as the null slot does); without it, their best
    z-score. The best `keep` reviewers are kept, and every reviewer whose paper the submission cites."""
    owner, paper = index.eligible_pairs(query, pool, rows)
    if len(paper) == 0:
        return rows[:keep]
    feats = index.pool_features(pool)
    pos = feats.position[paper]
    bg = index.background_stats(query)
    n = len(feats.papers)
    sem = np.zeros(n, np.float32)
    lex = np.zeros(n, np.float32)
    top = np.zeros(n, np.float32)
    vec = np.zeros(n, np.float32)
    m_sem = feats.has_text & query.has_text
    m_top = feats.has_topic & query.has_topic
    if query.has_text:
        sem = feats.text @ query.text_vector.astype(np.float32)
        if feats.lexical is not None and query.lexical_vector is not None:
            lex = feats.lexical @ index.dense_lexical(query)
    if query.has_topic:
        top = topic_similarity(query.topic_vector, feats.topics)
    m_vec = np.zeros(n, dtype=bool)
    if query.citation_vector is not None:
        vec = feats.cvec @ query.citation_vector
        m_vec = feats.has_cvec
    sem, lex, top, vec = sem[pos], lex[pos], top[pos], vec[pos]
    m_sem, m_top, m_vec = m_sem[pos], m_top[pos], m_vec[pos]
    direct = np.isin(paper, query.references).astype(np.float32) if len(query.references) else np.zeros(len(pos),
                                                                                                          np.float32)
    ref = index.reference_stats()  # the model's calibration scale (see Evidence.reference)
    z_sem = np.where(m_sem, (sem - ref[0]) / ref[1], 0.0)
    z_lex = np.where(m_sem, (lex - ref[6]) / ref[7], 0.0) if query.lexical_vector is not None else np.zeros_like(sem)
    z_top = np.where(m_top, (top - ref[2]) / ref[3], 0.0)
    z_vec = np.where(m_vec, (vec - ref[4]) / ref[5], 0.0)
    if net is not None and net.cfg.calibration:
        m_cit = m_vec | (direct > 0)
        zero = np.zeros_like(sem)
        batch = {"sem_x": np.stack([z_sem, sem, z_lex, lex], -1), "top_x": np.stack([z_top, top], -1),
                 "cit_x": np.stack([z_vec, direct, zero, zero], -1), "mask": np.stack([m_sem, m_top, m_cit], -1),
                 "qf": index.query_features(query, bg)[None, :]}
        batch = {k: torch.from_numpy(np.ascontiguousarray(v))[None, :, None] if k != "qf" else torch.from_numpy(v)
                 for k, v in batch.items()}
        with torch.no_grad():
            c, _ = net.calibrate(batch)
            beta = net.value_mix()
            mask = batch["mask"]
            v = ((beta * c).sum(-1) / (beta * mask).sum(-1).clamp_min(1e-9))[0, :, 0].numpy()
        paper_score = v.astype(np.float64)
        per_reviewer = _top_mean_zero_padded(owner, paper_score, len(rows), 3)
    else:
        paper_score = np.maximum.reduce([np.where(m_sem, np.maximum(z_sem, z_lex), -10.0),
                                         np.where(m_top, z_top, -10.0), np.where(m_vec, z_vec, -10.0)])
        per_reviewer = np.full(len(rows), -1e9)
        np.maximum.at(per_reviewer, owner, paper_score)
    order = np.argsort(-per_reviewer, kind="stable")
    cited = np.unique(owner[direct > 0])
    chosen = np.unique(np.r_[order[:keep], cited])
    return rows[chosen]


def _top_mean_zero_padded(owner: np.ndarray, scores: np.ndarray, n_rows: int, top: int) -> np.ndarray:
    """Per owner, the sum of its best `top` scores (all in [0, 1]) divided by `top` (missing papers count 0)."""
    order = np.argsort(owner * 4.0 - np.clip(scores, 0.0, 1.0), kind="stable")  # one key: owner, then best first
    o, s_ = owner[order], scores[order]
    starts = np.r_[0, np.flatnonzero(np.diff(o)) + 1]
    rank = np.arange(len(o)) - np.repeat(starts, np.diff(np.r_[starts, len(o)]))
    keep = rank < top
    return np.bincount(o[keep], weights=s_[keep], minlength=n_rows) / top


def explain(ev: Evidence, out: Mapping[str, np.ndarray], index: EvidenceIndex, pool: ReviewerPool, k: int,
            papers_per_reviewer: int = 3) -> list[Suggestion]:
    """Suggestions for the top k of one query, each with its additive explanation."""
    snap = index.snapshot
    score = out["score"]
    order = np.argsort(-score, kind="stable")[:k]
    suggestions = []
    for rank, r in enumerate(order, start=1):
        row = int(ev.reviewer_rows[r])
        papers = []
        main_p, comp_p = out["main_p"][r], out["comp_p"][r]
        contrib = main_p + comp_p
        listed = [j for j in np.argsort(-contrib, kind="stable") if ev.valid[r, j] and contrib[j] > 0]
        listed = listed[:papers_per_reviewer]
        c = out["calibrated"][r]
        for j in listed:
            pid = int(ev.papers[r, j])
            year = int(snap.paper_year[pid])
            papers.append(EvidencePaper(
                paper_id=snap.paper_ids[pid], title=snap.titles[pid] if snap.titles is not None else None,
                year=year if year >= 0 else None,
                semantic=float(c[j, _SEM]) if ev.mask[r, j, _SEM] else None,
                topic=float(c[j, _TOP]) if ev.mask[r, j, _TOP] else None,
                citation=float(c[j, _CIT]) if ev.mask[r, j, _CIT] else None,
                direct_link=bool(ev.citation_parts[r, j, 1] > 0), bridge=bool(out["bridge"][r, j]),
                main=float(main_p[j]), compensation=float(comp_p[j])))
        main, comp = float(out["main"][r]), float(out["compensation"][r])
        no_hist = bool(ev.no_history[r] or not ev.valid[r].any())
        suggestions.append(Suggestion(
            reviewer_id=pool.author_ids[row], name=pool.names[row], rank=rank, score=float(score[r]), main=main,
            compensation=comp, gate=float(out["gate"][r]), reliability=float(out["reliability"][r]),
            no_history=no_hist, papers=papers,
            other_main=main - sum(p.main for p in papers),
            other_compensation=comp - sum(p.compensation for p in papers)))
    return suggestions
