"""Input expansion, plain/gzip line reading, and JSON record streaming."""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
from collections.abc import Iterator

import pytest

from scholargraph.errors import UsageError
from scholargraph.ingest import sources
from scholargraph.ingest.sources import (
    ReadFailure,
    expand_inputs,
    iter_json_records,
    iter_text,
)


def write(path, data: bytes | str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


# --- expand_inputs -----------------------------------------------------------------------------


def test_expand_inputs_files_directories_and_globs_in_a_deterministic_order(tmp_path):
    b = write(tmp_path / "d" / "b.bib", "")
    a = write(tmp_path / "d" / "sub" / "a.bib", "")
    c = write(tmp_path / "d" / "a.bib.gz", "")
    write(tmp_path / "d" / ".hidden.bib", "")
    write(tmp_path / "d" / ".git" / "x.bib", "")
    txt = write(tmp_path / "d" / "notes.txt", "")
    single = write(tmp_path / "one.jsonl", "")

    assert expand_inputs([str(tmp_path / "d")]) == [c, b, txt, a]
    assert expand_inputs([str(tmp_path / "d")], suffixes=(".bib",)) == [c, b, a]
    assert expand_inputs([str(tmp_path / "d" / "*.bib")]) == [b]
    assert expand_inputs([str(tmp_path / "d" / "**" / "*.bib")]) == [b, a]
    # Named files are kept whatever their suffix; duplicates collapse, order of first mention wins.
    assert expand_inputs([single, txt, single, "-"], suffixes=(".bib",)) == [single, txt, "-"]


def test_expand_inputs_rejects_missing_and_unmatched_paths(tmp_path):
    with pytest.raises(UsageError, match="input not found"):
        expand_inputs([str(tmp_path / "nope.bib")])
    with pytest.raises(UsageError, match="no input matches"):
        expand_inputs([str(tmp_path / "*.bib")])
    with pytest.raises(UsageError, match="no input paths"):
        expand_inputs([])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no input files"):
        expand_inputs([str(tmp_path / "empty")])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_expand_inputs_rejects_unreadable_files(tmp_path):
    path = write(tmp_path / "secret.bib", "")
    os.chmod(path, 0)
    with pytest.raises(UsageError, match="not readable"):
        expand_inputs([path])


def open_lines(path: str) -> Iterator[tuple[int, bytes] | ReadFailure]:
    """(1-based line number, raw line bytes without the line ending) for plain and gzipped
    files. When reading fails part-way, the complete lines come first, then one ReadFailure
    carrying the line number where reading stopped and the partial line as its excerpt: iter_chunks
    seen line by line, which only these tests need."""
    lineno = 0
    rest = b""
    for chunk in sources.iter_chunks(path):
        if isinstance(chunk, ReadFailure):
            excerpt = rest[:sources.EXCERPT_CHARS].decode("utf-8", "replace")
            yield ReadFailure(lineno + 1, chunk.offset, chunk.reason, excerpt)
            return
        lines = (rest + chunk if rest else chunk).split(b"\n")
        rest = lines.pop()
        for line in lines:
            lineno += 1
            yield lineno, line[:-1] if line.endswith(b"\r") else line
    if rest:
        yield lineno + 1, rest[:-1] if rest.endswith(b"\r") else rest


# --- open_lines --------------------------------------------------------------------------------


def test_open_lines_reads_plain_and_gzip_alike(tmp_path):
    text = b"first\r\nsecond\n\nlast without newline"
    plain = write(tmp_path / "a.txt", text)
    packed = write(tmp_path / "a.txt.gz", gzip.compress(text))
    misnamed = write(tmp_path / "gz-without-suffix", gzip.compress(text))
    expected = [(1, b"first"), (2, b"second"), (3, b""), (4, b"last without newline")]
    assert list(open_lines(plain)) == expected
    assert list(open_lines(packed)) == expected
    assert list(open_lines(misnamed)) == expected


def test_open_lines_truncated_gzip_yields_what_was_readable_then_a_failure(tmp_path):
    body = b"".join(b"line %d with some padding text\n" % i for i in range(20000))
    packed = gzip.compress(body)
    path = write(tmp_path / "cut.gz", packed[: len(packed) // 2])
    items = list(open_lines(path))
    failure = items[-1]
    lines = items[:-1]
    assert isinstance(failure, ReadFailure) and "truncated" in failure.reason
    assert len(lines) > 1000 and all(not isinstance(x, ReadFailure) for x in lines)
    assert [n for n, _ in lines] == list(range(1, len(lines) + 1))
    assert lines[-1][1] == b"line %d with some padding text" % (len(lines) - 1)
    assert failure.line == len(lines) + 1
    assert failure.offset >= sum(len(x) + 1 for _, x in lines)


def test_open_lines_corrupt_gzip_is_a_failure_not_a_crash(tmp_path):
    packed = bytearray(gzip.compress(b"".join(b"row %d\n" % i for i in range(50000))))
    for i in range(len(packed) // 2, len(packed) // 2 + 64):
        packed[i] ^= 0xFF
    items = list(open_lines(write(tmp_path / "bad.gz", bytes(packed))))
    assert isinstance(items[-1], ReadFailure)
    assert "corrupt" in items[-1].reason or "truncated" in items[-1].reason or "CRC" in items[-1].reason
    assert all(isinstance(x, tuple) for x in items[:-1])


def test_open_lines_of_a_vanished_file_is_a_failure(tmp_path):
    items = list(open_lines(str(tmp_path / "gone.txt")))
    assert len(items) == 1 and isinstance(items[0], ReadFailure) and items[0].line == 1


def test_open_lines_reads_stdin(monkeypatch):
    fake = io.TextIOWrapper(io.BufferedReader(io.BytesIO(gzip.compress(b"a\nb\n"))))
    monkeypatch.setattr(sys, "stdin", fake)
    assert list(open_lines("-")) == [(1, b"a"), (2, b"b")]


def test_iter_text_flags_invalid_utf8_and_keeps_characters_cut_by_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "CHUNK_SIZE", 3)
    path = write(tmp_path / "t.txt", "\ufeffh\u00e9llo w\u00f6rld \u20ac".encode() + b"\xff!")
    pieces = list(iter_text(path))
    text = "".join(t for t, _ in pieces)
    assert text == "h\u00e9llo w\u00f6rld \u20ac\udcff!"
    assert [dirty for t, dirty in pieces if "\udcff" in t] == [True]
    assert not any(dirty for t, dirty in pieces if "\udcff" not in t)


# --- iter_json_records -------------------------------------------------------------------------

RECORDS = [{"id": i, "title": f"paper {i}", "nested": {"list": [1, 2, {"x": "y\n"}]}} for i in range(40)]


def layouts() -> dict[str, str]:
    return {
        "jsonl": "".join(json.dumps(r) + "\n" for r in RECORDS),
        "array": json.dumps(RECORDS),
        "array_lines": "[\n" + ",\n".join(json.dumps(r) for r in RECORDS) + "\n]\n",
        "pretty": json.dumps(RECORDS, indent=2),
        "concatenated_pretty": "\n".join(json.dumps(r, indent=4) for r in RECORDS),
    }


@pytest.mark.parametrize("layout", sorted(layouts()))
@pytest.mark.parametrize("chunk_size", [1, 7, 64, 1 << 20])
def test_iter_json_records_reads_every_layout_whatever_the_chunking(tmp_path, monkeypatch, layout,
                                                                     chunk_size):
    monkeypatch.setattr(sources, "CHUNK_SIZE", chunk_size)
    path = write(tmp_path / f"{layout}.json", layouts()[layout])
    records = list(iter_json_records(path))
    assert [r.data for r in records] == RECORDS
    assert all(r.error is None for r in records)
    if layout == "jsonl":
        assert [r.line for r in records] == list(range(1, 41))
    if layout == "array_lines":
        assert [r.line for r in records] == list(range(2, 42))


def test_json_lines_fail_line_by_line(tmp_path):
    lines = ['{"id": 1}', '{"id": 2, "title": ', "", '[1, 2]', '"text"', '{"id": 3} trailing',
             '{"id": 4}', "not json at all {", '{"id": 5}']
    path = write(tmp_path / "x.jsonl", "\n".join(lines) + "\n")
    records = list(iter_json_records(path))
    assert [(r.line, r.data["id"]) for r in records if r.data] == [(1, 1), (7, 4), (9, 5)]
    assert [(r.line, r.error.split(":")[0]) for r in records if r.error] == [
        (2, "malformed JSON"), (4, "malformed JSON"), (5, "malformed JSON"), (6, "malformed JSON"),
        (8, "malformed JSON")]
    assert "expected an object, got list" in records[2].error


def test_an_incomplete_line_does_not_swallow_the_next_one(tmp_path):
    deep = "[" * 100000
    path = write(tmp_path / "x.jsonl", '{"id": 1}\n{"id": 2, "nested": {\n{"id": 3}\n' + deep + "\n{}\n")
    records = list(iter_json_records(path))
    assert [(r.line, r.data) for r in records if r.data is not None] == [
        (1, {"id": 1}), (3, {"id": 3}), (5, {})]
    assert [(r.line, r.error) for r in records if r.error][1] == (4, "malformed JSON: nested too deeply")


def test_json_stream_survives_deep_nesting(tmp_path):
    path = write(tmp_path / "x.json", "[\n" + '{"a": ' * 100000 + "\n,\n{\"id\": 1}]")
    records = list(iter_json_records(path))
    assert records[0].error == "malformed JSON: nested too deeply"
    assert records[-1].data == {"id": 1}


def test_json_invalid_utf8_fails_only_its_record(tmp_path):
    data = b'{"id": 1}\n{"id": 2, "title": "caf\xe9"}\n{"id": 3, "title": "caf\xc3\xa9"}\n'
    records = list(iter_json_records(write(tmp_path / "x.jsonl", data)))
    assert [r.data for r in records if r.data] == [{"id": 1}, {"id": 3, "title": "caf\u00e9"}]
    assert records[1].line == 2 and records[1].error.startswith("invalid UTF-8")
    array = b'[{"id": 1},\n{"id": 2, "t": "\xff"},\n{"id": 3}]'
    records = list(iter_json_records(write(tmp_path / "x.json", array)))
    assert [r.data for r in records if r.data] == [{"id": 1}, {"id": 3}]
    assert records[1].line == 2 and records[1].error.startswith("invalid UTF-8")


def test_json_stream_resumes_after_a_malformed_pretty_printed_record(tmp_path):
    good = [{"id": 1, "authors": [{"name": "a"}]}, {"id": 2, "authors": [{"name": "b"}]}]
    text = json.dumps(good[:1], indent=2)[:-2] + ',\n  {\n    "id": oops,\n    "authors": [\n' \
        '      {"name": "x"}\n    ]\n  },\n' + json.dumps(good[1], indent=2).replace("\n", "\n  ") + "\n]"
    path = write(tmp_path / "x.json", "  " + text.lstrip())
    records = list(iter_json_records(path))
    assert [r.data for r in records if r.data] == good
    errors = [r for r in records if r.error]
    assert len(errors) == 1 and errors[0].error.startswith("malformed JSON")


def test_json_array_is_streamed_with_bounded_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "CHUNK_SIZE", 4096)
    path = write(tmp_path / "big.json", json.dumps([{"id": i, "pad": "x" * 100} for i in range(20000)]))
    reads = []
    real = sources.iter_chunks

    def counting(p):
        for chunk in real(p):
            reads.append(len(chunk) if isinstance(chunk, bytes) else 0)
            yield chunk

    monkeypatch.setattr(sources, "iter_chunks", counting)
    records = iter_json_records(path)
    assert next(records).data["id"] == 0
    assert sum(reads) <= 3 * 4096  # the first record came without reading the 2.4 MB file


def test_json_truncated_gzip_ends_with_a_read_error(tmp_path):
    body = "".join(json.dumps({"id": i, "title": "t" * 50}) + "\n" for i in range(30000)).encode()
    packed = gzip.compress(body)
    records = list(iter_json_records(write(tmp_path / "cut.jsonl.gz", packed[: len(packed) // 3])))
    good = [r for r in records if r.data]
    assert len(good) > 1000
    assert [r.data["id"] for r in good] == list(range(len(good)))
    assert records[-1].error.startswith("read error: truncated")
    assert all(r.error is None for r in records[:-2])
