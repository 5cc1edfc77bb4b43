"""Flattening bundles into query rows (no server needed)."""

import re

from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle, Venue
from scholargraph.graph.store import BatchRows, to_camel


def to_snake(name: str) -> str:
    """camelCase (stored property) -> snake_case (Python): to_camel's inverse, which only tests need."""
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def bundle(pid, sources, refs=(), title="T", venue=None):
    authors = (Author("a:1", "Ann"), Author("a:2", "Bob"))
    return PaperBundle(
        paper=Paper(pid, title, year=2000, sources=sources, venue_id=venue.id if venue else None),
        authors=authors, venue=venue,
        authorships=tuple(Authorship(a.id, pid, i + 1) for i, a in enumerate(authors)),
        citations=tuple(Citation(pid, r) for r in refs))


def test_rows_group_edges_per_paper_and_dedupe_nodes():
    v = Venue("venue:kdd", "KDD")
    rows = BatchRows.from_bundles([bundle("p1", ("x:1",), refs=("p2", "p3"), venue=v),
                                   bundle("p2", ("x:2",), refs=("p3",), venue=v)])
    assert [r["id"] for r in rows.papers] == ["p1", "p2"]
    assert len(rows.authors) == 2 and len(rows.venues) == 1
    assert rows.authorships[0] == {"paperId": "p1", "authors": [{"id": "a:1", "position": 1},
                                                                 {"id": "a:2", "position": 2}]}
    assert rows.citations == [{"citing": "p1", "cited": ["p2", "p3"]}, {"citing": "p2", "cited": ["p3"]}]
    assert rows.cited_ids == ["p2", "p3"]
    assert rows.published_in == [{"paperId": "p1", "venueId": "venue:kdd"},
                                 {"paperId": "p2", "venueId": "venue:kdd"}]


def test_same_id_twice_in_a_batch_merges_sources_and_fields():
    rows = BatchRows.from_bundles([bundle("10.1/x", ("aminer:1",), title="A"),
                                   bundle("10.1/x", ("openalex:W1",), title=None)])
    assert len(rows.papers) == 1
    assert rows.papers[0]["sources"] == ["aminer:1", "openalex:W1"]
    assert rows.papers[0]["title"] == "A"


def test_case_conversion_round_trips():
    assert to_camel("pagerank_coauthor") == "pagerankCoauthor"
    assert to_snake("pagerankCoauthor") == "pagerank_coauthor"
    assert to_camel("n_citation") == "nCitation"
