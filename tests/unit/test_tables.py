"""The one rows renderer: the aligned table, jsonl, csv, tsv and TREC runs."""

from __future__ import annotations

import csv
import io
import json

import pytest

from scholargraph.tables import Rows, Trec, render, text_table, trec_lines


def test_trec_lines():
    assert trec_lines("q1", [("d1", 0.9)], "reco") == ["q1 Q0 d1 1 0.900000 reco"]
    assert trec_lines("name:ann lee", [("a b", 1.0)], "t") == ["name:ann_lee Q0 a_b 1 1.000000 t"]


def test_text_table_aligns_and_rules():
    table = text_table(["method", "Pre@5%"], [["IIRL", "0.5"], ["PageRank", "0.25"]])
    assert table.split("\n") == ["method    Pre@5%", "--------  ------", "IIRL         0.5", "PageRank    0.25"]
    fixed = text_table(["system", "mrr"], [["BM25", "0.2000"]], widths=[8, 8], sep="", rule="full")
    assert fixed.split("\n") == ["system       mrr", "-" * 16, "BM25      0.2000"]
    assert text_table(["a", "b"], [["x", "y"]], left=2, rule=None) == "a  b\nx  y"


ROWS = Rows(["query", "doc", "score", "name"],
            [["q1", "d1", "0.900000", "Lee, Ann"], ["q1", "d2", "0.500000", "tab\there"], ["q2", "d1", "0.1", "x"]],
            trec=Trec("query", "doc", "score", "run"))


def test_every_format():
    assert render(ROWS, "table").split("\n")[-1] == "(3 rows)"
    assert [json.loads(line)["name"] for line in render(ROWS, "jsonl").split("\n")] == ["Lee, Ann", "tab\there", "x"]
    assert list(csv.reader(io.StringIO(render(ROWS, "csv"))))[1] == ["q1", "d1", "0.900000", "Lee, Ann"]
    assert render(ROWS, "tsv").split("\n")[2] == "q1\td2\t0.500000\ttab here"
    assert render(ROWS, "trec").split("\n") == ["q1 Q0 d1 1 0.900000 run", "q1 Q0 d2 2 0.500000 run",
                                                "q2 Q0 d1 1 0.100000 run"]
    with pytest.raises(ValueError):
        render(Rows(["a"], [["x"]]), "trec")


def test_a_commands_own_table_and_records():
    rows = Rows(["a"], [[1]], records=[{"a": 1, "more": [2]}], text=["my layout"])
    assert render(rows, "table") == "my layout"
    assert render(rows, "jsonl") == '{"a": 1, "more": [2]}'


def test_a_row_without_a_score_is_no_line_of_a_trec_run():
    rows = Rows(["query", "doc", "score"], [["q1", "d1", "0.9"], ["q1", "d2", ""], ["q1", "d3", "0.1"]],
                trec=Trec("query", "doc", "score", "run"))
    assert render(rows, "trec").split("\n") == ["q1 Q0 d1 1 0.900000 run", "q1 Q0 d3 2 0.100000 run"]
    assert render(rows, "tsv").split("\n")[2] == "q1\td2\t"  # the table keeps the pair, with no number
