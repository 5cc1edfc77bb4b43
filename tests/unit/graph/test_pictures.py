"""Pictures: the drawing writes a PNG for any SmallGraph, and refuses an empty one."""

from __future__ import annotations

import pytest

from scholargraph.graph.pictures import SmallGraph, draw

PNG = b"\x89PNG\r\n\x1a\n"


def test_a_layered_and_a_force_layout_picture_are_written_as_png(tmp_path):
    g = SmallGraph("evidence", layers={"submission": 0, "topic": 1, "evidence paper": 2, "reviewer": 3})
    g.add_node("s", "submission: a title", "submission")
    g.add_node("t", "topic 1: words", "topic")
    g.add_node("p", "a paper (2020)", "evidence paper")
    g.add_node("r", "A Reviewer", "reviewer")
    g.add_edge("s", "t", "has topic", 0.5)
    g.add_edge("s", "p", "semantic", 0.8)
    g.add_edge("r", "p", "authored")
    g.add_edge("s", "missing", "cites")  # an edge to an absent node is not added
    g.add_edge("s", "s", "cites")  # nor a loop
    assert len(g.edges) == 3
    out = draw(g, tmp_path / "sub" / "evidence.png", caption="why")
    assert out.read_bytes()[:8] == PNG

    star = SmallGraph("collaborators")
    star.add_node("a", "Star", "rising star")
    star.add_node("b", "Co-author", "co-author")
    star.add_edge("a", "b", "co-authored", 2)
    assert draw(star, tmp_path / "star.png").read_bytes()[:8] == PNG


def test_an_empty_graph_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no nodes"):
        draw(SmallGraph("empty"), tmp_path / "x.png")
