"""The RECO-Rank network and its hyperparameters: evidence padded to tensors, calibration, the semantic main
path, the gated compensation branch and its reliability."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import cast

import numpy as np
import torch
from torch import nn

from scholargraph.ranking.reviewers.evidence import (
    QUERY_FEATURES,
    Evidence,
)

NO_HISTORY_SCORE = -1.0  # below any reachable score (scores of reviewers with history are >= 0)
N_GATE_STATS = 10
SEM, TOP, CIT = 0, 1, 2  # evidence order in the last axis of the tensors


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
    return np.stack([z_vec * ev.mask[..., CIT], ev.citation_parts[..., 1], ev.citation_parts[..., 2],
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
        "paper_weight": np.ones((B, R, P), np.float32),
    }
    for b, e in enumerate(items):
        r, p = e.papers.shape
        bg = _row_background(e)
        m = e.mask
        z_sem = (e.semantic - bg[:, 0:1]) / bg[:, 1:2] * m[..., SEM]
        z_top = (e.topic - bg[:, 2:3]) / bg[:, 3:4] * m[..., TOP]
        lex = e.lexical if e.lexical is not None else np.zeros_like(e.semantic)
        z_lex = (lex - bg[:, 6:7]) / bg[:, 7:8] * m[..., SEM] * (e.lexical is not None)
        out["sem_x"][b, :r, :p] = np.stack([z_sem, e.semantic, z_lex, lex], axis=-1)
        out["top_x"][b, :r, :p] = np.stack([z_top, e.topic], axis=-1)
        out["cit_x"][b, :r, :p] = _cit_features(e)
        out["raw"][b, :r, :p] = np.stack([np.clip(e.semantic, 0, 1), e.topic, e.citation], axis=-1) * m
        out["mask"][b, :r, :p] = m & e.valid[..., None]
        out["valid"][b, :r, :p] = e.valid
        if e.weight is not None:
            out["paper_weight"][b, :r, :p] = e.weight
        out["qf"][b, :r] = e.query_features  # one row per query, or one per pair (merge_pairs)
        out["n_papers"][b, :r] = e.n_papers
        out["no_history"][b, :r] = e.no_history | ~e.valid.any(axis=1)
        out["reviewer"][b, :r] = True
        if grades is not None:
            out["grades"][b, :r] = grades[b]
        if weights is not None:
            out["weights"][b] = weights[b]
    return {k: torch.from_numpy(v) for k, v in out.items()}


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
        nn.init.constant_(cast(nn.Linear, self.gate[2]).bias, 1.0)
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
        if "paper_weight" in batch:
            # A reviewer's own weight for a paper's source or venue scales its evidence (1: unchanged, exactly).
            c = c * batch["paper_weight"][..., None]
        t = tau[..., None]
        m_sem, m_top, m_cit = mask[..., SEM], mask[..., TOP], mask[..., CIT]
        c_sem, c_top, c_cit = c[..., SEM], c[..., TOP], c[..., CIT]

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
