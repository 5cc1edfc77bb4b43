"""The optimisers of the citation models: Adam on the rows of embedding tables a batch touches, dense Adam,
summed word-vector bags through them, and the denormal flush their training runs under."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn


class LazyAdam:
    """Adam on embedding tables that touches only the rows a batch uses (like torch's SparseAdam, without
    its cost of coalescing one gradient row per token). Usage: `rows, sub = opt.gather(i, word_ids)`, build
    the loss from `sub` (a leaf holding those rows), backward, then `opt.step()`."""

    def __init__(self, tables: Sequence[torch.Tensor], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8):
        self.tables = list(tables)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.m = [torch.zeros_like(t) for t in self.tables]
        self.v = [torch.zeros_like(t) for t in self.tables]
        self.t = 0
        self._pending: list[tuple[int, torch.Tensor, torch.Tensor]] = []

    def gather(self, table: int, word_ids: np.ndarray) -> tuple[np.ndarray, torch.Tensor, torch.Tensor]:
        """(inverse, rows, leaf): the distinct words of `word_ids`, each id's position among them (to index
        the leaf with), and a leaf tensor of their vectors that collects the gradient."""
        # Distinct ids and each id's rank among them, by marking a vocabulary-sized array (no sort).
        mark = np.zeros(self.tables[table].shape[0], dtype=bool)
        mark[word_ids] = True
        rows = np.flatnonzero(mark)
        rank = np.cumsum(mark) - 1
        inverse = rank[word_ids]
        rows_t = torch.from_numpy(rows.astype(np.int64))
        leaf = self.tables[table].detach()[rows_t].clone().requires_grad_(True)
        self._pending.append((table, rows_t, leaf))
        return inverse, rows_t, leaf

    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        scale = self.lr * np.sqrt(1 - b2 ** self.t) / (1 - b1 ** self.t)
        with torch.no_grad():
            for table, rows, leaf in self._pending:
                if leaf.grad is None:
                    continue
                g = leaf.grad
                m = self.m[table][rows].mul_(b1).add_(g, alpha=1 - b1)
                v = self.v[table][rows].mul_(b2).addcmul_(g, g, value=1 - b2)
                self.m[table][rows] = m
                self.v[table][rows] = v
                self.tables[table][rows] -= scale * m / (v.sqrt() + self.eps)
        self._pending = []


class DenseAdam:
    """Plain Adam for the few small dense parameters (field weights, the ranker's layers). torch.optim would
    do, but constructing one imports torch._dynamo, which costs seconds per process."""

    def __init__(self, params: Sequence[torch.Tensor], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        scale = self.lr * np.sqrt(1 - b2 ** self.t) / (1 - b1 ** self.t)
        with torch.no_grad():
            for p, m, v in zip(self.params, self.m, self.v):
                if p.grad is None:
                    continue
                m.mul_(b1).add_(p.grad, alpha=1 - b1)
                v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                p -= scale * m / (v.sqrt() + self.eps)


def embed_bags(opt: LazyAdam, table: int, *bags: sp.csr_matrix) -> list[torch.Tensor]:
    """Sum of word vectors per CSR row of each matrix, through one `opt.gather` (so the rows the matrices
    share get one gradient and one update)."""
    dim = opt.tables[table].shape[1]
    words = np.concatenate([b.indices for b in bags])
    if len(words) == 0:
        return [torch.zeros(b.shape[0], dim) for b in bags]
    inverse, _, leaf = opt.gather(table, words)
    out, start = [], 0
    for b in bags:
        ids = torch.from_numpy(inverse[start:start + b.nnz].astype(np.int64))
        start += b.nnz
        out.append(nn.functional.embedding_bag(ids, leaf, torch.from_numpy(b.indptr[:-1].astype(np.int64)),
                                               mode="sum", per_sample_weights=torch.from_numpy(
                                                   b.data.astype(np.float32))))
    return out


@contextmanager
def flushed_denormals():
    """While training: Adam moments of words whose triplets stop producing gradient decay into denormals,
    which are slow on CPUs, so they are flushed to zero. The flag is process-wide, so it is switched off
    again afterwards: other code (hypothesis, numerical tests) relies on IEEE subnormals."""
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


__all__ = ["DenseAdam", "LazyAdam", "embed_bags", "flushed_denormals"]
