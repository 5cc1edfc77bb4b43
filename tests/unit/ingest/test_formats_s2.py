"""Semantic Scholar parser: Graph API JSON, bulk dataset rows, S2ORC metadata; record kinds."""

from __future__ import annotations

import json

import pytest

from scholargraph.ingest.formats import s2


def test_graph_api_array(fixtures_dir):
    records = list(s2.iter_raw(str(fixtures_dir / "s2_graph.json")))
    assert [r.data["paperId"] for r in records] == ["649def34f8be52c8b66281af98ae884c09aef38b", "0000aaaa"]
    assert records[0].line == 2


@pytest.mark.parametrize("name, kinds", [
    ("s2_graph.json", [s2.GRAPH, s2.GRAPH]),
    ("s2_papers.jsonl", [s2.PAPER, s2.PAPER]),
    ("s2_abstracts.jsonl", [s2.ABSTRACT, s2.ABSTRACT]),
    ("s2_citations.jsonl", [s2.CITATION] * 3),
])
def test_record_kinds(fixtures_dir, name, kinds):
    assert [s2.record_kind(r.data) for r in s2.iter_raw(str(fixtures_dir / name))] == kinds


def test_record_kind_of_s2orc_and_unknown_shapes():
    assert s2.record_kind({"paper_id": "1", "outbound_citations": []}) == s2.S2ORC
    assert s2.record_kind({"paperId": "a", "corpusId": 1}) == s2.GRAPH
    assert s2.record_kind({"title": "no id"}) is None


def test_saved_responses_are_unwrapped(tmp_path):
    search_page = {"total": 2, "offset": 0, "data": [{"paperId": "a"}, {"paperId": "b"}, "junk"]}
    edges = {"data": [{"citingPaper": {"paperId": "c"}}, {"citedPaper": {"paperId": "d"}}]}
    edge = {"contexts": [], "citingPaper": {"paperId": "e"}}
    path = tmp_path / "responses.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (search_page, edges, edge)) + "\n")
    records = list(s2.iter_raw(str(path)))
    assert [r.data["paperId"] if r.data else r.error for r in records] == [
        "a", "b", "malformed JSON: expected an object in data", "c", "d", "e"]
    assert [r.line for r in records] == [1, 1, 1, 2, 2, 3]
