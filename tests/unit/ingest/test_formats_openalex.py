"""OpenAlex parser: works snapshot lines (plain or gzipped) and saved API pages."""

from __future__ import annotations

import gzip
import json

from scholargraph.ingest.formats.openalex import iter_raw


def test_works_snapshot_lines(fixtures_dir):
    records = list(iter_raw(str(fixtures_dir / "openalex_works.jsonl")))
    assert [r.line for r in records] == [1, 2, 3, 4, 5]
    assert records[0].data["id"] == "https://openalex.org/W2741809807"
    assert records[2].error.startswith("malformed JSON") and records[2].data is None


def test_gzipped_part_file(fixtures_dir, tmp_path):
    path = tmp_path / "part_000.gz"
    path.write_bytes(gzip.compress((fixtures_dir / "openalex_works.jsonl").read_bytes()))
    assert [r.line for r in iter_raw(str(path))] == [1, 2, 3, 4, 5]


def test_saved_api_page_is_unwrapped(tmp_path):
    page = {"meta": {"count": 2}, "results": [{"id": "https://openalex.org/W1"}, 7, {"id": "https://openalex.org/W2"}]}
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page, indent=2))
    records = list(iter_raw(str(path)))
    assert [r.data["id"] if r.data else r.error for r in records] == [
        "https://openalex.org/W1", "malformed JSON: expected an object in results", "https://openalex.org/W2"]
