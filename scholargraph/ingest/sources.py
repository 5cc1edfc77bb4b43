"""Open ingestion inputs: expand paths, read plain or gzipped bytes, stream JSON records."""

from __future__ import annotations

import codecs
import glob
import gzip
import io
import itertools
import json
import os
import re
import stat
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from scholargraph.errors import UsageError
from scholargraph.graph.records import RawRecord

STDIN = "-"
CHUNK_SIZE = 1 << 20
# A JSON record longer than this without closing is treated as corrupt rather than buffered forever.
MAX_RECORD_CHARS = 64 << 20
EXCERPT_CHARS = 200

_GZIP_MAGIC = b"\x1f\x8b"
_GLOB_CHARS = re.compile(r"[*?\[]")
# surrogateescape decoding turns each invalid UTF-8 byte into one of these lone surrogates.
INVALID_UTF8 = re.compile("[\udc80-\udcff]")


@dataclass(frozen=True)
class ReadFailure:
    """Reading stopped early (truncated or corrupt compressed data, an I/O error).

    It is yielded once, after everything that could be read; parsers turn it into an error
    RawRecord so that the loader quarantines it and moves on to the next file.
    """

    line: int  # 1-based line where reading stopped (0 from iter_chunks, which counts no lines)
    offset: int  # bytes of (decompressed) data read before the failure
    reason: str
    excerpt: str = ""

    def to_raw_record(self, source: str) -> RawRecord:
        return RawRecord(source=source, line=self.line, error=f"read error: {self.reason} "
                         f"(after {self.offset} bytes)", excerpt=self.excerpt)


# --- paths -------------------------------------------------------------------------------------


def expand_inputs(paths: list[str], suffixes: tuple[str, ...] | None = None) -> list[str]:
    """Files to read, in a deterministic order: files as given, directories walked recursively
    (sorted, hidden entries skipped), glob patterns expanded (sorted), '-' for stdin.

    `suffixes` (e.g. ('.bib',)) filters the files found inside directories and globs; a
    '.gz' on top of an accepted suffix is accepted too. Files named explicitly are always kept.
    Raises UsageError for a missing, unreadable or unmatched path.
    """
    if not paths:
        raise UsageError("no input paths given")
    found: list[str] = []
    for path in paths:
        if path == STDIN:
            found.append(STDIN)
        elif os.path.isdir(path):
            found.extend(_walk(path, suffixes))
        elif os.path.exists(path):
            found.append(_readable(path))
        elif _GLOB_CHARS.search(path):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                raise UsageError(f"no input matches {path!r}")
            for match in matches:
                if os.path.isdir(match):
                    found.extend(_walk(match, suffixes))
                elif _accepted(match, suffixes):
                    found.append(_readable(match))
        else:
            raise UsageError(f"input not found: {path}")
    unique = list(dict.fromkeys(found))
    if not unique:
        raise UsageError(f"no input files found in {', '.join(paths)}")
    return unique


def _accepted(path: str, suffixes: tuple[str, ...] | None) -> bool:
    if not suffixes:
        return True
    name = path[:-3] if path.endswith(".gz") else path
    return name.endswith(tuple(suffixes))


def _readable(path: str) -> str:
    if not os.path.isfile(path) and not _is_stream(path):
        raise UsageError(f"input is not a regular file: {path}")
    if not os.access(path, os.R_OK):
        raise UsageError(f"input not readable: {path}")
    return path


def _is_stream(path: str) -> bool:
    # Named pipes and process substitutions (<(zcat x.gz)) are readable inputs too.
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _walk(root: str, suffixes: tuple[str, ...] | None) -> list[str]:
    if not os.access(root, os.R_OK | os.X_OK):
        raise UsageError(f"input directory not readable: {root}")

    def fail(err: OSError) -> None:
        raise UsageError(f"input directory not readable: {err.filename}")

    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=fail):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if not name.startswith(".") and _accepted(name, suffixes):
                files.append(_readable(full))
    return files


# --- bytes -------------------------------------------------------------------------------------


@contextmanager
def open_binary(path: str) -> Iterator[BinaryIO]:
    """A binary stream over `path` ('-' = stdin), gunzipped when the data starts like gzip."""
    if path == STDIN:
        raw = sys.stdin.buffer
        if not hasattr(raw, "peek"):
            raw = io.BufferedReader(raw)
        owned = False
    else:
        raw = open(path, "rb")
        owned = True
    try:
        # Sniff the magic number rather than trusting the name: stdin and misnamed files work too.
        if raw.peek(2)[:2] == _GZIP_MAGIC:
            yield gzip.GzipFile(fileobj=raw, mode="rb")
        else:
            yield raw
    finally:
        if owned:
            raw.close()


