"""GraphSnapshot: building from records and the as-of cut."""

import pytest

from scholargraph.graph.snapshot import NO_VENUE, NO_YEAR, GraphSnapshot


def small():
    papers = [{"id": "p1", "year": 2000, "venue": "v1", "title": "a"}, {"id": "p2", "year": 2001},
              {"id": "p3", "year": 2005, "venue": "v2"}, {"id": "s1", "stub": True}, {"id": "s2", "stub": True}]
    return GraphSnapshot.build(
        papers, authorships=[("a1", "p1", 1), ("a2", "p1", 2), ("a2", "p2", 1), ("a3", "p3", 1)],
        citations=[("p2", "p1"), ("p3", "p1"), ("p3", "p2"), ("p1", "s1"), ("p3", "s2"), ("p3", "p3")])


def test_build_indexes_and_matrices():
    g = small()
    assert g.n_papers == 5 and g.n_authors == 3 and g.venue_ids == ["v1", "v2"]
    assert g.citations.nnz == 5  # the self-citation is not an edge
    assert g.authorship[g.author_index["a2"], g.paper_index["p1"]] == 2
    assert g.paper_year[g.paper_index["s1"]] == NO_YEAR and g.paper_venue[1] == NO_VENUE
    assert g.text(0) == "a" and g.max_year == 2005


def test_as_of_drops_the_future_and_its_edges():
    g = small().as_of(2001)
    assert g.paper_ids == ["p1", "p2", "s1"]  # s2 was only cited by p3 (2005)
    assert g.author_ids == ["a1", "a2"]
    assert g.citations.nnz == 2
    assert g.extra["as_of"] == 2001


def test_a_saved_snapshot_loads_back_equal(tmp_path):
    import numpy as np

    snap = GraphSnapshot.build([{"id": "a", "title": "Ranking", "abstract": "learning to rank", "year": 2001,
                                 "venue": "venue:x"},
                                {"id": "b", "title": "Expansion", "year": 2002}, {"id": "c", "stub": True}],
                               [("u", "a", 1), ("v", "a", 2), ("v", "b", 1)], [("a", "c"), ("b", "a")],
                               venues=[("venue:x", "X")], authors=[("u", "Ann Lee"), ("v", None)])
    snap.semantic_vectors = np.arange(9, dtype=np.float32).reshape(3, 3)
    snap.semantic_encoder = "enc@1"
    snap.extra["aliases"] = {"old a": "a"}
    back = GraphSnapshot.load(snap.save(tmp_path / "snap"))
    assert back.paper_ids == snap.paper_ids and back.author_ids == snap.author_ids and back.venue_ids == ["venue:x"]
    assert back.titles == snap.titles and back.abstracts == snap.abstracts and back.author_names == ["Ann Lee", None]
    assert (back.citations != snap.citations).nnz == 0 and (back.authorship != snap.authorship).nnz == 0
    for name in ("paper_year", "paper_stub", "paper_venue", "semantic_vectors"):
        np.testing.assert_array_equal(getattr(back, name), getattr(snap, name))
    assert back.topic_vectors is None and back.semantic_encoder == "enc@1" and back.extra == snap.extra
    (tmp_path / "snap" / "arrays.npz").unlink()
    with pytest.raises(ValueError, match="not a saved snapshot"):
        GraphSnapshot.load(tmp_path / "snap")
