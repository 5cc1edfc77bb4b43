"""The evidence graph of a suggestion: submission, reviewer, evidence papers, shared topics, citation links."""

from __future__ import annotations

from scholargraph.conference.submissions import ReviewerPool
from scholargraph.ranking.reviewers.picture import evidence_graph

from .conftest import submission
from .test_rev_model import untrained


def test_the_evidence_graph_links_the_submission_to_the_reviewers_papers(world):
    q = submission(world)  # cites x0, x1 and r1; topic A
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["E", "X", "O"])
    sugg = {s.reviewer_id: s for s in untrained().recommend(world, q, pool, k=3, papers_per_reviewer=3)}
    x = sugg["X"]
    g = evidence_graph(world, q, x)
    assert g.nodes["submission:q1"][1] == "submission" and g.nodes["reviewer:X"] == ("Xu Li", "reviewer")
    edges = {(s, t, kind) for s, t, kind, _ in g.edges}
    for p in x.papers:
        assert g.nodes[p.paper_id][1] == ("bridge paper" if p.bridge else "evidence paper")
        assert ("reviewer:X", p.paper_id, "authored") in edges
        assert (("submission:q1", p.paper_id, "cites") in edges) == p.direct_link
    assert any(p.direct_link for p in x.papers)
    # Topic A is the submission's and X's: one shared topic node, linked to both sides.
    assert g.nodes["topic:0"][1] == "topic" and ("submission:q1", "topic:0", "has topic") in edges
    if {"x0", "x1"} <= {p.paper_id for p in x.papers}:
        assert ("x1", "x0", "cites") in edges  # x1 cites x0 in the tiny world
    # The other field's reviewer shares no topic with the submission.
    other = evidence_graph(world, q, sugg["O"])
    assert not any(kind == "topic" for _, kind in other.nodes.values())
