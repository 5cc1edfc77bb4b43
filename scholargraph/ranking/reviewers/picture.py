"""A suggested reviewer's evidence as a small graph: the submission, the reviewer's evidence papers, the
topics they share with the submission, and the citation links among them (graph.pictures draws it)."""

from __future__ import annotations

import numpy as np

from scholargraph.conference.submissions import Query
from scholargraph.graph.pictures import SmallGraph
from scholargraph.ranking.reviewers.evidence import EvidenceIndex
from scholargraph.ranking.reviewers.explain import Suggestion

TOPIC_SHARE = 0.1  # a topic counts as a paper's (or the submission's) when it holds this share of it


def _topics_of(vector: np.ndarray | None, top: int = 3) -> dict[int, float]:
    if vector is None or not len(vector) or float(np.sum(vector)) <= 0:
        return {}
    v = np.asarray(vector, dtype=float) / float(np.sum(vector))
    return {int(t): float(v[t]) for t in np.argsort(-v)[:top] if v[t] >= TOPIC_SHARE}


def _short(text: str | None, fallback: str, n: int = 60) -> str:
    text = (text or "").strip() or fallback
    return text if len(text) <= n else text[: n - 1] + "…"


def evidence_graph(index: EvidenceIndex, query: Query, suggestion: Suggestion) -> SmallGraph:
    """The submission (its title), the reviewer, each evidence paper (a bridge paper when it entered through
    the compensation branch) with its semantic similarity to the submission as an edge, the submission's
    main topics that evidence papers share (labelled by the topic model's top words when the index has
    one), the submission's references to evidence papers and the citations among them."""
    snap = index.snapshot
    g = SmallGraph(f"Why {suggestion.name or suggestion.reviewer_id} (rank {suggestion.rank}, score "
                   f"{suggestion.score:.3f} = main {suggestion.main:.3f} + compensation "
                   f"{suggestion.compensation:.3f})",
                   layers={"submission": 0, "topic": 1, "evidence paper": 2, "bridge paper": 2, "reviewer": 3})
    sub = f"submission:{query.id}"
    g.add_node(sub, "submission: " + _short(query.title, query.id), "submission")
    reviewer = f"reviewer:{suggestion.reviewer_id}"
    g.add_node(reviewer, suggestion.name or suggestion.reviewer_id, "reviewer")
    words = None
    if index.topic_model is not None:
        words = [[w for w, _ in ws] for ws in index.topic_model.top_words(3)]
    query_topics = _topics_of(query.topic_vector)
    rows: dict[str, int] = {}
    for p in suggestion.papers:
        kind = "bridge paper" if p.bridge else "evidence paper"
        label = _short(p.title, p.paper_id, 48) + (f" ({p.year})" if p.year else "")
        g.add_node(p.paper_id, label, kind)
        g.add_edge(reviewer, p.paper_id, "authored")
        if p.semantic is not None:
            g.add_edge(sub, p.paper_id, "semantic", max(p.semantic, 0.0))
        if p.direct_link:
            g.add_edge(sub, p.paper_id, "cites", 1.0)
        row = snap.paper_index.get(p.paper_id)
        if row is None:
            continue
        rows[p.paper_id] = row
        for t, share in _topics_of(index.topics[row]).items():
            if t in query_topics:
                node = f"topic:{t}"
                g.add_node(node, f"topic {t}: " + ", ".join(words[t]) if words else f"topic {t}", "topic")
                g.add_edge(sub, node, "has topic", query_topics[t])
                g.add_edge(p.paper_id, node, "has topic", share)
    cites = index.citations
    for a, ra in rows.items():
        for b, rb in rows.items():
            if a != b and cites[ra, rb]:
                g.add_edge(a, b, "cites", 1.0)
    return g
