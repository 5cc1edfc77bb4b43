"""RECO-Rank: compensatory multi-evidence reviewer ranking (calibrated evidence, semantic anchor, gated bridge).
The network is reco_rank_net, the training data and loss training, the explanations explain."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from scholargraph.conference.conflicts import ConflictChecker
from scholargraph.conference.submissions import Query, ReviewerPool
from scholargraph.errors import NotFitted, UsageError
from scholargraph.ranking.reviewers.aggregate import top_mean
from scholargraph.ranking.reviewers.evidence import (
    QUERY_FEATURES,
    Evidence,
    EvidenceIndex,
    topic_similarity,
)
from scholargraph.ranking.reviewers.explain import Suggestion, explain
from scholargraph.ranking.reviewers.reco_rank_net import RecoRankConfig, RecoRankNet, evidence_batch
from scholargraph.ranking.reviewers.training import (
    TrainingQuery,
    judged_queries,
    pairwise_loss,
    reviewer_centric_queries,
    self_supervised_queries,
)
from scholargraph.ranking.torch_threads import torch_threads
from scholargraph.registry import load_state, read_config, save_state, write_config

MODEL_NAME = "reco-rank"
MODEL_VERSION = 1


# --- the model ---------------------------------------------------------------------------------------


class RecoRank:
    """fit / score / recommend / save / load (the Ranker contract); `params`, a RecoRankConfig, holds the
    hyperparameters, given as keyword arguments."""

    def __init__(self, **params):
        self.params = RecoRankConfig(**params)
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
        cfg = self.params
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
        with torch_threads(self.params.threads):
            return self._train_on(training, progress)

    def _train_on(self, training: Sequence[TrainingQuery], progress=None) -> RecoRank:
        cfg = self.params
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
        with torch.no_grad(), torch_threads(self.params.threads):
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
        cfg = self.params
        ev = index.evidence(query, pool, rows, max_papers=cfg.max_papers, per_evidence=cfg.per_evidence)
        return self.score_evidence(ev)

    def recommend(self, index: EvidenceIndex, query: Query, pool: ReviewerPool, k: int = 10, *,
                  rows: Sequence[int] | np.ndarray | None = None, exclude: Sequence[int] | np.ndarray = (),
                  coi: ConflictChecker | bool = True, shortlist: int | None = 500,
                  papers_per_reviewer: int = 3) -> list[Suggestion]:
        """The top-k reviewers with explanations. Conflicts of interest are ruled out by default (`coi=True`:
        the submission's authors and their co-authors of the last 5 years, see conference/conflicts.py; pass a
        ConflictChecker for other rules, False for none); `exclude` adds pool rows to rule out. With
        `shortlist`, a cheap first stage keeps that many reviewers (and any reviewer whose paper the
        submission cites) before the full model runs; None scores every reviewer."""
        cfg = self.params
        rows = np.arange(len(pool)) if rows is None else np.asarray(rows, dtype=np.int64)
        checker = index.conflict_checker() if coi is True else coi
        if checker:
            exclude = np.r_[np.asarray(exclude, dtype=np.int64), checker.pool_rows(pool, query)]
        if len(exclude):
            rows = rows[~np.isin(rows, np.asarray(exclude, dtype=np.int64))]
        if shortlist is not None and len(rows) > shortlist:
            rows = candidate_stage(index, query, pool, rows, shortlist, self.net_)
        ev = index.evidence(query, pool, rows, max_papers=cfg.max_papers, per_evidence=cfg.per_evidence)
        out = self.forward_evidence(ev)
        return explain(ev, out, index, pool, k, papers_per_reviewer)

    # --- persistence ---------------------------------------------------------------------------------

    def save(self, directory: str | os.PathLike) -> Path:
        """The config (model, version, params under "config", query features, fit info) and the weights."""
        net = self._check()
        out = write_config(directory, MODEL_NAME, MODEL_VERSION,
                           {"config": asdict(self.params), "query_features": list(QUERY_FEATURES),
                            "fit_info": self.fit_info_})
        save_state(net.state_dict(), out / "state.pt")
        return out

    @classmethod
    def load(cls, directory: str | os.PathLike) -> RecoRank:
        meta = read_config(directory, MODEL_NAME, MODEL_VERSION, label="RECO-Rank", required=("state.pt",))
        if meta.get("query_features") != list(QUERY_FEATURES):
            raise NotFitted(f"{directory} was trained on other query features")
        model = cls(**asdict(RecoRankConfig.from_dict(meta["config"])))
        net = RecoRankNet(model.params)
        state = load_state(Path(directory) / "state.pt", "RECO-Rank")
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
    owner, paper, weight = index.eligible_weighted(query, pool, rows)
    if len(paper) == 0:
        return rows[:keep]
    feats = index.pool_features(pool)
    assert feats.position is not None, "pool_features always sets position"
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
        assert query.text_vector is not None, "has_text means a text vector"
        sem = feats.text @ query.text_vector.astype(np.float32)
        if feats.lexical is not None and query.lexical_vector is not None:
            lex = feats.lexical @ index.dense_lexical(query)
    if query.has_topic:
        assert query.topic_vector is not None, "has_topic means a topic vector"
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
        tensors = {k: torch.from_numpy(np.ascontiguousarray(v))[None, :, None] if k != "qf" else torch.from_numpy(v)
                   for k, v in batch.items()}
        with torch.no_grad():
            c, _ = net.calibrate(tensors)
            beta = net.value_mix()
            mask = tensors["mask"]
            v = ((beta * c).sum(-1) / (beta * mask).sum(-1).clamp_min(1e-9))[0, :, 0].numpy()
        paper_score = v.astype(np.float64) * weight  # the reviewers' own weights, as the network applies them
        per_reviewer = top_mean(owner, paper_score, len(rows), 3, zero_padded=True, empty=0.0)
    else:
        paper_score = np.maximum.reduce([np.where(m_sem, np.maximum(z_sem, z_lex), -10.0),
                                         np.where(m_top, z_top, -10.0), np.where(m_vec, z_vec, -10.0)])
        per_reviewer = np.full(len(rows), -1e9)
        np.maximum.at(per_reviewer, owner, paper_score)
    order = np.argsort(-per_reviewer, kind="stable")
    cited = np.unique(owner[direct > 0])
    chosen = np.unique(np.r_[order[:keep], cited])
    return rows[chosen]
