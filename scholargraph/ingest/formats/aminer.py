"""AMiner DBLP-citation-network parser (v10 JSON lines; v11+ JSON array or lines) -> RawRecord."""

from __future__ import annotations

from collections.abc import Iterator

from scholargraph.graph.records import RawRecord
from scholargraph.ingest.sources import iter_json_records

# v10 (one object per line): id, title, abstract, authors [name, ...], venue "name", year,
# references [id, ...], n_citation.
# v11+ (dblp.v11/v12: a whole-file JSON array, or one object per line): authors
# [{name, org, id}], venue {raw, id}, indexed_abstract {IndexLength, InvertedIndex}, fos, doi.
# The record dicts are passed on as read; normalize.py maps both shapes.


def iter_raw(path: str) -> Iterator[RawRecord]:
    """One RawRecord per AMiner paper object, streamed whatever the file's layout."""
    return iter_json_records(path)
