"""Semantic Scholar parser (Graph API papers, bulk datasets, S2ORC metadata) -> RawRecord."""

from __future__ import annotations

from collections.abc import Iterator

from scholargraph.graph.records import RawRecord
from scholargraph.ingest.sources import iter_json_records

# Three publications share this parser; the shape of each record says which it is (record_kind):
#
# - "graph": Graph API paper JSON: paperId (a 40-hex sha), corpusId, externalIds {DOI, CorpusId,
#   ...}, title, abstract, year, venue, publicationVenue, journal, authors [{authorId, name}],
#   references/citations [{paperId, externalIds?}], citationCount. Saved responses such as
#   {"data": [...]} pages and {"citingPaper"/"citedPaper": {...}} edges are unwrapped here.
# - "paper", "abstract", "citation": rows of the bulk datasets `papers` (corpusid, externalids,
#   title, authors, venue, year, citationcount), `abstracts` ({corpusid, abstract}) and
#   `citations` ({citingcorpusid, citedcorpusid}).
# - "s2orc": S2ORC metadata: paper_id (a corpus id), authors [{first, middle, last, suffix}],
#   abstract, year, doi, venue/journal, outbound_citations/inbound_citations (corpus ids).
#
# The Graph API paperId and the corpus id are different id spaces; normalize.py qualifies them
# as "s2:<paperId>" and "s2corpus:<corpusid>".

GRAPH, PAPER, ABSTRACT, CITATION, S2ORC = "graph", "paper", "abstract", "citation", "s2orc"
_WRAPPERS = ("citingPaper", "citedPaper")


def record_kind(data: dict) -> str | None:
    """Which S2 publication a record dict comes from, or None when it matches none."""
    if "paperId" in data:
        return GRAPH
    if "paper_id" in data:
        return S2ORC
    if "citingcorpusid" in data or "citedcorpusid" in data:
        return CITATION
    if "corpusid" in data:
        return ABSTRACT if "abstract" in data and "title" not in data else PAPER
    return None


def iter_raw(path: str) -> Iterator[RawRecord]:
    """One RawRecord per S2 record; saved API response wrappers are unwrapped."""
    for record in iter_json_records(path):
        data = record.data
        if data is None or "paperId" in data:
            yield record
        elif isinstance(data.get("data"), list):
            for item in data["data"]:
                yield _unwrapped(record, item)
        elif any(isinstance(data.get(key), dict) for key in _WRAPPERS):
            yield _unwrapped(record, data)
        else:
            yield record


def _unwrapped(record: RawRecord, item: object) -> RawRecord:
    if isinstance(item, dict):
        for key in _WRAPPERS:
            if isinstance(item.get(key), dict):
                item = item[key]
                break
        return RawRecord(source=record.source, line=record.line, data=item)
    return RawRecord(source=record.source, line=record.line,
                     error="malformed JSON: expected an object in data", excerpt=repr(item)[:200])
