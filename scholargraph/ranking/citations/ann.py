"""Nearest-neighbour indexes over L2-normalised paper vectors: exact, and an inverted file (IVF) for large
collections; both filter by allowed papers, year cap and exclusions before the top-k."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from scholargraph.graph.snapshot import NO_YEAR


def normalise_rows(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class ExactIndex:
    """Exact maximum inner product over L2-normalised rows (so cosine): matrix products over blocks of
    queries, with the per-query filters (allowed papers, year cap, exclusions) applied before the top-k."""

    kind = "exact"

    def __init__(self, vectors: np.ndarray, years: np.ndarray | None = None, valid: np.ndarray | None = None,
                 max_block_cells: int = 1 << 24):
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        n = len(self.vectors)
        self.years = np.full(n, NO_YEAR, dtype=np.int32) if years is None else np.asarray(years)
        self.valid = np.ones(n, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
        self.max_block_cells = max_block_cells

    def __len__(self) -> int:
        return len(self.vectors)

    def _mask(self, scores: np.ndarray, ids: np.ndarray | None, caps: np.ndarray | None,
              exclude: Sequence[Iterable[int]] | None) -> None:
        """-inf where a row's query may not see a column's paper. `ids` maps columns to papers (None: all
        papers in order); `caps` and `exclude` are the block's rows' year caps and excluded papers."""
        years = self.years if ids is None else self.years[ids]
        valid = self.valid if ids is None else self.valid[ids]
        scores[:, ~valid] = -np.inf
        if caps is not None:
            dated = caps != NO_YEAR
            if dated.any():
                scores[(years[None, :] > caps[:, None]) & dated[:, None]] = -np.inf
        if exclude is None:
            return
        if ids is not None:
            column = np.full(len(self.vectors), -1, dtype=np.int64)
            column[ids] = np.arange(len(ids))
        for r, ex in enumerate(exclude):
            ex = np.fromiter(ex, dtype=np.int64)
            if len(ex) == 0:
                continue
            if ids is not None:
                ex = column[ex]
                ex = ex[ex >= 0]
            scores[r, ex] = -np.inf

    @staticmethod
    def _top(scores: np.ndarray, ids: np.ndarray | None, k: int) -> tuple[np.ndarray, np.ndarray]:
        m, n = scores.shape
        kk = min(k, n)
        out_i = np.full((m, k), -1, dtype=np.int64)
        out_s = np.full((m, k), -np.inf, dtype=np.float32)
        if kk == 0:
            return out_i, out_s
        part = np.argpartition(-scores, kk - 1, axis=1)[:, :kk] if kk < n else np.tile(np.arange(n), (m, 1))
        top = np.take_along_axis(scores, part, axis=1)
        order = np.argsort(-top, axis=1, kind="stable")
        part = np.take_along_axis(part, order, axis=1)
        top = np.take_along_axis(top, order, axis=1)
        found = np.isfinite(top)
        out_i[:, :kk] = np.where(found, part if ids is None else ids[part], -1)
        out_s[:, :kk] = top
        return out_i, out_s

    @staticmethod
    def _inputs(queries: np.ndarray, max_years: np.ndarray | None, exclude) -> tuple:
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        caps = None if max_years is None else np.asarray(max_years, dtype=np.int64).reshape(-1)
        return queries, caps, exclude

    def search(self, queries: np.ndarray, k: int, max_years: np.ndarray | None = None,
               exclude: Sequence[Iterable[int]] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k rows for each query row: (indexes, cosines), best first, -1 / -inf padding when fewer
        than k papers pass the filters. `max_years[i]` caps the year of query i's results (NO_YEAR: none)."""
        queries, caps, exclude = self._inputs(queries, max_years, exclude)
        m, n = len(queries), len(self.vectors)
        block = max(1, self.max_block_cells // max(n, 1))
        idx = np.full((m, k), -1, dtype=np.int64)
        sc = np.full((m, k), -np.inf, dtype=np.float32)
        for a in range(0, m, block):
            b = min(m, a + block)
            scores = queries[a:b] @ self.vectors.T
            self._mask(scores, None, None if caps is None else caps[a:b], None if exclude is None else exclude[a:b])
            idx[a:b], sc[a:b] = self._top(scores, None, k)
        return idx, sc


class IVFIndex(ExactIndex):
    """Inverted-file index: spherical k-means cells; a query scans only the `nprobe` cells whose centroids
    are closest, exactly. Approximate (a neighbour in an unprobed cell is missed), much less work. Queries
    are searched in blocks sorted by their best cell, each block over the union of its queries' cells
    (so a query may see more than its own cells, never fewer)."""

    kind = "ivf"

    def __init__(self, vectors: np.ndarray, years: np.ndarray | None = None, valid: np.ndarray | None = None,
                 nlist: int | None = None, nprobe: int = 16, iterations: int = 8, sample: int = 65_536,
                 block_queries: int = 32, seed: int = 0):
        super().__init__(vectors, years, valid)
        n = len(self.vectors)
        rng = np.random.default_rng(seed)
        self.nlist = max(1, min(n, nlist or int(round(np.sqrt(max(n, 1))))))
        self.nprobe = max(1, min(nprobe, self.nlist))
        self.block_queries = block_queries
        train = self.vectors[rng.choice(n, size=min(n, sample), replace=False)] if n else self.vectors
        centroids = train[rng.choice(len(train), size=self.nlist, replace=False)].copy() if n else train
        for _ in range(iterations):
            assign = self._assign(train, centroids)
            members = sp.csr_matrix((np.ones(len(train), np.float32), (assign, np.arange(len(train)))),
                                    shape=(self.nlist, len(train)))
            sums = np.asarray(members @ train, dtype=np.float32)
            empty = np.bincount(assign, minlength=self.nlist) == 0
            sums[empty] = train[rng.choice(len(train), size=int(empty.sum()))]
            centroids = normalise_rows(sums)
        self.centroids = centroids
        assign = self._assign(self.vectors, centroids)
        self.order = np.argsort(assign, kind="stable")
        self.offsets = np.searchsorted(assign[self.order], np.arange(self.nlist + 1))
        self.sorted_vectors = self.vectors[self.order]

    @staticmethod
    def _assign(x: np.ndarray, centroids: np.ndarray, block: int = 65_536) -> np.ndarray:
        out = np.empty(len(x), dtype=np.int64)
        for s in range(0, len(x), block):
            out[s:s + block] = np.argmax(x[s:s + block] @ centroids.T, axis=1)
        return out

    def search(self, queries: np.ndarray, k: int, max_years: np.ndarray | None = None,
               exclude: Sequence[Iterable[int]] | None = None) -> tuple[np.ndarray, np.ndarray]:
        queries, caps, exclude = self._inputs(queries, max_years, exclude)
        m = len(queries)
        idx = np.full((m, k), -1, dtype=np.int64)
        sc = np.full((m, k), -np.inf, dtype=np.float32)
        if m == 0:
            return idx, sc
        cs = queries @ self.centroids.T
        cells = np.argpartition(-cs, self.nprobe - 1, axis=1)[:, :self.nprobe] if self.nprobe < self.nlist \
            else np.tile(np.arange(self.nlist), (m, 1))
        by_cell = np.argsort(cells[np.arange(m), np.argmax(np.take_along_axis(cs, cells, 1), axis=1)], kind="stable")
        for a in range(0, m, self.block_queries):
            rows = by_cell[a:a + self.block_queries]
            union = np.unique(cells[rows])
            pos = np.concatenate([np.arange(self.offsets[c], self.offsets[c + 1]) for c in union])
            ids = self.order[pos]
            scores = queries[rows] @ self.sorted_vectors[pos].T
            self._mask(scores, ids, None if caps is None else caps[rows],
                       None if exclude is None else [exclude[r] for r in rows])
            idx[rows], sc[rows] = self._top(scores, ids, k)
        return idx, sc


def make_index(kind: str, vectors: np.ndarray, years: np.ndarray | None = None, valid: np.ndarray | None = None,
               **options) -> ExactIndex:
    if kind == "exact":
        return ExactIndex(vectors, years, valid)
    if kind == "ivf":
        return IVFIndex(vectors, years, valid, **options)
    raise ValueError(f"unknown index kind {kind!r} (exact, ivf)")


__all__ = ["ExactIndex", "IVFIndex", "make_index", "normalise_rows"]