def iter_chunks(path: str) -> Iterator[bytes | ReadFailure]:
    """Raw (decompressed) byte chunks; a ReadFailure, if any, comes last."""
    offset = 0
    try:
        with open_binary(path) as stream:
            # read1 hands over what a gzip stream could decompress before a truncation or a
            # corrupt block, where read(n) would drop the partial chunk with the exception.
            read = stream.read1 if isinstance(stream, gzip.GzipFile) else stream.read
            while True:
                chunk = read(CHUNK_SIZE)
                if not chunk:
                    return
                offset += len(chunk)
                yield chunk
    except (OSError, EOFError, zlib.error) as exc:
        yield ReadFailure(line=0, offset=offset, reason=_describe(exc))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "truncated compressed data"
    if isinstance(exc, zlib.error):
        return f"corrupt compressed data ({exc})"
    if isinstance(exc, gzip.BadGzipFile):
        return f"corrupt gzip data ({exc})"
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def iter_text(path: str) -> Iterator[tuple[str, bool] | ReadFailure]:
    """(decoded text chunk, whether it holds invalid UTF-8). Invalid bytes become lone
    surrogates (see INVALID_UTF8) so that a parser can fail just the record holding them.
    A ReadFailure, if any, comes last."""
    undecoded = b""  # a multi-byte character cut by the chunk boundary
    first = True
    failure = None
    for chunk in iter_chunks(path):
        if isinstance(chunk, ReadFailure):
            failure = chunk
            break
        data = undecoded + chunk if undecoded else chunk
        # Strict first: telling clean chunks apart this way is free, unlike scanning the text.
        try:
            text, used = codecs.utf_8_decode(data, "strict", False)
            dirty = False
        except UnicodeDecodeError:
            text, used = codecs.utf_8_decode(data, "surrogateescape", False)
            dirty = True
        undecoded = data[used:]
        if first and text:
            text = text.removeprefix("\ufeff")
            first = False
        if text:
            yield text, dirty
    if undecoded:
        yield undecoded.decode("utf-8", "surrogateescape"), True
    if failure is not None:
        yield failure


# --- JSON records -----------------------------------------------------------------------------

# Between top-level values: whitespace, and the brackets and commas of a whole-file JSON array.
_SEPARATORS = re.compile(r"[\s,\[\]]*")
# Where a new record may start after a malformed one: a line opening an object.
_RECORD_LINE = re.compile(r"^([ \t]*)[,\[]?[ \t]*\{", re.M)
_DECODER = json.JSONDecoder()
_TOO_DEEP = "malformed JSON: nested too deeply"
# How much of a file's start may be read to tell JSON lines from other layouts.
_SNIFF_CHARS = 1 << 20


def iter_json_records(path: str) -> Iterator[RawRecord]:
    """One RawRecord per top-level JSON object, for JSON lines, a whole-file JSON array
    (streamed, bounded memory) and pretty-printed or concatenated objects alike.

    The layout is sniffed from the first line. JSON lines are read line by line, so that a
    malformed line fails alone. Anything else is decoded as a stream of values: a malformed
    object becomes an error record at the line where it starts, and decoding resumes at the next
    line opening an object at the same or a lesser indentation.
    """
    chunks = iter_text(path)
    head: list[tuple[str, bool] | ReadFailure] = []
    seen = ""
    for item in chunks:
        head.append(item)
        if isinstance(item, ReadFailure):
            break
        seen += item[0]
        text = seen.lstrip()
        if text.startswith("[") or "\n" in text or len(seen) > _SNIFF_CHARS:
            break
    replay = itertools.chain(head, chunks)
    if _is_json_lines(seen):
        return _iter_json_lines(path, replay)
    return _iter_json_stream(path, replay)


def _is_json_lines(head: str) -> bool:
    text = head.lstrip()
    if not text or text.startswith("["):
        return not text
    first_line = text.split("\n", 1)[0].rstrip().rstrip(",")
    try:
        _DECODER.raw_decode(first_line)
    except json.JSONDecodeError as exc:
        # A first line that is cut short (a lone '{', or a '"key": value,' line) is the start of
        # a pretty-printed object; any other error is one bad line in a JSON-lines file.
        return exc.pos < len(first_line)
    except RecursionError:
        return True
    return True


def _iter_json_lines(path: str, chunks: Iterator[tuple[str, bool] | ReadFailure]) -> Iterator[RawRecord]:
    rest = ""
    rest_dirty = False
    line = 0
    for item in chunks:
        if isinstance(item, ReadFailure):
            if rest.strip():
                record = _json_line_record(path, line + 1, rest, rest_dirty)
                if record is not None:
                    yield record
            yield ReadFailure(line + 1, item.offset, item.reason).to_raw_record(path)
            return
        text, dirty = item
        lines = (rest + text).split("\n")
        rest = lines.pop()
        check = dirty or rest_dirty
        for text_line in lines:
            line += 1
            record = _json_line_record(path, line, text_line, check)
            if record is not None:
                yield record
        rest_dirty = dirty
    if rest.strip():
        record = _json_line_record(path, line + 1, rest, rest_dirty)
        if record is not None:
            yield record


