"""Chain-of-Factors (CoF) baseline: semantic retrieval, citation re-filter, then the sum of the three factors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scholargraph.conference.submissions import Query, ReviewerPool
from scholargraph.ranking.reviewers.aggregate import top_mean
from scholargraph.ranking.reviewers.evidence import Evidence, EvidenceIndex


def _count(n: int | float, total: int) -> int:
    """An int is a count; a float in (0, 1] is a share of `total`."""
    if isinstance(n, float) and 0 < n <= 1:
        return max(1, int(round(n * total)))
    return max(1, int(n))


@dataclass
class CoF:
    """Zhang et al., WWW 2025, as the RECO-Rank paper runs it without the instruction-tuned encoder:

    1. semantic factor: keep the top `n1` of all the candidates' papers by semantic score;
    2. citation factor: among those, keep the top `n2` by citation score;
    3. a kept paper scores semantic + topic + citation (a missing factor adds 0);
    4. a reviewer scores the mean of their best `top` kept papers (fewer if fewer are kept). Reviewers with no
       kept paper rank below all others, ordered by their best semantic score.

    `n1`/`n2` are counts, or shares (floats in (0, 1]) of the candidates' papers / of the n1 kept.
    """

    n1: int | float = 0.3
    n2: int | float = 0.5
    top: int = 3

    def paper_scores(self, ev: Evidence) -> tuple[np.ndarray, np.ndarray]:
        """Per paper [R, P]: the factor sum, and whether the paper survived the chain."""
        raw = ev.raw()
        sem, cit = raw[..., 0], raw[..., 2]
        valid = ev.valid
        flat = np.flatnonzero(valid.ravel())
        kept: np.ndarray = np.zeros(valid.size, dtype=bool)
        if len(flat):
            n1 = min(_count(self.n1, len(flat)), len(flat))
            by_sem = flat[np.argsort(-sem.ravel()[flat], kind="stable")[:n1]]
            n2 = min(_count(self.n2, n1), n1)
            by_cit = by_sem[np.argsort(-cit.ravel()[by_sem], kind="stable")[:n2]]
            kept[by_cit] = True
        kept = kept.reshape(valid.shape)
        return raw.sum(axis=-1), kept

    def score_evidence(self, ev: Evidence) -> np.ndarray:
        total, kept = self.paper_scores(ev)
        owner = np.nonzero(kept)[0]
        mean = top_mean(owner, total[kept], len(kept), self.top)
        n_kept = np.bincount(owner, minlength=len(kept))
        best_sem = np.where(ev.valid & ev.mask[..., 0], ev.semantic, -1.0).max(axis=1, initial=-1.0)
        # Survivors first (factor sums are >= 0 when kept); the rest by their best semantic score, below -2.
        return np.where(n_kept > 0, mean, -3.0 + 0.5 * best_sem)

    def score(self, index: EvidenceIndex, query: Query, pool: ReviewerPool,
              rows: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        ev = index.evidence(query, pool, rows, max_papers=None)
        return self.score_evidence(ev)
