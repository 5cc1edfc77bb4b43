"""Build a GraphSnapshot straight from dump files, without Neo4j (tests, offline evaluation)."""

from __future__ import annotations

from collections.abc import Sequence

from scholargraph.errors import InvalidRecord
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.ingest import sources
from scholargraph.ingest.normalize import Dropped, iter_raw, normalize


def snapshot_from_files(fmt: str, paths: Sequence[str], with_text: bool = True) -> GraphSnapshot:
    """Parse and normalise `paths` like `ingest` does, and build the snapshot the store would give.

    Papers merge by id as in the graph; cited papers not in the files become stubs. Source-id
    references to papers whose id is a DOI resolve through their `sources`, as the store's aliases do.
    Memory grows with the corpus: meant for corpora that fit in RAM.
    """
    papers: dict[str, dict] = {}
    alias: dict[str, str] = {}
    authorships: dict[tuple[str, str], int] = {}
    citations: list[tuple[str, str]] = []
    authors: dict[str, str | None] = {}
    venues: dict[str, str | None] = {}
    for path in sources.expand_inputs(list(paths)):
        for raw in iter_raw(fmt, path):
            try:
                bundle = normalize(fmt, raw)
            except (InvalidRecord, Dropped):
                continue
            p = bundle.paper
            row = papers.setdefault(p.id, {"id": p.id, "stub": True})
            if not p.partial:
                row["stub"] = False
            for key, value in (("year", p.year), ("venue", p.venue_id)):
                if value is not None:
                    row[key] = value
            if with_text:
                for key, value in (("title", p.title), ("abstract", p.abstract)):
                    if value is not None:
                        row[key] = value
            for s in p.sources:
                if s != p.id:
                    alias[s] = p.id
            for a in bundle.authors:
                authors.setdefault(a.id, a.name)
            if bundle.venue is not None:
                venues.setdefault(bundle.venue.id, bundle.venue.name)
            for s in bundle.authorships:
                authorships[(s.author_id, s.paper_id)] = s.position
            citations.extend((c.citing_id, c.cited_id) for c in bundle.citations)
    resolved = [(a, alias.get(b, b)) for a, b in citations]
    for _, cited in resolved:
        papers.setdefault(cited, {"id": cited, "stub": True})
    return GraphSnapshot.build(list(papers.values()), [(a, p, pos) for (a, p), pos in authorships.items()],
                               resolved, venues=list(venues.items()), authors=list(authors.items()))
