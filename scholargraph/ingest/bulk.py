"""Bulk loading: stage a dump as the transactional path would write it, then as importer CSV files.

`BulkStaging` is a `BundleWriter`: the loader feeds it the same batches it would send to Neo4j, and
it applies each batch with the semantics of the store's upsert queries (cypher/store/upsert_*.cypher,
in their order within one transaction): non-null fields overwrite, `sources` is a set union, a full
record clears `stub`, a recorded alias folds the node created under that id into the DOI node, cited
ids resolve through aliases, a citation of oneself is dropped. The graph it ends with is the graph the
transactional ingest of the same inputs builds (tests/integration/ingest/test_bulk.py compares them
by a canonical dump); `write_import_files` writes it for `neo4j-admin database import full`.

Memory stays bounded by the number of ids, not by the text: a paper's properties (title, abstract,
authors...) live in an append-only spill file with one offset per paper in memory; citations go to a
binary file of id pairs, de-duplicated once at export (numpy, 8 bytes per citation). Authors, venues
and aliases are held in memory (a few hundred bytes each).
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scholargraph.graph.records import PaperBundle
from scholargraph.graph.store import BatchRows, WriteCounts
from scholargraph.progress import progress

# A paper's spilled record, by position. Authorships and venues travel with the paper they belong to.
_ID, _TITLE, _ABSTRACT, _YEAR, _DOI, _VENUE_ID, _SOURCES, _AUTHORS, _VENUES = range(9)
# Per-paper flags (one byte each). Every live paper has `stub` set: true for a stub or a partial record
# seen first, false once a full record arrived.
_LIVE, _STUB, _INGESTED = 1, 2, 4

# Array elements inside one CSV field (the importer's --array-delimiter): a control character that
# ids never contain.
ARRAY_DELIMITER = "\x1f"


@contextmanager
def collector_paused() -> Iterator[None]:
    """Staging holds millions of long-lived, acyclic objects (ids, authors): with the cyclic collector
    on, every full collection walks them all, over half the staging time at 1M papers (measured: 44 s
    against 19 s for 200k records). Reference counting still frees everything else."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _SpillFile:
    """Append-only records (marshal) addressed by offset: the newest version of each paper wins."""

    def __init__(self, directory: Path):
        fd, name = tempfile.mkstemp(prefix="papers-", suffix=".spill", dir=directory)
        self.path = Path(name)
        self._fh = os.fdopen(fd, "w+b")
        self._end = 0
        self._at_end = True  # no read moved the position since the last append: no seek needed

    def append(self, idx: int, record: list) -> int:
        blob = marshal.dumps((idx, record))
        offset = self._end
        if not self._at_end:
            self._fh.seek(offset)
            self._at_end = True
        self._fh.write(len(blob).to_bytes(4, "little"))
        self._fh.write(blob)
        self._end += 4 + len(blob)
        return offset

    def read(self, offset: int) -> list:
        self._at_end = False
        self._fh.seek(offset)
        size = int.from_bytes(self._fh.read(4), "little")
        return marshal.loads(self._fh.read(size))[1]

    def scan(self) -> Iterator[tuple[int, int, list]]:
        """(offset, paper index, record) for every version, in the order written."""
        self._fh.flush()
        with open(self.path, "rb", buffering=1 << 20) as fh:
            offset = 0
            while True:
                head = fh.read(4)
                if not head:
                    return
                size = int.from_bytes(head, "little")
                idx, record = marshal.loads(fh.read(size))
                yield offset, idx, record
                offset += 4 + size

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a flush after a full disk: the file is removed anyway
            self._fh.close()
        self.path.unlink(missing_ok=True)


@dataclass
class StagedCounts:
    papers: int = 0
    stubs: int = 0
    authors: int = 0
    venues: int = 0
    aliases: int = 0
    authorships: int = 0
    published_in: int = 0
    citations: int = 0
    empty_sources: int = 0  # nodes whose `sources` is [] (the importer writes no property for them)
    multiline_rows: int = 0  # rows with a line break inside a field (the normaliser leaves none in text)


