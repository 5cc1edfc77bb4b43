"""Batching, checkpoints, quarantine, provenance and progress between parsers and the store."""

from __future__ import annotations

import collections
import gc
import hashlib
import itertools
import json
import marshal
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from scholargraph.errors import InvalidRecord, naming_disk_full
from scholargraph.graph.ids import MAX_EXAMPLES
from scholargraph.graph.records import PaperBundle, RawRecord
from scholargraph.graph.store import BatchRows, WriteCounts
from scholargraph.ingest import sources
from scholargraph.ingest.normalize import NOTICES, Dropped, iter_raw, normalize
from scholargraph.progress import progress
from scholargraph.registry import write_atomically

CHECKPOINT_VERSION = 1


class BundleWriter(Protocol):
    """What the loader needs from a store (Neo4jStore, InMemoryStore and BulkStaging satisfy it)."""

    def write_rows(self, rows: BatchRows) -> WriteCounts: ...


@dataclass
class IngestSummary:
    files: int = 0
    files_skipped: int = 0  # finished in an earlier run (checkpoint), not read again
    read: int = 0
    resumed_past: int = 0  # records skipped because an interrupted run had committed them
    written: int = 0
    created: int = 0
    merged: int = 0
    stubs_created: int = 0
    stubs_filled: int = 0
    authorships: int = 0
    citations: int = 0
    quarantined: int = 0
    dropped: int = 0
    seconds: float = 0.0
    quarantine_reasons: Counter = field(default_factory=Counter)
    drop_reasons: Counter = field(default_factory=Counter)
    quarantine_file: str = ""
    # What the normaliser read in an unusual way and kept (normalize.NOTICES): counts and the first examples.
    notices: Counter = field(default_factory=Counter)
    notice_examples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def bad_ratio(self) -> float:
        return self.quarantined / self.read if self.read else 0.0

    @property
    def rate(self) -> float:
        return self.read / self.seconds if self.seconds > 0 else 0.0

    def lines(self) -> list[str]:
        out = [
            f"files      {self.files} read" + (f", {self.files_skipped} already done (--restart to redo)"
                                               if self.files_skipped else ""),
            f"records    {self.read:,} read" + (f" (+{self.resumed_past:,} committed by an earlier run)"
                                                  if self.resumed_past else ""),
            f"papers     {self.written:,} written ({self.created:,} new, {self.merged:,} merged across sources)",
            f"edges      {self.authorships:,} authorships, {self.citations:,} citations",
            f"stubs      {self.stubs_created:,} created, {self.stubs_filled:,} filled",
            f"dropped    {self.dropped:,}" + _reasons(self.drop_reasons),
            f"quarantine {self.quarantined:,} ({self.bad_ratio:.2%})" + _reasons(self.quarantine_reasons)
            + (f" -> {self.quarantine_file}" if self.quarantined else ""),
            f"rate       {self.rate:,.0f} records/s over {self.seconds:.1f}s",
        ]
        for kind, n in self.notices.items():
            label, what = NOTICES.get(kind, (kind, "record(s)"))
            shown = self.notice_examples.get(kind, [])
            more = f" and {n - len(shown):,} more" if n > len(shown) else ""
            out.append(f"{label:<10} {n:,} {what}: e.g. {', '.join(shown)}{more}")
        return out

    def add_notes(self, noted: Sequence[Sequence[str]]) -> None:
        for kind, where in noted:
            self.notices[kind] += 1
            shown = self.notice_examples.setdefault(kind, [])
            if len(shown) < MAX_EXAMPLES:
                shown.append(where)


def _reasons(counter: Counter) -> str:
    if not counter:
        return ""
    return ": " + ", ".join(f"{reason} {n:,}" for reason, n in counter.most_common(5))


def _category(reason: str) -> str:
    return reason.split(":", 1)[0].strip() or "unknown"


# --- checkpoints ----------------------------------------------------------------------------------


