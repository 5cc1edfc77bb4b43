"""OpenAlex works snapshot parser (JSON lines, usually gzipped) -> RawRecord."""

from __future__ import annotations

from collections.abc import Iterator

from scholargraph.graph.records import RawRecord
from scholargraph.ingest.sources import iter_json_records

# Work objects as in the snapshot's data/works/updated_date=*/part_*.gz: id
# "https://openalex.org/W..", doi "https://doi.org/..", title/display_name, publication_year,
# abstract_inverted_index, authorships [{author_position, author {id, display_name, orcid},
# institutions}], primary_location.source {id, display_name}, referenced_works, cited_by_count.
# The record dicts are passed on as read; normalize.py maps them.


def iter_raw(path: str) -> Iterator[RawRecord]:
    """One RawRecord per work object (JSON lines, a JSON array, or API pages {"results": [..]})."""
    for record in iter_json_records(path):
        results = record.data.get("results") if record.data is not None else None
        if isinstance(results, list) and "id" not in record.data:
            # A saved API response page: its works, all at the page's line.
            for item in results:
                if isinstance(item, dict):
                    yield RawRecord(source=record.source, line=record.line, data=item)
                else:
                    yield RawRecord(source=record.source, line=record.line,
                                    error="malformed JSON: expected an object in results",
                                    excerpt=repr(item)[:200])
        else:
            yield record