class BulkStaging:
    """The graph a transactional ingest would build, staged on local disk for the offline importer."""

    def __init__(self, work_dir: Path, ingested_at: int):
        self.work_dir = Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.ingested_at = ingested_at
        self._spill = _SpillFile(self.work_dir)
        self._paper_index: dict[str, int] = {}  # live node id -> paper index
        self._offsets = array("q")  # paper index -> offset of its newest spilled record
        self._flags = bytearray()
        self._folded_into: dict[int, int] = {}  # a folded paper -> the paper it was folded into
        self._aliases: dict[str, str] = {}  # PaperAlias id -> paperId
        self._authors: dict[str, list] = {}  # id -> [name, orcid, sources, affiliations]
        self._author_index: dict[str, int] = {}
        self._venues: dict[str, str | None] = {}  # id -> name
        self._venue_index: dict[str, int] = {}
        fd, name = tempfile.mkstemp(prefix="cites-", suffix=".bin", dir=self.work_dir)
        os.close(fd)
        self._cites_path = Path(name)
        self._cites = open(self._cites_path, "wb")  # int32 pairs (citing, cited), paper indexes

    # --- the BundleWriter protocol ---------------------------------------------------------------

    def write_bundles(self, bundles: Sequence[PaperBundle]) -> WriteCounts:
        return self.write_rows(BatchRows.from_bundles(bundles))

    def write_rows(self, rows: BatchRows) -> WriteCounts:
        """Apply one batch as the store's write_rows transaction would; returns the same counts."""
        counts = rows.counts()
        batch: dict[int, list] = {}  # records read or written in this batch, flushed at its end
        for row in rows.papers:
            self._upsert_paper(row, batch, counts)
        for row in rows.aliases:
            self._upsert_alias(row["alias"], row["id"], batch)
        for row in rows.venues:
            self._upsert_venue(row)
        for row in rows.authors:
            self._upsert_author(row)
        # MATCH semantics: a row whose paper was folded away in this batch (its id became an alias) is
        # skipped, as the queries' MATCH finds nothing for it.
        paper_index = self._paper_index
        for row in rows.authorships:
            if (idx := paper_index.get(row["paperId"])) is not None:
                authors = self._record(idx, batch)[_AUTHORS]
                if not authors:  # the common case: the paper's first authorship row
                    authors.extend([au["id"], au["position"]] for au in row["authors"])
                    continue
                for au in row["authors"]:
                    _set_position(authors, au["id"], au["position"], overwrite=True)
        for row in rows.published_in:
            idx = paper_index.get(row["paperId"])
            if idx is not None and row["venueId"] in self._venues:
                venues = self._record(idx, batch)[_VENUES]
                if row["venueId"] not in venues:
                    venues.append(row["venueId"])
        aliases = self._aliases
        # Cited ids resolve through the aliases (a DOI paper cited by its source id); most dumps have none.
        cited_ids = [aliases.get(c, c) for c in rows.cited_ids] if aliases else rows.cited_ids
        for target in cited_ids:
            if target not in paper_index:  # checked one by one: two cited ids can be aliases of one paper
                idx = self._new_paper(target, _STUB)
                batch[idx] = [target, None, None, None, None, None, None, [], []]
                counts.stubs_created += 1
        citing_idx: list[int] = []
        cited_idx: list[int] = []
        for row in rows.citations:
            citing = paper_index.get(row["citing"])
            if citing is None:
                continue
            # Citations of oneself are dropped at export (a fold can make them later, too).
            targets = [paper_index[aliases.get(c, c)] for c in row["cited"]] if aliases else \
                [paper_index[c] for c in row["cited"]]
            cited_idx.extend(targets)
            citing_idx.extend([citing] * len(targets))
        if cited_idx:
            pairs = np.empty((len(cited_idx), 2), dtype=np.int32)
            pairs[:, 0] = citing_idx
            pairs[:, 1] = cited_idx
            pairs.tofile(self._cites)
        spill = self._spill
        offsets = self._offsets
        for idx, record in batch.items():
            offsets[idx] = spill.append(idx, record)
        return counts

    # --- upserts, one per query ------------------------------------------------------------------

    def _new_paper(self, paper_id: str, flags: int) -> int:
        idx = len(self._offsets)
        self._paper_index[paper_id] = idx
        self._offsets.append(-1)
        self._flags.append(_LIVE | flags)
        return idx

    def _record(self, idx: int, batch: dict[int, list]) -> list:
        record = batch.get(idx)
        if record is None:
            record = batch[idx] = self._spill.read(self._offsets[idx])
        return record

    def _upsert_paper(self, row: dict, batch: dict[int, list], counts: WriteCounts) -> None:
        idx = self._paper_index.get(row["id"])
        created = idx is None
        if created:
            idx = self._new_paper(row["id"], 0)
            record = [row["id"], None, None, None, None, None, [], [], []]
            batch[idx] = record
        else:
            record = self._record(idx, batch)
        was_stub = bool(self._flags[idx] & _STUB)
        old_sources = record[_SOURCES] or []
        partial = row["partial"]
        if not created and not was_stub and not partial and old_sources \
                and not any(s in old_sources for s in row["sources"]):
            counts.merged += 1
        if created:
            counts.papers_created += 1
        elif was_stub and not partial:
            counts.stubs_filled += 1
        for field, key in ((_TITLE, "title"), (_ABSTRACT, "abstract"), (_YEAR, "year"), (_DOI, "doi"),
                           (_VENUE_ID, "venueId")):
            if row[key] is not None:
                record[field] = row[key]
        record[_SOURCES] = old_sources + [s for s in row["sources"] if s not in old_sources]
        # stub = coalesce(p.stub, true) for a partial record (true when it created the node), else false.
        if created and partial:
            self._flags[idx] |= _STUB
        elif not partial:
            self._flags[idx] &= ~_STUB
        self._flags[idx] |= _INGESTED

    def _upsert_alias(self, alias: str, paper_id: str, batch: dict[int, list]) -> None:
        self._aliases[alias] = paper_id
        old_idx = self._paper_index.get(alias)
        if old_idx is None:
            return
        idx = self._paper_index[paper_id]
        old = self._record(old_idx, batch)
        new = self._record(idx, batch)
        # Citations move lazily: export maps a folded paper's pairs onto the paper it was folded into.
        for author_id, position in old[_AUTHORS]:
            _set_position(new[_AUTHORS], author_id, position, overwrite=False)
        for field in (_TITLE, _ABSTRACT, _YEAR):
            if new[field] is None:
                new[field] = old[field]
        new_sources = new[_SOURCES] or []
        new[_SOURCES] = new_sources + [s for s in (old[_SOURCES] or []) if s not in new_sources]
        # DETACH DELETE old: its PUBLISHED_IN edges go with it.
        del self._paper_index[alias]
        del batch[old_idx]
        self._flags[old_idx] = 0
        self._folded_into[old_idx] = idx

    def _upsert_venue(self, row: dict) -> None:
        if row["id"] not in self._venues:
            self._venue_index[row["id"]] = len(self._venue_index)
            self._venues[row["id"]] = row["name"]
        elif self._venues[row["id"]] is None:  # name = coalesce(v.name, row.name)
            self._venues[row["id"]] = row["name"]

    def _upsert_author(self, row: dict) -> None:
        known = self._authors.get(row["id"])
        if known is None:
            self._author_index[row["id"]] = len(self._author_index)
            self._authors[row["id"]] = [row["name"], row["orcid"], list(row["sources"]),
                                        list(row.get("affiliations") or ())]
            return
        known[0] = known[0] if known[0] is not None else row["name"]
        known[1] = row["orcid"] if row["orcid"] is not None else known[1]
        known[2] = known[2] + [s for s in row["sources"] if s not in known[2]]
        known[3] = known[3] + [s for s in row.get("affiliations") or () if s not in known[3]]

    # --- export ----------------------------------------------------------------------------------

    def write_import_files(self, out_dir: Path, quiet: bool = False) -> tuple[dict[str, list[Path]], StagedCounts]:
        """CSV files for `neo4j-admin database import full`: {'nodes': [...], 'relationships': [...]} as
        `Label=header,data` arguments are built from, plus what they hold."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        self._cites.close()
        staged = StagedCounts()
        files: dict[str, list[str]] = {"nodes": [], "relationships": []}

        def table(kind: str, label: str, name: str, header: str) -> _CsvTable:
            t = _CsvTable(out_dir / f"{name}.csv", header)
            files[kind].append(f"{label}={t.path}")
            return t

        papers = table("nodes", "Paper", "papers", ":ID(Paper),id,title,abstract,year:long,doi,venueId,"
                       "sources:string[],stub:boolean,ingestedAt:long")
        authored = table("relationships", "AUTHORED", "authored", ":START_ID(Author),:END_ID(Paper),position:long")
        published = table("relationships", "PUBLISHED_IN", "published_in", ":START_ID(Paper),:END_ID(Venue)")
        bar = progress(total=len(self._paper_index), desc="import files: papers", unit="paper", quiet=quiet)
        for offset, idx, record in self._spill.scan():
            if self._offsets[idx] != offset or not self._flags[idx] & _LIVE:
                continue  # superseded by a newer version, or folded away
            self._write_paper(papers, idx, record)
            if record[_AUTHORS]:  # ints only: formatted here, not cell by cell
                authored.raw_lines([f"{self._author_index[a]},{idx},{'' if pos is None else pos}"
                                    for a, pos in record[_AUTHORS]])
            if record[_VENUES]:
                published.raw_lines([f"{idx},{self._venue_index[v]}" for v in record[_VENUES]])
            if self._flags[idx] & _STUB:
                staged.stubs += 1
            if record[_SOURCES] == []:
                staged.empty_sources += 1
            staged.papers += 1
            staged.authorships += len(record[_AUTHORS])
            staged.published_in += len(record[_VENUES])
            bar.update(1)
        bar.close()
        for t in (papers, authored, published):
            t.close()
        tables = [papers]
        with table("nodes", "Author", "authors",
                   ":ID(Author),id,name,orcid,sources:string[],affiliations:string[]") as authors:
            index = self._author_index
            for author_id, (name, orcid, sources, affiliations) in self._authors.items():
                # authors.row(...) written out, as for papers (sources is always a list); no affiliations: an
                # empty cell, no property, as the transactional upsert leaves it
                authors.line(f"{index[author_id]},{_quoted(author_id)},{_quoted(name)},{_quoted(orcid)},"
                             f"{_quoted(ARRAY_DELIMITER.join(sources))},"
                             f"{_quoted(ARRAY_DELIMITER.join(affiliations)) if affiliations else ''}")
                staged.empty_sources += not sources
        with table("nodes", "Venue", "venues", ":ID(Venue),id,name") as venues:
            for venue_id, name in self._venues.items():
                venues.row(self._venue_index[venue_id], venue_id, name)
        with table("nodes", "PaperAlias", "aliases", ":ID(PaperAlias),id,paperId") as aliases:
            for n, (alias, paper_id) in enumerate(self._aliases.items()):
                aliases.row(n, alias, paper_id)
        tables += [authors, venues, aliases]  # the tables with text; the others hold only numbers
        staged.multiline_rows = sum(t.multiline_rows for t in tables)
        staged.authors, staged.venues, staged.aliases = len(self._authors), len(self._venues), len(self._aliases)
        staged.citations = self._write_citations(table("relationships", "CITES", "cites",
                                                       ":START_ID(Paper),:END_ID(Paper)"), quiet)
        return files, staged

    def _write_paper(self, papers: _CsvTable, idx: int, record: list) -> None:
        flags = self._flags[idx]
        papers.line(paper_line(idx, record, bool(flags & _STUB), self.ingested_at if flags & _INGESTED else None))

    def _write_citations(self, cites: _CsvTable, quiet: bool) -> int:
        pairs = np.fromfile(self._cites_path, dtype=np.int32).astype(np.int64).reshape(-1, 2)
        if self._folded_into:
            # A folded paper's citations belong to the paper it was folded into (folds may chain).
            final = np.arange(len(self._offsets), dtype=np.int64)
            for old in self._folded_into:
                target = old
                while target in self._folded_into:
                    target = self._folded_into[target]
                final[old] = target
            pairs = final[pairs]
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        n_papers = max(len(self._offsets), 1)
        keys = pairs[:, 0] * n_papers + pairs[:, 1]
        keys.sort()  # a sort and a neighbour test: several times faster than np.unique's hashing here
        if len(keys):
            keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
        with cites:
            bar = progress(total=len(keys), desc="import files: citations", unit="edge", quiet=quiet)
            for start in range(0, len(keys), 1_000_000):
                chunk = keys[start:start + 1_000_000]
                cites.raw_lines([f"{a},{b}" for a, b in zip((chunk // n_papers).tolist(),
                                                            (chunk % n_papers).tolist())])
                bar.update(len(chunk))
            bar.close()
        return int(len(keys))

    def close(self) -> None:
        """Remove the staging files. Closing flushes, which fails again after a full disk: what it would
        have flushed is discarded with the files anyway."""
        with contextlib.suppress(OSError):
            self._cites.close()
        self._cites_path.unlink(missing_ok=True)
        self._spill.close()


def _set_position(authors: list, author_id: str, position, overwrite: bool) -> None:
    """MERGE (author)-[r:AUTHORED]->(paper): SET r.position (overwrite) or coalesce(r.position, ...)."""
    for pair in authors:
        if pair[0] == author_id:
            if overwrite or pair[1] is None:
                pair[1] = position
            return
    authors.append([author_id, position])


class _CsvTable:
    """One importer CSV: a header line, then rows. Strings are always quoted (so an empty string stays
    one), None is an empty field (no property), lists join on ARRAY_DELIMITER."""

    def __init__(self, path: Path, header: str):
        self.path = path
        self._fh = open(path, "w", encoding="utf-8", newline="", buffering=1 << 20)
        self._fh.write(header + "\n")
        self.multiline_rows = 0

    def row(self, *values) -> None:
        self.line(",".join(_cell(v) for v in values))

    def line(self, line: str) -> None:
        """One row already formatted as the cells would be."""
        if "\n" in line or "\r" in line:
            self.multiline_rows += 1
        self._fh.write(line + "\n")

    def raw_lines(self, lines: list[str]) -> None:
        if lines:
            self._fh.write("\n".join(lines) + "\n")

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> _CsvTable:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def paper_line(idx: int, record: list, stub: bool, ingested_at: int | None) -> str:
    """The papers.csv row of a spilled record: `_cell` of each column, written out for the types a paper's
    fields have (str or None; the year an int or None; sources a list): a third of the export's time."""
    year, sources = record[_YEAR], record[_SOURCES]
    return (f"{idx},{_quoted(record[_ID])},{_quoted(record[_TITLE])},{_quoted(record[_ABSTRACT])},"
            f"{'' if year is None else year},{_quoted(record[_DOI])},{_quoted(record[_VENUE_ID])},"
            f"{'' if sources is None else _quoted(ARRAY_DELIMITER.join(sources))},{'true' if stub else 'false'},"
            f"{'' if ingested_at is None else ingested_at}")


def _quoted(value: str | None) -> str:
    return "" if value is None else '"' + value.replace('"', '""') + '"'


def _cell(value) -> str:
    if type(value) is str:  # the common case first
        return '"' + value.replace('"', '""') + '"'
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        value = ARRAY_DELIMITER.join(value)
    return '"' + str(value).replace('"', '""') + '"'
