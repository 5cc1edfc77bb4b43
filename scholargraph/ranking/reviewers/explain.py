"""RECO-Rank's explanations: a suggestion's score split into its evidence papers' main and compensation
parts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from scholargraph.conference.submissions import ReviewerPool
from scholargraph.ranking.reviewers.evidence import (
    Evidence,
    EvidenceIndex,
)
from scholargraph.ranking.reviewers.reco_rank_net import CIT, SEM, TOP


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
    # The reviewer's own expertise settings that shaped the evidence (conference/profiles.py), None without any.
    expertise_settings: dict | None = None

    def to_dict(self) -> dict:
        out = asdict(self)
        if self.expertise_settings is None:
            del out["expertise_settings"]
        return out


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
                semantic=float(c[j, SEM]) if ev.mask[r, j, SEM] else None,
                topic=float(c[j, TOP]) if ev.mask[r, j, TOP] else None,
                citation=float(c[j, CIT]) if ev.mask[r, j, CIT] else None,
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
