"""Paper vectors: text vectors from the encoders, and citation-evidence vectors (FastRP over the citation graph)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from scholargraph.graph.encoders import (
    AUTO_ENCODER,
    DEFAULT_ENCODER,
    ENCODERS,
    EncoderChoice,
    EncoderUnavailable,
    MiniLMEncoder,
    MiniLMInt8Encoder,
    MiniLMOnnxEncoder,
    MiniLMOnnxInt8Encoder,
    TextEncoder,
    TfidfSvdEncoder,
    choose_encoder,
    is_empty,
    l2_normalize_rows,
    load_encoder,
    make_encoder,
    minilm_available,
    register_encoder,
    text_digest,
)
from scholargraph.graph.snapshot import GraphSnapshot

__all__ = [
    "AUTO_ENCODER", "DEFAULT_ENCODER", "ENCODERS", "EncoderChoice", "EncoderUnavailable", "MiniLMEncoder",
    "MiniLMInt8Encoder", "MiniLMOnnxEncoder", "MiniLMOnnxInt8Encoder",
    "TextEncoder", "TfidfSvdEncoder", "choose_encoder", "text_digest",
    "load_encoder", "make_encoder", "minilm_available", "register_encoder", "text_vectors", "stored_text_vectors",
    "citation_vectors",
    "citation_vector_for_references", "citation_vectors_for_references", "has_evidence", "FASTRP_WEIGHTS",
]

FASTRP_WEIGHTS = (0.0, 1.0, 1.0, 0.5)


def text_vectors(snapshot: GraphSnapshot, encoder: TextEncoder, batch_size: int | None = None,
                 on_progress: Callable[[int], None] | None = None) -> np.ndarray:
    """(n_papers, encoder.dim): each paper's title and abstract encoded; zero rows where a paper has no text."""
    return encoder.encode_fields(*snapshot.text_fields(), batch_size=batch_size, on_progress=on_progress)


def stored_text_vectors(snapshot: GraphSnapshot, encoder: TextEncoder, batch_size: int | None = None,
                        on_progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, int]:
    """Every paper's text vector by `encoder`, as `text_vectors` gives it, reusing the vectors stored by
    `features` (a snapshot from `GraphSnapshot.from_store(store, with_text=True, with_vectors=True,
    semantic_encoder=encoder.key)`) and encoding only the papers with text that have none of this encoder.
    Returns (vectors, number of papers encoded here)."""
    stored = snapshot.semantic_vectors
    if stored is None or snapshot.semantic_encoder != encoder.key or stored.shape[1] != encoder.dim:
        return text_vectors(snapshot, encoder, batch_size=batch_size, on_progress=on_progress), snapshot.n_papers
    out = np.array(stored, dtype=np.float32)
    titles, abstracts = snapshot.text_fields()
    idx = [i for i in np.flatnonzero(~out.any(axis=1)).tolist() if not is_empty(snapshot.text(i))]
    if idx:
        out[idx] = encoder.encode_fields([titles[i] for i in idx], [abstracts[i] for i in idx],
                                         batch_size=batch_size, on_progress=on_progress)
    return out, len(idx)