class Checkpoint:
    """Per-command progress: for each input, how many raw records are committed, and the size of
    the quarantine file at that moment (so a resumed run can drop quarantine lines it will redo)."""

    def __init__(self, path: Path, key: str, target: str = ""):
        self.path = path
        self.key = key
        self.state: dict = {"version": CHECKPOINT_VERSION, "key": key, "files": {}, "quarantine_offset": None,
                            "target": target}

    @classmethod
    def for_command(cls, directory: Path, fmt: str, inputs: Sequence[str], quarantine: Path,
                    target: str = "") -> Checkpoint:
        """One checkpoint per command: format, inputs, quarantine file and target database (the same
        dump loaded into another Neo4j starts from the beginning there)."""
        ident = json.dumps([fmt, [os.path.abspath(p) for p in inputs], str(quarantine.resolve())]
                           + ([target] if target else []))
        key = hashlib.sha256(ident.encode()).hexdigest()[:16]
        return cls(directory / f"ingest-{fmt}-{key}.json", key, target)

    @staticmethod
    def forget_target(directory: Path, target: str) -> int:
        """Delete the checkpoints of every ingest into `target` (its database was replaced or emptied, so
        what they say is committed is gone); returns how many."""
        forgotten = 0
        for path in directory.glob("ingest-*.json"):
            try:
                state = json.loads(path.read_text())
                if isinstance(state, dict) and state.get("target") == target:
                    path.unlink()
                    forgotten += 1
            except (OSError, ValueError):
                continue
        return forgotten

    def load(self) -> bool:
        """Whether a checkpoint of this command was read. A damaged one (truncated, not JSON, fields of the
        wrong type) raises DamagedCheckpoint: the caller starts over, which idempotent writes make safe."""
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise DamagedCheckpoint(self.path, exc.strerror or str(exc)) from exc
        try:
            state = json.loads(text.decode("utf-8"))
        except ValueError as exc:
            raise DamagedCheckpoint(self.path, str(exc).splitlines()[0]) from exc
        if not isinstance(state, dict) or state.get("version") != CHECKPOINT_VERSION:
            raise DamagedCheckpoint(self.path, "not a version-1 checkpoint")
        if state.get("key") != self.key:
            return False
        if not _valid_checkpoint(state):
            raise DamagedCheckpoint(self.path, "fields of the wrong type")
        self.state = state
        return True

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)

    def file_entry(self, path: str) -> dict | None:
        entry = self.state["files"].get(os.path.abspath(path))
        if entry is None or path == sources.STDIN:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        # A file that changed since the checkpoint is read again from the start.
        if entry.get("size") != st.st_size or entry.get("mtime_ns") != st.st_mtime_ns:
            return None
        return entry

    def commit(self, path: str, done: int, finished: bool, quarantine_offset: int) -> None:
        if path == sources.STDIN:
            return
        st = os.stat(path)
        self.state["files"][os.path.abspath(path)] = {
            "size": st.st_size, "mtime_ns": st.st_mtime_ns, "done": done, "finished": finished}
        self.state["quarantine_offset"] = quarantine_offset
        # Atomic: a kill or a full disk leaves the old checkpoint or the new one, never half of one.
        write_atomically(self.path, json.dumps(self.state).encode("utf-8"))


class DamagedCheckpoint(Exception):
    """A checkpoint file that cannot be trusted; `ingest` warns and reads every input from the start."""

    def __init__(self, path: Path, reason: str):
        self.path = path
        super().__init__(f"warning: the checkpoint {path} is damaged ({reason}): reading every input from the "
                         "start (writes are idempotent, so nothing is written twice)")


def _valid_checkpoint(state: dict) -> bool:
    files = state.get("files")
    offset = state.get("quarantine_offset")
    if not isinstance(files, dict) or not (offset is None or (type(offset) is int and offset >= 0)):
        return False
    return all(isinstance(e, dict) and type(e.get("done")) is int and e["done"] >= 0
               and isinstance(e.get("finished"), bool) for e in files.values())


# --- quarantine -------------------------------------------------------------------------------------