def _json_line_record(path: str, line: int, text: str, check_utf8: bool) -> RawRecord | None:
    text = text.strip()
    # Tolerated around records: blank lines, and the commas of lines cut from a JSON array.
    text = text.strip(",").strip()
    if not text:
        return None
    if check_utf8 and INVALID_UTF8.search(text):
        return RawRecord(source=path, line=line, error="invalid UTF-8: undecodable bytes in record",
                         excerpt=_excerpt(text, 0))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return RawRecord(source=path, line=line, error=f"malformed JSON: {exc.msg} (line {line}, "
                         f"column {exc.colno})", excerpt=_excerpt(text, 0))
    except RecursionError:
        return RawRecord(source=path, line=line, error=_TOO_DEEP, excerpt=_excerpt(text, 0))
    if not isinstance(value, dict):
        return RawRecord(source=path, line=line, error=f"malformed JSON: expected an object, got "
                         f"{type(value).__name__}", excerpt=_excerpt(text, 0))
    return RawRecord(source=path, line=line, data=value)


def _iter_json_stream(path: str, chunks: Iterator[tuple[str, bool] | ReadFailure]) -> Iterator[RawRecord]:
    buf = ""
    pos = 0
    line = 1  # line number at buf[pos]
    eof = False
    dirty = False  # buf holds invalid UTF-8
    resync_indent: int | None = None  # set while skipping the rest of a malformed record
    failure: ReadFailure | None = None

    def fill() -> None:
        nonlocal buf, pos, eof, dirty, failure
        item = next(chunks, None)
        if item is None or isinstance(item, ReadFailure):
            failure = item
            eof = True
            return
        text, text_dirty = item
        buf = buf[pos:] + text
        pos = 0
        dirty = text_dirty or (dirty and INVALID_UTF8.search(buf) is not None)

    while True:
        if resync_indent is not None:
            found = _next_record_line(buf, pos, resync_indent)
            if found is None:
                if eof:
                    line += buf.count("\n", pos)
                    break
                # Drop the lines searched so far, keep the last (maybe partial) one.
                cut = buf.rfind("\n", pos) + 1
                if cut > pos:
                    line += buf.count("\n", pos, cut)
                    pos = cut
                elif len(buf) - pos > MAX_RECORD_CHARS:
                    pos = len(buf)
                fill()
                continue
            line += buf.count("\n", pos, found)
            pos = found
            resync_indent = None
        sep_end = _SEPARATORS.match(buf, pos).end()
        line += buf.count("\n", pos, sep_end)
        pos = sep_end
        if pos >= len(buf):
            if eof:
                break
            fill()
            continue
        start = pos
        try:
            value, end = _DECODER.raw_decode(buf, start)
        except (json.JSONDecodeError, RecursionError) as exc:
            if isinstance(exc, RecursionError):
                error = _TOO_DEEP
            elif not eof and buf.find("\n", exc.pos) == -1 and len(buf) - start < MAX_RECORD_CHARS:
                # No newline after the error point: the record is probably just cut by the chunk.
                fill()
                continue
            else:
                error_line = line + buf.count("\n", start, exc.pos)
                error_column = exc.pos - buf.rfind("\n", 0, exc.pos)
                error = f"malformed JSON: {exc.msg} (line {error_line}, column {error_column})"
            yield RawRecord(source=path, line=line, error=error, excerpt=_excerpt(buf, start))
            line_start = buf.rfind("\n", 0, start) + 1
            resync_indent = len(buf[line_start:start]) - len(buf[line_start:start].lstrip(" \t"))
            next_line = buf.find("\n", start)
            next_line = len(buf) if next_line == -1 else next_line + 1
            line += buf.count("\n", start, next_line)
            pos = next_line
            continue
        if end == len(buf) and not eof:
            fill()  # a top-level scalar may continue in the next chunk: decode it again whole
            continue
        if dirty and INVALID_UTF8.search(buf, start, end):
            yield RawRecord(source=path, line=line, error="invalid UTF-8: undecodable bytes in record",
                            excerpt=_excerpt(buf, start))
        elif not isinstance(value, dict):
            yield RawRecord(source=path, line=line, error=f"malformed JSON: expected an object, "
                            f"got {type(value).__name__}", excerpt=_excerpt(buf, start))
        else:
            yield RawRecord(source=path, line=line, data=value)
        line += buf.count("\n", start, end)
        pos = end
    if failure is not None:
        yield ReadFailure(line, failure.offset, failure.reason).to_raw_record(path)


def _next_record_line(buf: str, pos: int, indent: int) -> int | None:
    for m in _RECORD_LINE.finditer(buf, pos):
        if len(m.group(1)) <= indent:
            return m.start()
    return None


def _excerpt(buf: str, start: int) -> str:
    end = buf.find("\n", start, start + EXCERPT_CHARS)
    text = buf[start:end if end != -1 else start + EXCERPT_CHARS]
    return text.encode("utf-8", "replace").decode("utf-8")