def has_evidence(vectors: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows that carry a vector (zero rows mean missing evidence, not dissimilarity)."""
    return np.any(vectors != 0, axis=1)


# --- citation-evidence vectors (FastRP) ------------------------------------------------------------


def _citation_matrix(graph: GraphSnapshot | sp.spmatrix | sp.sparray) -> sp.csr_matrix:
    c = graph.citations if isinstance(graph, GraphSnapshot) else graph
    if c.shape[0] != c.shape[1]:
        raise ValueError(f"citation matrix must be square, got {c.shape}")
    coo = sp.coo_matrix(c)
    off_diagonal = (coo.row != coo.col) & (coo.data != 0)
    n = c.shape[0]
    c = sp.csr_matrix((np.ones(int(off_diagonal.sum()), dtype=np.float32),
                       (coo.row[off_diagonal], coo.col[off_diagonal])), shape=(n, n))
    c.sum_duplicates()
    c.data[:] = 1.0  # a citation counts once, however often it was recorded
    return c


def _inverse(x: np.ndarray) -> np.ndarray:
    return np.divide(1.0, x, out=np.zeros_like(x), where=x > 0)


class _EvidenceOperator:
    """The row-normalised adjacency S = D^-1 A of the paper graph, applied without forming A:

        A = w_cite (C + C^T) + w_cocite (C^T D_out^-1 C - diag) + w_coupling (C D_in^-1 C^T - diag)

    C^T C (co-citation) and C C^T (bibliographic coupling) can hold billions of pairs at a million papers
    (one survey citing 500 papers alone makes 250k co-cited pairs), so they are never materialised: each
    product goes through two sparse x dense products, C^T (D_out^-1 (C X)). Each citing paper shares one
    unit of co-citation among its references (D_out^-1) and each cited paper one unit of coupling among its
    citers (D_in^-1), so surveys and classics do not swamp the graph, and each relation type brings about
    as much weight as the direct citations. Self-pairs (the diagonals) are removed.
    Cost per application: four sparse x dense products, O(nnz(C) * d); memory O(nnz(C) + n * d).
    """

    def __init__(self, c: sp.csr_matrix, w_cite: float, w_cocite: float, w_coupling: float):
        self.c = c
        self.ct = c.T.tocsr()
        out_deg = np.diff(c.indptr).astype(np.float32)
        in_deg = np.diff(self.ct.indptr).astype(np.float32)
        self.inv_out = _inverse(out_deg)
        self.inv_in = _inverse(in_deg)
        self.w = (float(w_cite), float(w_cocite), float(w_coupling))
        # Row sums of each relation: C^T D_out^-1 C 1 = in_deg, C D_in^-1 C^T 1 = out_deg, less the diagonals.
        self.diag_cocite = (self.ct @ self.inv_out).astype(np.float32)
        self.diag_coupling = (self.c @ self.inv_in).astype(np.float32)
        degree = (self.w[0] * (out_deg + in_deg) + self.w[1] * (in_deg - self.diag_cocite)
                  + self.w[2] * (out_deg - self.diag_coupling))
        degree[degree < 1e-6] = 0.0  # rounding left-overs of an isolated pair
        self.degree = degree
        self.inv_degree = _inverse(degree).astype(np.float32)

    def apply(self, x: np.ndarray, block: int = 16) -> np.ndarray:
        """S x, a few columns at a time: the temporaries stay at n * block floats, not n * d."""
        y = np.empty_like(x)
        for s in range(0, x.shape[1], block):
            y[:, s:s + block] = self._apply(np.ascontiguousarray(x[:, s:s + block]))
        return y

    def _apply(self, x: np.ndarray) -> np.ndarray:
        w_cite, w_cocite, w_coupling = self.w
        cx = self.c @ x
        ctx = self.ct @ x
        y = cx + ctx
        y *= w_cite
        if w_cocite:
            cx *= self.inv_out[:, None]
            t = self.ct @ cx
            t -= self.diag_cocite[:, None] * x
            t *= w_cocite
            y += t
        if w_coupling:
            ctx *= self.inv_in[:, None]
            t = self.c @ ctx
            t -= self.diag_coupling[:, None] * x
            t *= w_coupling
            y += t
        y *= self.inv_degree[:, None]
        return y


def _sparse_random_projection(n: int, dim: int, density: float, rng: np.random.Generator,
                              block: int = 1 << 18) -> np.ndarray:
    """Achlioptas / Li very sparse random vectors: +-1 with probability density/2 each, else 0 (float32).
    Drawn in row blocks so the uniform draws never need more than a block of memory."""
    r = np.zeros((n, dim), dtype=np.float32)
    half = density / 2.0
    for s in range(0, n, block):
        u = rng.random((min(block, n - s), dim), dtype=np.float32)
        r[s:s + len(u)][u < half] = -1.0
        r[s:s + len(u)][u >= 1.0 - half] = 1.0
    return r


def citation_vectors(graph: GraphSnapshot | sp.spmatrix | sp.sparray, dim: int = 64, *,
                     weights: Sequence[float] = FASTRP_WEIGHTS, cite_weight: float = 0.25,
                     cocitation_weight: float = 1.0, coupling_weight: float = 0.5,
                     normalization_strength: float = 0.0, density: float = 1.0 / 3.0,
                     seed: int = 0) -> np.ndarray:
    """FastRP (Chen et al., CIKM 2019) citation-evidence vectors: (n_papers, dim) float32, rows L2-normalised.

    `graph` is a GraphSnapshot (its `citations`, [i, j] = 1 when i cites j) or that square sparse matrix.
    The paper graph joins citations in both directions, co-citation and bibliographic coupling (see
    `_EvidenceOperator`: the last two are applied implicitly, never materialised), with the given weights.
    Each paper starts from a very sparse random vector (entries +-1 with probability `density`, scaled by
    its degree^`normalization_strength`); then E_k = S^k R for k = 0..len(weights)-1 with S the
    degree-normalised adjacency, each E_k row-normalised (as in the paper's code), and the vector is
    sum_k weights[k] E_k, normalised. With the default weights (0, 1, 1, 0.5) a paper's own random vector
    counts for nothing; its neighbours, their neighbours and the third ring do. The relation weights favour
    co-citation (what gets cited together), as measured on a synthetic world (docs/vectors.md).

    A paper with no citation edge (in or out) gets a zero row: missing evidence, not a mismatch (see
    `has_evidence`). Deterministic for a seed. About 4 * (len(weights) - 1) sparse x dense products of
    nnz(C) x dim: a million papers with ten million citations took 22 s of CPU and 1.4 GB peak RSS at dim 64.
    """
    if dim <= 0:
        raise ValueError("dim must be positive")
    if not 0.0 < density <= 1.0:
        raise ValueError("density must be in (0, 1]")
    if not len(weights):
        raise ValueError("weights must not be empty")
    c = _citation_matrix(graph)
    n = c.shape[0]
    op = _EvidenceOperator(c, cite_weight, cocitation_weight, coupling_weight)
    connected = op.degree > 0
    rng = np.random.default_rng(seed)
    e = _sparse_random_projection(n, dim, density, rng)
    if normalization_strength:
        total = float(op.degree.sum())
        if total > 0:
            scale = np.zeros(n, dtype=np.float32)
            scale[connected] = (op.degree[connected] / total) ** normalization_strength
            e *= scale[:, None]
    out = np.zeros((n, dim), dtype=np.float32)
    for k, w in enumerate(weights):
        if k > 0:
            e = op.apply(e)
            l2_normalize_rows(e)
        elif w:
            l2_normalize_rows(e)
        if w:
            out += np.float32(w) * e
    out[~connected] = 0.0
    return l2_normalize_rows(out)


def citation_vector_for_references(vectors: np.ndarray, ref_indices: Iterable[int]) -> np.ndarray:
    """The citation vector of a new paper from its reference list: the normalised mean of the vectors of the
    papers it cites (indices into `vectors`; unknown ones, -1 or out of range, are skipped). A zero vector
    when none of its references is known or has evidence."""
    return citation_vectors_for_references(vectors, [ref_indices])[0]


def citation_vectors_for_references(vectors: np.ndarray, ref_lists: Sequence[Iterable[int]]) -> np.ndarray:
    """`citation_vector_for_references` for many papers at once: (len(ref_lists), dim) float32."""
    n = vectors.shape[0]
    rows, cols = [], []
    for q, refs in enumerate(ref_lists):
        for j in set(int(r) for r in refs):
            if 0 <= j < n:
                rows.append(q)
                cols.append(j)
    m = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(ref_lists), n))
    out = np.asarray(m @ vectors, dtype=np.float32)
    return l2_normalize_rows(out)