class Quarantine:
    """Append-only JSONL of rejected records: file, line, reason, raw excerpt, format."""

    def __init__(self, path: Path, fmt: str):
        self.path = path
        self.fmt = fmt
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "ab", buffering=0)  # write() goes straight to the file (see write)

    def truncate(self, offset: int) -> None:
        self._fh.flush()
        if offset < self.offset():
            self._fh.truncate(offset)
        self._fh.seek(0, os.SEEK_END)

    def offset(self) -> int:
        self._fh.flush()
        return self._fh.seek(0, os.SEEK_END)

    def write(self, entries: list[dict]) -> int:
        """Append `entries` whole or not at all: on a full disk the file is cut back to where it was, so that
        no half line is left for the next run to append after (it re-reads these records: no checkpoint
        covers them)."""
        if not entries:
            return self.offset()
        start = self.offset()
        blob = b"".join((json.dumps(e, ensure_ascii=False) + "\n").encode("utf-8", "replace") for e in entries)
        try:
            with naming_disk_full(self.path):
                view = memoryview(blob)
                fd = self._fh.fileno()
                while view:  # unbuffered: a failed write leaves nothing in a buffer for close() to retry
                    view = view[os.write(fd, view):]
                os.fsync(fd)
        except BaseException:
            os.ftruncate(self._fh.fileno(), start)  # shrinking needs no space
            raise
        return self.offset()

    def close(self) -> None:
        self._fh.close()


# --- the loader -------------------------------------------------------------------------------------


@dataclass
class _Batch:
    seq: int
    path: str
    rows: BatchRows | None  # the batch's bundles, flattened for the writer (None: no bundles)
    rejected: list[dict]
    done: int  # raw records of this file consumed up to the end of this batch
    finished: bool


def default_parse_workers(cap: int = 4) -> int:
    """One worker per CPU this process may use, at most `cap`; none on one CPU. The thread that reads and
    stages needs about half of what a worker does per record (bench/ingest.py), so on 2 CPUs two workers
    beside it keep both busy, where one would leave the reader waiting."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return 0 if cpus < 2 else min(cap, cpus)


def count_records(fmt: str, path: str) -> int | None:
    """A cheap record count for the progress bar's ETA (plain files only; None when unknown)."""
    if path == sources.STDIN or path.endswith(".gz"):
        return None
    try:
        with open(path, "rb") as fh:
            if fmt == "bibtex":
                return sum(1 for line in fh if line.lstrip().startswith(b"@"))
            head = fh.read(1)
            if head == b"[":
                return None  # a JSON array: records are not lines
            fh.seek(0)
            return sum(1 for line in fh if line.strip())
    except OSError:
        return None


