"""AMiner parser: v10 JSON lines and v11+ whole-file JSON arrays."""

from __future__ import annotations

import json

from scholargraph.ingest.formats.aminer import iter_raw


def test_v10_json_lines(fixtures_dir):
    records = list(iter_raw(str(fixtures_dir / "aminer_v10.jsonl")))
    assert [r.line for r in records] == [1, 2, 3, 4]
    assert all(r.error is None for r in records)
    first = records[0].data
    assert first["authors"] == ["Mary Smith", "Li Wei"]
    assert first["references"] == ["51c7e02e-f5ed-431a-8cf5-f761f266d4be",
                                   "69b625b9-ebc5-4b60-b385-8a07945f5de9"]


def test_v12_json_array(fixtures_dir):
    records = list(iter_raw(str(fixtures_dir / "aminer_v12.json")))
    assert [(r.line, r.data["id"]) for r in records] == [(2, 1091), (3, 2005687710)]
    assert records[0].data["venue"] == {"raw": "Information Visualisation 2005", "id": 1150919115}
    assert records[0].data["indexed_abstract"]["IndexLength"] == 6


def test_v11_one_object_per_line_with_a_malformed_line(tmp_path):
    rows = [json.dumps({"id": "1", "title": "A", "authors": [{"name": "X", "org": "", "id": "9"}]}),
            '{"id": "2", "title": "B", "authors": [{"name": "Y"',
            json.dumps({"id": "3", "title": "C", "authors": [{"name": "Z"}]})]
    path = tmp_path / "v11.txt"
    path.write_text("\n".join(rows) + "\n")
    records = list(iter_raw(str(path)))
    assert [r.data["id"] for r in records if r.data] == ["1", "3"]
    assert records[1].line == 2 and records[1].error.startswith("malformed JSON")
