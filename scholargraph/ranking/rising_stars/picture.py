"""A rising star's collaboration neighbourhood as of T, as a small graph (graph.pictures draws it)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from scholargraph.graph import networks
from scholargraph.graph.pictures import SmallGraph
from scholargraph.graph.snapshot import GraphSnapshot


def collaboration_graph(snapshot: GraphSnapshot, author_id: str, as_of: int, max_coauthors: int = 12,
                        title: str = "") -> SmallGraph:
    """The author and their `max_coauthors` most frequent co-authors in the papers up to `as_of`, each
    labelled with papers and citations received up to then; edges are joint papers (the co-author network,
    ACN), between co-authors too. One sparse matrix-vector product with the author's row (linear in the
    authorships), not the whole co-author network."""
    past = snapshot.as_of(as_of)
    if author_id not in past.author_index:
        raise KeyError(f"{author_id} has no paper up to {as_of}")
    a = past.author_index[author_id]
    wrote = sp.csr_matrix(past.authorship, dtype=np.float64)
    wrote.data[:] = 1.0
    joint = np.asarray((wrote @ wrote[a].T).todense()).ravel()
    joint[a] = 0.0
    others = np.flatnonzero(joint > 0)
    others = others[np.lexsort((others, -joint[others]))][:max_coauthors]
    papers = np.asarray(wrote.sum(axis=1)).ravel()
    cited = wrote @ networks.paper_citation_counts(past).astype(np.float64)
    names = past.author_names or [None] * past.n_authors

    def label(i: int) -> str:
        n, c = int(papers[i]), int(cited[i])
        return (f"{names[i] or past.author_ids[i]} ({n} paper{'s' * (n != 1)}, "
                f"{c} citation{'s' * (c != 1)})")

    g = SmallGraph(title or f"Collaboration neighbourhood of {names[a] or author_id} up to {as_of}")
    g.add_node(past.author_ids[a], label(a), "rising star")
    members = [a, *others.tolist()]
    for i in others.tolist():
        g.add_node(past.author_ids[i], label(i), "co-author")
    sub = wrote[members]
    counts = (sub @ sub.T).tocoo()
    for i, j, w in zip(counts.row.tolist(), counts.col.tolist(), counts.data.tolist()):
        if i < j:
            g.add_edge(past.author_ids[members[i]], past.author_ids[members[j]], "co-authored", w)
    return g