def ingest(writer: BundleWriter, fmt: str, paths: Sequence[str], *, quarantine_path: Path,
           checkpoint_dir: Path, batch_size: int = 5000, restart: bool = False, quiet: bool = False,
           writers: int = 1, on_batch: Callable[[IngestSummary], None] | None = None,
           target: str = "", parse_workers: int = 0, warn: Callable[[str], None] | None = None) -> IngestSummary:
    """Stream `paths` in format `fmt` into `writer`, resumably. Bad records go to quarantine.

    Parsing runs on this thread; normalising too, or in `parse_workers` processes (each batch's raw
    records go to one, its flattened rows come back, batches stay in order), while `writers` threads
    write earlier batches in concurrent transactions, so the parser and Neo4j's cores work at the same
    time; at most 2 * writers + 1 batches wait for a writer. Idempotent MERGEs make concurrent batches
    safe (a lock conflict between them is retried by the driver's managed transactions). The workers are
    spawned, so a script that calls this with `parse_workers` needs an `if __name__ == "__main__":` guard,
    as for any multiprocessing code (the CLI has one).
    """
    inputs = sources.expand_inputs(list(paths))
    summary = IngestSummary(quarantine_file=str(quarantine_path))
    checkpoint = Checkpoint.for_command(checkpoint_dir, fmt, inputs, quarantine_path, target)
    if restart:
        checkpoint.clear()
    try:
        resumed = checkpoint.load()
    except DamagedCheckpoint as damaged:
        if warn is not None:
            warn(str(damaged))
        checkpoint.clear()
        resumed = False
    quarantine = Quarantine(quarantine_path, fmt)
    if resumed and checkpoint.state.get("quarantine_offset") is not None:
        # Lines written after the last checkpoint belong to records this run reads again.
        quarantine.truncate(int(checkpoint.state["quarantine_offset"]))
    t0 = time.perf_counter()
    pending: queue.Queue[_Batch | None] = queue.Queue(maxsize=writers)
    failure: list[BaseException] = []
    lock = threading.Lock()
    finished: dict[int, _Batch] = {}
    next_to_commit = [0]

    def commit_in_order(batch: _Batch, counts) -> None:
        """Checkpoints advance only over a contiguous run of written batches, so a resume after a
        crash never skips a batch that another writer had not finished."""
        with lock:
            if counts is not None:
                summary.written += counts.papers
                summary.created += counts.papers_created
                summary.merged += counts.merged
                summary.stubs_created += counts.stubs_created
                summary.stubs_filled += counts.stubs_filled
                summary.authorships += counts.authorships
                summary.citations += counts.citations
            finished[batch.seq] = batch
            while next_to_commit[0] in finished:
                ready = finished.pop(next_to_commit[0])
                offset = quarantine.write(ready.rejected)
                checkpoint.commit(ready.path, ready.done, ready.finished, offset)
                next_to_commit[0] += 1
            if on_batch is not None:
                on_batch(summary)

    def write_loop() -> None:
        while True:
            batch = pending.get()
            if batch is None:
                return
            if failure:
                continue  # drain after an error; nothing more is committed
            try:
                counts = writer.write_rows(batch.rows) if batch.rows is not None else None
                commit_in_order(batch, counts)
            except BaseException as exc:  # surfaced on the main thread
                failure.append(exc)

    threads = [threading.Thread(target=write_loop, name=f"scholargraph-writer-{i}", daemon=True)
               for i in range(writers)]
    for thread in threads:
        thread.start()
    sequence = itertools.count()
    pool = _ParsePool(fmt, parse_workers) if parse_workers > 0 else _InlineParse(fmt)
    try:
        for path in inputs:
            if failure:
                break
            entry = checkpoint.file_entry(path)
            if entry and entry.get("finished"):
                summary.files_skipped += 1
                continue
            summary.files += 1
            skip = int(entry["done"]) if entry else 0
            _ingest_file(fmt, path, skip, batch_size, summary, pending, failure, quiet, sequence, pool)
    finally:
        pool.shutdown(cancel_futures=True)
        for _ in threads:
            pending.put(None)
        for thread in threads:
            thread.join()
        quarantine.close()
        summary.seconds = time.perf_counter() - t0
    if failure:
        raise failure[0]
    return summary


def _ingest_file(fmt: str, path: str, skip: int, batch_size: int, summary: IngestSummary,
                 pending: queue.Queue, failure: list, quiet: bool, sequence: Iterator[int],
                 pool: _InlineParse | _ParsePool) -> None:
    total = count_records(fmt, path)
    name = "stdin" if path == sources.STDIN else os.path.basename(path)
    bar = progress(total=total, desc=f"{fmt} {name}", unit="rec", quiet=quiet)
    chunk: list[RawRecord] = []
    consumed = 0

    def hand_on(normalized: _Normalized, done: int, finished: bool) -> None:
        summary.quarantined += len(normalized.rejected)
        summary.quarantine_reasons.update(_category(r["reason"]) for r in normalized.rejected)
        summary.dropped += len(normalized.dropped)
        summary.drop_reasons.update(normalized.dropped)
        summary.add_notes(normalized.noted)
        pending.put(_Batch(next(sequence), path, normalized.rows, normalized.rejected, done, finished))

    try:
        for raw in iter_raw(fmt, path):
            consumed += 1
            bar.update(1)
            if consumed <= skip:
                summary.resumed_past += 1
                continue
            summary.read += 1
            chunk.append(raw)
            if len(chunk) >= batch_size:
                if failure:
                    return
                for normalized, done in pool.submit(chunk, consumed):
                    hand_on(normalized, done, False)
                chunk = []
        last = [*pool.submit(chunk, consumed), *pool.drain()]
        for i, (normalized, done) in enumerate(last):
            hand_on(normalized, done, i == len(last) - 1)
    finally:
        bar.close()


@dataclass
class _Normalized:
    """A batch of raw records, normalised: the rows of its bundles, its quarantined and dropped records, and what
    the normaliser noted about the records it kept."""

    rows: BatchRows | None
    rejected: list[dict]
    dropped: list[str]  # the category of each dropped record
    noted: list[tuple[str, str]] = field(default_factory=list)  # (normalize.NOTICES kind, "file:line")

    def dumps(self) -> bytes:
        """marshal: several times faster than pickle for these plain dicts and lists."""
        return marshal.dumps((self.rows.__dict__ if self.rows is not None else None, self.rejected, self.dropped,
                              self.noted))

    @classmethod
    def loads(cls, blob: bytes) -> _Normalized:
        rows, rejected, dropped, noted = marshal.loads(blob)
        return cls(BatchRows(**rows) if rows is not None else None, rejected, dropped, noted)


