"""Derived networks of a snapshot (co-authorship, author and venue citation) as sparse matrices, and their rows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import scipy.sparse as sp

from scholargraph.graph.snapshot import NO_VENUE, GraphSnapshot

# Citation pairs are checked for shared authors in slices of this many, to bound memory on 10M citations.
_SHARED_AUTHOR_CHUNK = 1_000_000


def _binary(m: sp.spmatrix, dtype=np.float64) -> sp.csr_matrix:
    """The pattern of m as 0/1 (authorship stores positions, and duplicates must not double-count)."""
    b = sp.csr_matrix(m, dtype=dtype, copy=True)
    b.sum_duplicates()
    b.eliminate_zeros()
    b.data[:] = 1
    return b


def _drop_diagonal(m: sp.spmatrix) -> sp.csr_matrix:
    m = sp.csr_matrix(m)
    m.setdiag(0)
    m.eliminate_zeros()
    m.sort_indices()
    return m


def coauthor_matrix(s: GraphSnapshot, max_authors: int | None = None) -> sp.csr_matrix:
    """ACN: authors x authors, symmetric, `[a, b]` = number of papers a and b wrote together; zero diagonal.

    `max_authors` skips papers with more authors than that (hyper-authored papers add n^2 pairs each and
    say little about collaboration); None keeps every paper.
    """
    b = _binary(s.authorship)
    if max_authors is not None:
        team = np.asarray(b.sum(axis=0)).ravel()
        b = (b @ sp.diags((team <= max_authors).astype(np.float64))).tocsr()
        b.eliminate_zeros()
    return _drop_diagonal(b @ b.T)


def _shares_author(bt: sp.csr_matrix, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """For each paper pair (src[k], dst[k]): do they have an author in common? bt is papers x authors."""
    out = np.zeros(len(src), dtype=bool)
    for lo in range(0, len(src), _SHARED_AUTHOR_CHUNK):
        hi = lo + _SHARED_AUTHOR_CHUNK
        common = bt[src[lo:hi]].multiply(bt[dst[lo:hi]])
        out[lo:hi] = np.diff(sp.csr_matrix(common).indptr) > 0
    return out


def author_citation_matrix(s: GraphSnapshot, exclude_shared_author_citations: bool = False) -> sp.csr_matrix:
    """ACCN: authors x authors, `[a, b]` = number of (paper p of a, paper q of b) pairs where p cites q.

    Equivalently, a citation p -> q adds 1 to every pair (author of p, author of q): `B C B^T` with B the
    0/1 authorship and C the citations. Self-citation rules:
    - the diagonal is always zero: an author citing their own paper gives no a -> a weight;
    - by default a citation between two papers that share an author still counts for the *other* author
      pairs (p by {A, B} cites q by {A, C}: A -> C, B -> A and B -> C get 1, A -> A nothing), which is what
      the Cypher pattern `(a)-[:AUTHORED]->()-[:CITES]->()<-[:AUTHORED]-(b) WHERE a <> b` counts;
    - with `exclude_shared_author_citations=True` such a citation (a paper-level self-citation) counts
      for no pair at all.
    Citations to or from papers without authors (stubs) contribute nothing.
    """
    b = _binary(s.authorship)
    c = citations_without_shared_authors(s) if exclude_shared_author_citations else _binary(s.citations)
    return _drop_diagonal(b @ c @ b.T)


def citations_without_shared_authors(s: GraphSnapshot) -> sp.csr_matrix:
    """The 0/1 citation matrix without paper-level self-citations: a citation between two papers that share
    at least one author is dropped (checked pair by pair in chunks, never a papers x papers co-author matrix)."""
    c = _binary(s.citations)
    if not c.nnz:
        return c
    coo = c.tocoo()
    keep = ~_shares_author(_binary(s.authorship).T.tocsr(), coo.row, coo.col)
    return sp.csr_matrix((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=c.shape)


def _paper_venue_matrix(s: GraphSnapshot) -> sp.csr_matrix:
    """papers x venues, 1 where the paper was published in the venue."""
    has = np.flatnonzero(s.paper_venue != NO_VENUE)
    return sp.csr_matrix((np.ones(len(has)), (has, s.paper_venue[has])), shape=(s.n_papers, s.n_venues))


def venue_citation_matrix(s: GraphSnapshot, include_self: bool = False) -> sp.csr_matrix:
    """VCCN: venues x venues, `[u, v]` = number of citations from a paper in venue u to a paper in venue v.

    Venue self-citations (u -> u) are dropped by default, as journal rankings such as the Eigenfactor do:
    in PageRank a self-loop keeps a venue's own mass and would reward inward-looking venues.
    `include_self=True` keeps them on the diagonal. Papers without a venue contribute nothing.
    """
    v = _paper_venue_matrix(s)
    m = sp.csr_matrix(v.T @ _binary(s.citations) @ v)
    if include_self:
        m.eliminate_zeros()
        m.sort_indices()
        return m
    return _drop_diagonal(m)


def paper_citation_counts(s: GraphSnapshot) -> np.ndarray:
    """nCitation: for each paper, how many papers of the snapshot cite it (int64). In `s.as_of(T)` only
    citations from papers up to T count."""
    return np.diff(_binary(s.citations).tocsc().indptr).astype(np.int64)


def venue_avg_citation(s: GraphSnapshot) -> np.ndarray:
    """avgCitation: for each venue, the mean nCitation of the snapshot's papers published in it (stubs with
    a venue included); NaN for a venue with no paper in the snapshot."""
    v = _paper_venue_matrix(s)
    counts = np.asarray(v.sum(axis=0)).ravel()
    total = v.T @ paper_citation_counts(s).astype(np.float64)
    out = np.full(s.n_venues, np.nan)
    has = counts > 0
    out[has] = total[has] / counts[has]
    return out




def iter_edge_rows(matrix, ids_src: Sequence[str], ids_dst: Sequence[str], symmetric: bool = False,
                   batch_size: int = 50_000) -> Iterator[list[dict]]:
    """`edge_rows` in batches of at most `batch_size` rows, so that 10M edges never sit in memory as dicts."""
    m = sp.csr_matrix(matrix)
    if m.shape != (len(ids_src), len(ids_dst)):
        raise ValueError(f"matrix has shape {m.shape}, but there are {len(ids_src)} source and "
                         f"{len(ids_dst)} target ids")
    if symmetric:
        if m.shape[0] != m.shape[1]:
            raise ValueError("a symmetric matrix must be square")
        m = sp.triu(m, k=0, format="csr")
    m = sp.csr_matrix(m, copy=True)
    m.sum_duplicates()
    m.eliminate_zeros()
    m.sort_indices()
    coo = m.tocoo()
    # Counts stay ints, anything else becomes floats: plain Python numbers for the driver.
    weight_type = np.int64 if np.all(np.mod(coo.data, 1) == 0) else np.float64
    for lo in range(0, coo.nnz, batch_size):
        hi = lo + batch_size
        rows, cols, weights = coo.row[lo:hi], coo.col[lo:hi], coo.data[lo:hi].astype(weight_type).tolist()
        yield [{"source": ids_src[r], "target": ids_dst[c], "weight": w}
               for r, c, w in zip(rows.tolist(), cols.tolist(), weights)]


def edge_rows(matrix, ids_src: Sequence[str], ids_dst: Sequence[str], symmetric: bool = False) -> list[dict]:
    """Write-back rows `{source, target, weight}` for every non-zero `[i, j]`, in row-major order.

    `symmetric=True` (the co-author network) gives each undirected edge once, from the upper triangle
    (i <= j). Weights are ints when every weight of the matrix is integral, floats otherwise.
    """
    return [row for batch in iter_edge_rows(matrix, ids_src, ids_dst, symmetric=symmetric) for row in batch]
