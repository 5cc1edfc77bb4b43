"""Parquet snapshots: the graph exported as plain tables that Spark and `read_snapshot` both read."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

# pyarrow ships no type information; unused-ignore keeps this quiet once setup.cfg's mypy list names it.
import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

from scholargraph.errors import UsageError
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.store import GraphStore

FORMAT = "scholargraph-snapshot"
FORMAT_VERSION = 1
MANIFEST = "_manifest.json"
TABLES = ("papers", "authors", "venues", "authorships", "citations")

# The contract: Spark jobs read these columns by name, so a change here is a new FORMAT_VERSION.
SCHEMAS: dict[str, pa.Schema] = {
    "papers": pa.schema([("id", pa.string()), ("year", pa.int32()), ("stub", pa.bool_()),
                         ("venue_id", pa.string()), ("title", pa.string()), ("abstract", pa.string())]),
    "authors": pa.schema([("id", pa.string()), ("name", pa.string())]),
    "venues": pa.schema([("id", pa.string()), ("name", pa.string())]),
    "authorships": pa.schema([("author_id", pa.string()), ("paper_id", pa.string()), ("position", pa.int32())]),
    "citations": pa.schema([("citing_id", pa.string()), ("cited_id", pa.string())]),
}

_T = TypeVar("_T")
# Id ranges the CLI's and the Spark engine's exports read at once (bench/export.py, ACM-CR's 109k papers on 2
# cores with the server beside: 0.34x the serial time from a cold page cache; warm, the one client process's
# decoding bounds both, 0.83-0.95x): on a larger server the ranges keep its cores and disks busy.
EXPORT_WORKERS = 4

# Rows buffered before they become one row group: bounds memory per table whatever rows_per_file is.
_BATCH_ROWS = 50_000


class _TableWriter:
    """Rows of one table into DIR/<table>/part-NNNNN.parquet, a new part every `rows_per_file` rows."""

    def __init__(self, root: Path, table: str, rows_per_file: int, batch_rows: int = _BATCH_ROWS, prefix: str = ""):
        self.root = root
        self.table = table
        self.prefix = prefix  # "r0003-": the parts of one id range of a parallel export
        self.schema = SCHEMAS[table]
        self.rows_per_file = rows_per_file
        self.batch_rows = max(1, min(batch_rows, rows_per_file))
        self.parts: list[str] = []
        self.rows = 0
        self._buffer: list[tuple] = []
        self._writer: pq.ParquetWriter | None = None
        self._in_part = 0
        (root / table).mkdir(parents=True, exist_ok=True)

    def _flush_at(self) -> int:
        return min(self.batch_rows, self.rows_per_file - self._in_part)

    def add(self, row: tuple) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= self._flush_at():
            self._flush()

    def extend(self, rows: list[tuple]) -> None:
        """Many rows at once (a page's citations): one call instead of one per row."""
        self._buffer.extend(rows)
        while self._buffer and len(self._buffer) >= self._flush_at():
            self._flush()

    def _open(self) -> pq.ParquetWriter:
        rel = f"{self.table}/part-{self.prefix}{len(self.parts):05d}.parquet"
        self.parts.append(rel)
        # Page checksums: without them a damaged byte in a part can read back as a wrong value, not an error.
        return pq.ParquetWriter(self.root / rel, self.schema, write_page_checksum=True)

    def _flush(self) -> None:
        if not self._buffer:
            return
        # At most what fits the current part; the rest waits for the next flush.
        take = self._flush_at()
        rows, self._buffer = self._buffer[:take], self._buffer[take:]
        # One comprehension per column: zip(*rows) over 50,000 rows is six times slower.
        batch = pa.Table.from_arrays([pa.array([row[k] for row in rows], type=f.type)
                                      for k, f in enumerate(self.schema)], schema=self.schema)
        if self._writer is None:
            self._writer = self._open()
        self._writer.write_table(batch)
        self.rows += len(rows)
        self._in_part += len(rows)
        if self._in_part >= self.rows_per_file:
            self._writer.close()
            self._writer, self._in_part = None, 0

    def close(self, allow_empty: bool = False) -> list[str]:
        while self._buffer:
            self._flush()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if not self.parts and not allow_empty:
            # An empty part still carries the schema: spark.read.parquet(DIR/table) never fails on it.
            self._open().close()
        return self.parts

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class _Tables:
    """The writers of one export: per table, one writer per id range (range k's parts named part-rKKKK-*), so
    that parallel range reads write side by side; the manifest lists the parts in range order, which is id
    order, as a serial export writes them."""

    def __init__(self, root: Path, rows_per_file: int, ranges: int):
        self.root = root
        self.rows_per_file = rows_per_file
        self.ranges = ranges
        self._writers: dict[tuple[str, int], _TableWriter] = {}

    def writer(self, table: str, k: int = 0) -> _TableWriter:
        key = (table, k)
        if key not in self._writers:
            prefix = f"r{k:04d}-" if self.ranges > 1 else ""
            self._writers[key] = _TableWriter(self.root, table, self.rows_per_file, prefix=prefix)
        return self._writers[key]

    def close(self) -> tuple[dict[str, list[str]], dict[str, int]]:
        """(parts, rows) per table; a table without rows gets one empty part that carries its schema."""
        parts: dict[str, list[str]] = {}
        rows: dict[str, int] = {}
        for table in TABLES:
            mine = sorted((k, w) for (t, k), w in self._writers.items() if t == table)
            parts[table] = [rel for _, w in mine for rel in w.close(allow_empty=True)]
            rows[table] = sum(w.rows for _, w in mine)
            if not parts[table]:
                parts[table] = self.writer(table, self.ranges).close()
        return parts, rows

    def abort(self) -> None:
        for w in self._writers.values():
            w.abort()


def graph_version(stats: dict, watermark: int) -> str:
    """A digest of the store's counts and the watermark: two exports with the same one saw the same graph
    state (as far as counts and the clock tell)."""
    blob = json.dumps({"stats": stats, "watermark": watermark}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def check_target(out_dir: Path, overwrite: bool = False) -> None:
    """Refuse (UsageError) a target that `export_parquet` would refuse, before any work is done."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"{out_dir} exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()):
        if not overwrite:
            raise UsageError(f"{out_dir} is not empty (--overwrite replaces an earlier export)")
        # Overwrite replaces an export, never a folder of other things given by mistake.
        read_manifest(out_dir)


def export_parquet(store: GraphStore, out_dir: Path, as_of: int | None = None, with_text: bool = True,
                   rows_per_file: int = 1_000_000, quiet: bool = True, overwrite: bool = False,
                   workers: int = 1) -> dict:
    """Export the graph (as of year `as_of` when given, as `GraphSnapshot.as_of` defines it) to Parquet tables
    under `out_dir` and return the manifest (also written as `out_dir/_manifest.json`).

    Streams through the store's paged reads (those of `GraphSnapshot.from_store`): rows go to Parquet writers
    as they arrive, so memory holds a page and a row group, not the graph. With `as_of`, the ids of the kept
    dated papers and of the undated ones are held as sets (a first papers pass, without text, finds them; the
    citations pass decides which undated papers stay; a second papers pass writes the kept ones; the
    authorships pass keeps the authors of kept papers). The tables are written in a temporary sibling directory that
    is renamed into place at the end: a failed export leaves nothing behind. A non-empty `out_dir` is
    refused unless `overwrite` and it holds an earlier export (UsageError).

    With `workers` > 1 every pass reads `workers` id ranges at once (`store.id_boundaries`), each in its own
    Bolt sessions and to its own part files; the tables are those of a serial export, row for row."""
    out_dir = Path(out_dir)
    if rows_per_file < 1:
        raise UsageError(f"rows_per_file must be at least 1 (got {rows_per_file})")
    if workers < 1:
        raise UsageError(f"workers must be at least 1 (got {workers})")
    check_target(out_dir, overwrite)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.parent / f".{out_dir.name}.tmp-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    writers = _Tables(tmp, rows_per_file, workers)
    try:
        # The watermark is read before the pull: a paper written during the export is newer than it.
        watermark = store.server_time()
        stats = store.stats()
        _pull(store, writers, as_of, with_text, quiet, workers)
        tables, counts = writers.close()
        manifest = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "as_of": as_of,
            "graph_version": graph_version(stats, watermark), "watermark": watermark,
            "exported_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "with_text": bool(with_text), "counts": counts, "tables": tables, "workers": workers,
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        _move_into_place(tmp, out_dir)
    except BaseException:
        writers.abort()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _move_into_place(tmp: Path, out_dir: Path) -> None:
    if not out_dir.exists():
        os.replace(tmp, out_dir)
        return
    if not any(out_dir.iterdir()):
        out_dir.rmdir()
        os.replace(tmp, out_dir)
        return
    # The old export moves aside first, so that out_dir is one export or the other, never a mix.
    old = out_dir.parent / f".{out_dir.name}.old-{uuid.uuid4().hex[:12]}"
    os.replace(out_dir, old)
    os.replace(tmp, out_dir)
    shutil.rmtree(old, ignore_errors=True)


def _ranges(store: GraphStore, label: str, parts: int) -> list[tuple[str, str | None]]:
    """(start, until) id ranges of `label` for `store.pages`: one (everything) for a serial read."""
    bounds = store.id_boundaries(label, parts) if parts > 1 else []
    return list(zip(["", *bounds], [*bounds, None]))


def _in_ranges(ranges: list[tuple[str, str | None]], fn: Callable[[int, str, str | None], _T],
               workers: int) -> list[_T]:
    """fn(k, start, until) for every range, `workers` at a time (each in its own thread and Bolt sessions: the
    server's work and the client's decoding of one range overlap another's); results in range order."""
    if workers <= 1 or len(ranges) <= 1:
        return [fn(k, lo, hi) for k, (lo, hi) in enumerate(ranges)]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="export") as pool:
        futures = [pool.submit(fn, k, lo, hi) for k, (lo, hi) in enumerate(ranges)]
        return [f.result() for f in futures]


def _pull(store: GraphStore, writers: _Tables, as_of: int | None, with_text: bool, quiet: bool,
          workers: int = 1) -> None:
    from scholargraph.progress import progress

    venues = [(rec["id"], rec["name"]) for rec in store.stream("store/snapshot_venues")]
    papers, authors = _ranges(store, "Paper", workers), _ranges(store, "Author", workers)
    counting = threading.Lock()  # one progress bar per pass, updated by every range's thread

    def tick(bar, n: int) -> None:
        with counting:
            bar.update(n)

    def note_venues(found: list[list[str]]) -> None:
        # A paper naming a venue without a node: GraphSnapshot.build adds it without a name, so does the table
        # (in paper id order: the ranges' finds in range order).
        known = {v for v, _ in venues}
        for venue in (v for part in found for v in part):
            if venue not in known:
                known.add(venue)
                venues.append((venue, None))

    def paper_pages(bar, lo: str, hi: str | None, text: bool) -> Iterator[list]:
        for page in store.pages("store/snapshot_papers", start=lo, until=hi, withText=text):
            yield page
            tick(bar, len(page))

    def write_papers(bar, k: int, lo: str, hi: str | None, keep: set[str] | None) -> list[str]:
        out, found = writers.writer("papers", k), []
        for page in paper_pages(bar, lo, hi, with_text):
            for pid, year, stub, venue, title, abstract in page:
                if venue:
                    found.append(venue)
                if keep is None or pid in keep:
                    out.add((pid, year, bool(stub), venue, title if with_text else None,
                             abstract if with_text else None))
        return found

    keep: set[str] | None = None
    if as_of is None:
        with progress(desc="export papers", unit="paper", quiet=quiet) as bar:
            note_venues(_in_ranges(papers, lambda k, lo, hi: write_papers(bar, k, lo, hi, None), workers))

        def write_citations(bar, k: int, lo: str, hi: str | None) -> None:
            for page in store.pages("store/snapshot_citations", start=lo, until=hi):
                writers.writer("citations", k).extend([(citing, target) for citing, cited in page
                                                       for target in cited if target != citing])
                tick(bar, len(page))

        with progress(desc="export citations", unit="paper", quiet=quiet) as bar:
            _in_ranges(papers, lambda k, lo, hi: write_citations(bar, k, lo, hi), workers)
    else:
        def dates(bar, lo: str, hi: str | None) -> tuple[set[str], set[str], list[str]]:
            dated: set[str] = set()
            undated: set[str] = set()
            found = []
            for page in paper_pages(bar, lo, hi, False):
                for pid, year, _stub, venue, _title, _abstract in page:
                    if venue:
                        found.append(venue)
                    if year is None:
                        undated.add(pid)
                    elif year <= as_of:
                        dated.add(pid)
            return dated, undated, found

        with progress(desc="export papers (as of)", unit="paper", quiet=quiet) as bar:
            parts = _in_ranges(papers, lambda k, lo, hi: dates(bar, lo, hi), workers)
        dated = set().union(*(d for d, _, _ in parts))
        undated = set().union(*(u for _, u, _ in parts))
        note_venues([found for _, _, found in parts])
        del parts

        def cut_citations(bar, k: int, lo: str, hi: str | None) -> set[str]:
            cited_undated: set[str] = set()
            for page in store.pages("store/snapshot_citations", start=lo, until=hi):
                for citing, cited in page:
                    # Undated papers cite nothing as of T: their references are unknown in time.
                    if citing not in dated:
                        continue
                    kept = [t for t in cited if t != citing and (t in dated or t in undated)]
                    cited_undated.update(t for t in kept if t in undated)
                    writers.writer("citations", k).extend([(citing, t) for t in kept])
                tick(bar, len(page))
            return cited_undated

        with progress(desc="export citations", unit="paper", quiet=quiet) as bar:
            cited_undated = set().union(*_in_ranges(papers, lambda k, lo, hi: cut_citations(bar, k, lo, hi),
                                                    workers))
        keep = dated | cited_undated
        del dated, undated, cited_undated
        with progress(desc="export papers", unit="paper", quiet=quiet) as bar:
            _in_ranges(papers, lambda k, lo, hi: write_papers(bar, k, lo, hi, keep), workers)

    def write_authors(bar, k: int, lo: str, hi: str | None) -> None:
        for page in store.pages("store/snapshot_authorships", start=lo, until=hi):
            for aid, name, written in page:
                if keep is not None:
                    written = [(pid, pos) for pid, pos in written if pid in keep]
                    if not written:
                        continue  # as of T an author exists through a kept paper only
                writers.writer("authors", k).add((aid, name))
                writers.writer("authorships", k).extend([(aid, pid, pos) for pid, pos in written])
            tick(bar, len(page))

    with progress(desc="export authors", unit="author", quiet=quiet) as bar:
        _in_ranges(authors, lambda k, lo, hi: write_authors(bar, k, lo, hi), workers)
    for row in venues:
        writers.writer("venues").add(row)


# --- reading ------------------------------------------------------------------------------------------------


def read_manifest(in_dir: Path) -> dict:
    """The manifest of an export directory; UsageError when `in_dir` holds no export this version reads."""
    path = Path(in_dir) / MANIFEST
    if not path.is_file():
        raise UsageError(f"{in_dir} is not a scholargraph snapshot (no {MANIFEST})")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path} is not a valid snapshot manifest: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise UsageError(f"{path} is not a scholargraph snapshot manifest (format is not {FORMAT!r})")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise UsageError(f"{path}: snapshot format_version {manifest.get('format_version')!r} is not supported "
                         f"(this version reads {FORMAT_VERSION})")
    tables = manifest.get("tables")
    if not isinstance(tables, dict) or any(not isinstance(tables.get(t), list) for t in TABLES):
        raise UsageError(f"{path} does not list the parts of every table ({', '.join(TABLES)})")
    return manifest


def _batches(in_dir: Path, manifest: dict, table: str, columns: list[str] | None) -> Iterator[pa.RecordBatch]:
    """The record batches of a table, part by part in manifest order. A missing or damaged part (truncated, a
    failed page checksum, fewer rows than the manifest counts) is a UsageError naming it and saying to export
    again: never a table that silently lacks rows or holds a changed value."""
    again = f"export the snapshot again (`scholargraph export parquet {in_dir} --overwrite`)"
    seen = 0
    for rel in manifest["tables"][table]:
        path = in_dir / rel
        if not path.is_file():
            raise UsageError(f"{in_dir}: part file {rel} listed in the manifest is missing: {again}")
        try:
            parquet = pq.ParquetFile(path, page_checksum_verification=True)
        except (OSError, pa.ArrowException) as exc:
            raise UsageError(f"{path} is damaged ({str(exc).splitlines()[0]}): {again}") from exc
        try:
            batches = parquet.iter_batches(batch_size=_BATCH_ROWS, columns=columns)
            while True:
                try:
                    batch = next(batches, None)
                except (OSError, pa.ArrowException) as exc:
                    raise UsageError(f"{path} is damaged ({str(exc).splitlines()[0]}): {again}") from exc
                if batch is None:
                    break
                seen += batch.num_rows
                yield batch
        finally:
            parquet.close()
    expected = manifest.get("counts", {}).get(table) if isinstance(manifest.get("counts"), dict) else None
    if isinstance(expected, int) and expected != seen:
        raise UsageError(f"{in_dir}: the {table} parts hold {seen:,} rows, the manifest counts {expected:,}: {again}")


def _rows(in_dir: Path, manifest: dict, table: str, columns: list[str]) -> Iterator[tuple]:
    """The rows of a table, part by part in manifest order, row order preserved (`_batches` checks them)."""
    for batch in _batches(in_dir, manifest, table, columns):
        yield from zip(*(batch.column(c).to_pylist() for c in columns), strict=True)


def verify_snapshot(in_dir: Path) -> dict:
    """Read every page of every part of an export (checksums verified, rows counted against the manifest) and
    return its manifest; UsageError naming the first missing or damaged part. For readers that do not go
    through `read_snapshot` (Spark reads the parts itself, without page checksums by default): run before
    them, so that a damaged export stops a command before it computes or writes anything."""
    in_dir = Path(in_dir)
    manifest = read_manifest(in_dir)
    for table in TABLES:
        for _ in _batches(in_dir, manifest, table, None):
            pass
    return manifest


def read_snapshot(in_dir: Path, with_text: bool = True) -> GraphSnapshot:
    """The GraphSnapshot of an export (`GraphSnapshot.build` over its tables, in file and row order).

    For a full export, the result equals `GraphSnapshot.from_store(store, with_text=True)` of the store it
    came from (or `with_text=False` when the export or this call has no text): same order of papers,
    authors and venues, same matrices. For an export `as_of=T` it equals `from_store(...).as_of(T)`, here also
    in the same order (papers in id order, authors in the store's order; `extra["as_of"]` is T), though
    readers should align by id rather than rely on it: the contract promises the same ids and edges. (A cut
    that keeps no paper reads with texts None where `as_of` keeps empty lists.)"""
    in_dir = Path(in_dir)
    manifest = read_manifest(in_dir)
    text = with_text and bool(manifest.get("with_text"))
    papers: list[dict] = []
    columns = ["id", "year", "stub", "venue_id"] + (["title", "abstract"] if text else [])
    for row in _rows(in_dir, manifest, "papers", columns):
        paper = {"id": row[0], "year": row[1], "stub": row[2], "venue": row[3]}
        if text:
            paper["title"], paper["abstract"] = row[4], row[5]
        papers.append(paper)
    venues = [(v, n) for v, n in _rows(in_dir, manifest, "venues", ["id", "name"])]
    authors = [(a, n) for a, n in _rows(in_dir, manifest, "authors", ["id", "name"])]
    authorships: Iterable[tuple] = _rows(in_dir, manifest, "authorships", ["author_id", "paper_id", "position"])
    citations: Iterable[tuple] = _rows(in_dir, manifest, "citations", ["citing_id", "cited_id"])
    snapshot = GraphSnapshot.build(papers, authorships, citations, venues=venues, authors=authors)
    if manifest.get("as_of") is not None:
        snapshot.extra["as_of"] = manifest["as_of"]
    return snapshot
