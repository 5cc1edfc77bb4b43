"""A rising star's collaboration neighbourhood as of T."""

from __future__ import annotations

import pytest

from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.ranking.rising_stars.picture import collaboration_graph


def _snapshot() -> GraphSnapshot:
    papers = [{"id": f"p{i}", "year": y, "title": "t", "abstract": "a"}
              for i, y in enumerate([2010, 2011, 2012, 2013, 2015])]
    auth = [("S", "p0", 1), ("A", "p0", 2), ("S", "p1", 1), ("A", "p1", 2), ("B", "p1", 3),
            ("S", "p2", 1), ("C", "p2", 2), ("D", "p3", 1), ("S", "p4", 1), ("L", "p4", 2)]
    cites = [("p3", "p0"), ("p2", "p0"), ("p3", "p1")]
    return GraphSnapshot.build(papers, auth, cites, authors=[("S", "Sam Star"), ("A", "Ann")])


def test_co_authors_up_to_t_by_joint_papers_with_their_own_links():
    g = collaboration_graph(_snapshot(), "S", 2013, max_coauthors=2)
    assert g.nodes["S"] == ("Sam Star (3 papers, 3 citations)", "rising star")
    # A (2 joint papers) first, then B and C tie on one (snapshot order breaks it); L's paper is after T.
    assert set(g.nodes) == {"S", "A", "B"} and g.nodes["A"][0] == "Ann (2 papers, 3 citations)"
    weights = {(s, t): w for s, t, _, w in g.edges}
    assert weights == {("S", "A"): 2.0, ("S", "B"): 1.0, ("A", "B"): 1.0}


def test_an_author_without_papers_up_to_t_is_a_key_error():
    with pytest.raises(KeyError, match="no paper up to 2012"):
        collaboration_graph(_snapshot(), "L", 2012)