def _normalize(fmt: str, records: Sequence[RawRecord]) -> _Normalized:
    bundles: list[PaperBundle] = []
    rejected: list[dict] = []
    dropped: list[str] = []
    noted: list[tuple[str, str]] = []
    said: list[tuple[str, str]] = []  # what normalize notes about the record at hand
    for raw in records:
        try:
            bundles.append(normalize(fmt, raw, said))
            noted += said  # a record quarantined or dropped is counted there, not here
        except InvalidRecord as bad:
            rejected.append({"file": bad.source, "line": bad.line, "reason": bad.reason,
                             "format": fmt, "excerpt": (bad.raw or "")[:500]})
        except Dropped as drop:
            dropped.append(_category(drop.reason))
        finally:
            said.clear()
    return _Normalized(BatchRows.from_bundles(bundles) if bundles else None, rejected, dropped, noted)


def _normalize_in_worker(fmt: str, source: str, blob: bytes) -> bytes:
    """A parse worker's task: raw records (line, data, error, excerpt) in, a marshalled _Normalized out."""
    records = [RawRecord(source=source, line=line, data=data, error=error, excerpt=excerpt)
               for line, data, error, excerpt in marshal.loads(blob)]
    return _normalize(fmt, records).dumps()


class _InlineParse:
    """_ParsePool's interface with no workers: each batch is normalised on this thread as it is submitted."""

    def __init__(self, fmt: str):
        self.fmt = fmt

    def submit(self, records: Sequence[RawRecord], done: int) -> list[tuple[_Normalized, int]]:
        return [(_normalize(self.fmt, records), done)]

    def drain(self) -> list[tuple[_Normalized, int]]:
        return []

    def shutdown(self, cancel_futures: bool = False) -> None:
        pass


class _ParsePool:
    """Normalising in worker processes: the main thread reads and batches the raw records, each batch
    is normalised and flattened in a worker, and results come back in submission order (so checkpoints,
    quarantine lines and the writer see the batches exactly as without workers). At most `workers + 1`
    batches are in flight. Spawned processes: the loader's threads (writers, the driver's) are never
    forked."""

    def __init__(self, fmt: str, workers: int):
        import concurrent.futures
        import multiprocessing

        self.fmt = fmt
        self.window = workers + 1
        # No cyclic collector in the workers: their records hold no cycles, and its full passes over the
        # normaliser's caches (lru_cache nodes) cost a third of a worker's time (12.8 s against 8.2 s per
        # 100k AMiner records). Reference counting frees each batch as before.
        self._executor = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=gc.disable)
        self._in_flight: collections.deque = collections.deque()

    def submit(self, records: Sequence[RawRecord], done: int) -> list[tuple[_Normalized, int]]:
        """Queue one batch (`done`: records of the file consumed up to its end); returns the batches
        that finished meanwhile, oldest first, once the window is full."""
        source = records[0].source if records else ""
        try:
            blob = marshal.dumps([(r.line, r.data, r.error, r.excerpt) for r in records])
        except ValueError:  # a value marshal cannot carry (no parser makes one): normalise here
            self._in_flight.append((None, _normalize(self.fmt, records), done))
        else:
            self._in_flight.append((self._executor.submit(_normalize_in_worker, self.fmt, source, blob), None,
                                    done))
        out = []
        while len(self._in_flight) > self.window:
            out.append(self._pop())
        return out

    def drain(self) -> list[tuple[_Normalized, int]]:
        return [self._pop() for _ in range(len(self._in_flight))]

    def _pop(self) -> tuple[_Normalized, int]:
        future, local, done = self._in_flight.popleft()
        return (local if future is None else _Normalized.loads(future.result())), done

    def shutdown(self, cancel_futures: bool = False) -> None:
        self._in_flight.clear()
        self._executor.shutdown(wait=True, cancel_futures=cancel_futures)
