"""Batching, checkpoints, quarantine, provenance and progress between parsers and the store."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from scholargraph.errors import InvalidRecord
from scholargraph.graph.records import PaperBundle
from scholargraph.ingest import sources
from scholargraph.ingest.normalize import Dropped, iter_raw, normalize
from scholargraph.progress import progress

CHECKPOINT_VERSION = 1


class BundleWriter(Protocol):
    """What the loader needs from a store (Neo4jStore satisfies it)."""

    def write_bundles(self, bundles: Sequence[PaperBundle]): ...


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
        return out


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
                if json.loads(path.read_text()).get("target") == target:
                    path.unlink()
                    forgotten += 1
            except (OSError, ValueError):
                continue
        return forgotten

    def load(self) -> bool:
        try:
            state = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return False
        if state.get("version") != CHECKPOINT_VERSION or state.get("key") != self.key:
            return False
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w") as fh:
            json.dump(self.state, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)  # atomic: a kill leaves the old or the new checkpoint, never half


# --- quarantine -------------------------------------------------------------------------------------


class Quarantine:
    """Append-only JSONL of rejected records: file, line, reason, raw excerpt, format."""

    def __init__(self, path: Path, fmt: str):
        self.path = path
        self.fmt = fmt
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "ab")

    def truncate(self, offset: int) -> None:
        self._fh.flush()
        if offset < self.offset():
            self._fh.truncate(offset)
        self._fh.seek(0, os.SEEK_END)

    def offset(self) -> int:
        self._fh.flush()
        return self._fh.seek(0, os.SEEK_END)

    def write(self, entries: list[dict]) -> int:
        for entry in entries:
            self._fh.write((json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8", "replace"))
        self._fh.flush()
        os.fsync(self._fh.fileno())
        return self.offset()

    def close(self) -> None:
        self._fh.close()


# --- the loader -------------------------------------------------------------------------------------


@dataclass
class _Batch:
    seq: int
    path: str
    bundles: list[PaperBundle]
    rejected: list[dict]
    done: int  # raw records of this file consumed up to the end of this batch
    finished: bool


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
           target: str = "") -> IngestSummary:
    """Stream `paths` in format `fmt` into `writer`, resumably. Bad records go to quarantine.

    Parsing and normalising run on this thread while `writers` threads write earlier batches in
    concurrent transactions, so the parser and Neo4j's cores work at the same time; at most
    2 * writers + 1 batches are in memory. Idempotent MERGEs make concurrent batches safe (a lock
    conflict between them is retried by the driver's managed transactions).
    """
    inputs = sources.expand_inputs(list(paths))
    summary = IngestSummary(quarantine_file=str(quarantine_path))
    checkpoint = Checkpoint.for_command(checkpoint_dir, fmt, inputs, quarantine_path, target)
    if restart:
        checkpoint.clear()
    resumed = checkpoint.load()
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
                counts = writer.write_bundles(batch.bundles) if batch.bundles else None
                commit_in_order(batch, counts)
            except BaseException as exc:  # surfaced on the main thread
                failure.append(exc)

    threads = [threading.Thread(target=write_loop, name=f"scholargraph-writer-{i}", daemon=True)
               for i in range(writers)]
    for thread in threads:
        thread.start()
    sequence = itertools.count()
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
            _ingest_file(fmt, path, skip, batch_size, summary, pending, failure, quiet, sequence)
    finally:
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
                 pending: queue.Queue, failure: list, quiet: bool, sequence: Iterator[int]) -> None:
    total = count_records(fmt, path)
    name = "stdin" if path == sources.STDIN else os.path.basename(path)
    bar = progress(total=total, desc=f"{fmt} {name}", unit="rec", quiet=quiet)
    bundles: list[PaperBundle] = []
    rejected: list[dict] = []
    consumed = 0
    try:
        records: Iterator = iter_raw(fmt, path)
        for raw in records:
            consumed += 1
            if consumed <= skip:
                summary.resumed_past += 1
                bar.update(1)
                continue
            summary.read += 1
            bar.update(1)
            try:
                bundles.append(normalize(fmt, raw))
            except InvalidRecord as bad:
                summary.quarantined += 1
                summary.quarantine_reasons[_category(bad.reason)] += 1
                rejected.append({"file": bad.source, "line": bad.line, "reason": bad.reason,
                                 "format": fmt, "excerpt": (bad.raw or "")[:500]})
            except Dropped as dropped:
                summary.dropped += 1
                summary.drop_reasons[_category(dropped.reason)] += 1
            if len(bundles) >= batch_size or len(rejected) >= batch_size:
                if failure:
                    return
                pending.put(_Batch(next(sequence), path, bundles, rejected, consumed, False))
                bundles, rejected = [], []
        pending.put(_Batch(next(sequence), path, bundles, rejected, consumed, True))
    finally:
        bar.close()
