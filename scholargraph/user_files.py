"""Readers of the small files a user hands the CLI (queries, qrels, id lists, pairs, loads, configs).

Bad bytes, bad JSON, a wrong field or a wrong column become one UsageError (exit 2) that names the option,
the file and the line, never a traceback: every reader of a user's file goes through here. One discipline
for all of them (docs/assignment.md, "Files you hand the CLI"): a UTF-8 byte-order mark is dropped and CRLF
line ends are read as LF (read_text, text_lines); what a file gives twice is kept once and reported
(Repeats); a file that applies to nothing of the run is refused unless the user allows it (require_effect)."""

from __future__ import annotations

import csv
import json
import math
import re
import tomllib
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from pathlib import Path

from scholargraph.errors import UsageError

INTEGER = re.compile(r"^[+-]?[0-9]+$")  # ASCII digits only: str.isdigit() accepts '²', which int() refuses
BOM = "\ufeff"  # Excel and Notepad open a UTF-8 file with it; invisible, it would glue itself to the first cell
MAX_EXAMPLES = 5
Warn = Callable[[str], None]


def no_warning(message: str) -> None:
    """The `warn` of a caller with nobody to tell (a library call): what a reader reports is dropped."""


def examples(items: Sequence[str], n: int = MAX_EXAMPLES, lead: str = "e.g. ") -> str:
    """`e.g. a, b, c and 4 more`: the few items a warning names (`lead` before them)."""
    more = len(items) - n
    return lead + ", ".join(items[:n]) + (f" and {more:,} more" if more > 0 else "")


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`1 reviewer`, `2,500 reviewers`: a number and its noun (`plural` where adding an s is wrong)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _too_many_digits(exc: ValueError) -> bool:
    """Python refuses to turn more than 4300 digits into an int (CVE-2020-10735): a ValueError of int(), of
    json.loads and of tomllib, that is not their own parse error."""
    return "integer string conversion" in str(exc)


def _where(what: str, path: str | Path, line: int | None = None) -> str:
    name = f"{what} {path}".strip() if what else str(path)
    return f"{name}:{line}" if line is not None else name


class ConfigError(UsageError, ValueError):
    """A bad setting (the TOML file's or a SCHOLARGRAPH_* variable's): exit 2 with one line, and a ValueError
    for the callers of Settings.load that catch one."""


def bad_line(what: str, path: str | Path, line: int | None, reason: str) -> UsageError:
    """The one error of a bad user file: `--pool ids.txt:3: reason`."""
    return UsageError(f"{_where(what, path, line)}: {reason}")




class Repeats:
    """What one user's file gives more than once (`noun`: what an entry is, singular, with a regular plural;
    `by`: what makes two entries the same, when the noun does not say it: the warning says `2 repeated PC
    members (by email) kept once`). An entry repeated with the same value is kept once and reported
    (`report`: count and examples by line, so that an email is never echoed); repeated with another value,
    the file contradicts itself, and which line holds is not ours to guess: a UsageError naming both lines."""

    def __init__(self, what: str, path: str | Path, noun: str, by: str | None = None):
        self.what, self.path = what, path
        self.noun, self.by = noun, by
        self._first: dict[Hashable, tuple[int, object]] = {}
        self.repeated: list[tuple[int, int]] = []  # (line of the repeat, line it repeats)

    def first(self, key: Hashable, line: int, value: object = None) -> bool:
        """True the first time `key` is seen; False for a repeat (counted), which the caller leaves out."""
        seen = self._first.get(key)
        if seen is None:
            self._first[key] = (line, value)
            return True
        if seen[1] != value:
            raise bad_line(self.what, self.path, line, f"the {self.noun} of line {seen[0]} again, with another "
                           f"value: keep one of the two lines")
        self.repeated.append((line, seen[0]))
        return False

    def warning(self) -> str | None:
        if not self.repeated:
            return None
        shown = examples([f"line {n} (as line {first})" for n, first in self.repeated])
        by = f" (by {self.by})" if self.by else ""
        return (f"warning: {_where(self.what, self.path)}: {count(len(self.repeated), 'repeated ' + self.noun)}{by} "
                f"kept once, {shown}")

    def report(self, warn: Warn) -> None:
        message = self.warning()
        if message:
            warn(message)


def require_effect(what: str, path: str | Path, given: int, noun: str, allow_empty: bool, warn: Warn,
                   check: str = "check its ids") -> None:
    """A file of `given` entries none of which applies to this run would change nothing: most likely the
    wrong file, or ids of another form. It is a UsageError (exit 2, as every bad input) unless the user
    says it may be so (--allow-empty: a warning, and the run goes on). `check`: what the user should look at."""
    message = f"{_where(what, path)}: none of its {given:,} {noun}(s) applies to this run: it changes nothing"
    if allow_empty:
        warn(f"warning: {message} (--allow-empty)")
        return
    raise UsageError(f"{message}; {check}, or give --allow-empty to go on")


def read_text(path: str | Path, what: str, error: type[UsageError] = UsageError) -> str:
    """The file as UTF-8 text without its byte-order mark; unreadable or not UTF-8 is a UsageError naming the
    line of the first bad byte."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise error(f"{_where(what, path)}: cannot read it ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8").removeprefix(BOM)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{_where(what, path, line)}: not UTF-8 text (byte 0x{data[exc.start]:02x})") from None


def text_lines(path: str | Path, what: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line. Lines end at '\\n' only (str.splitlines also splits at form feeds
    and U+2028), so the numbers are the ones an editor shows."""
    for n, line in enumerate(read_text(path, what).split("\n"), 1):
        yield n, line.rstrip("\r")


def data_lines(path: str | Path, what: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, whitespace-separated fields) of the lines that are neither blank nor `#` comments."""
    for n, line in text_lines(path, what):
        parts = line.split()
        if parts and not parts[0].startswith("#"):
            yield n, parts


def table_lines(path: str | Path, what: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of a small table file: comma-, tab- or space-separated, each field stripped;
    blank lines and `#` comments skipped. A line the csv module cannot split (a carriage return inside it, a
    field over its size limit) is a UsageError naming the line."""
    for n, line in text_lines(path, what):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if "," in text:
            try:
                parts = next(csv.reader([text]))
            except csv.Error as exc:
                reason = "a carriage return inside the line" if "new-line" in str(exc) else str(exc)
                raise bad_line(what, path, n, f"not a comma-separated row ({reason})") from None
        else:
            parts = text.split("\t") if "\t" in text else text.split()
        yield n, [p.strip() for p in parts]


def id_field(field: str) -> str:
    """The id a table field gives: its first word (an id never holds whitespace), so that a line
    `~Ann_Lee1,Ann Lee`, `~Ann_Lee1<TAB>Ann Lee` or `~Ann_Lee1 Ann Lee` names ~Ann_Lee1; "" for an empty field."""
    words = field.split()
    return words[0] if words else ""


def parse_int(text: str, what: str, path: str | Path, line: int, name: str) -> int:
    if not INTEGER.match(text):
        raise bad_line(what, path, line, f"{name} must be an integer, got {text[:40]!r}")
    try:
        return int(text)
    except ValueError as exc:  # digits only, so: more of them than int() takes
        if not _too_many_digits(exc):
            raise
        raise bad_line(what, path, line, f"{name} has too many digits ({len(text):,})") from None


def parse_float(text: str, what: str, path: str | Path, line: int, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise bad_line(what, path, line, f"{name} must be a finite number, got {text[:40]!r}")
    return value


# --- JSON lines -------------------------------------------------------------------------------------------

Check = Callable[[object], bool]


def _optional(kind: Check) -> Check:
    return lambda v: v is None or kind(v)


def _is_str(v: object) -> bool:
    return isinstance(v, str)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_id(v: object) -> bool:
    return (isinstance(v, str) and bool(v.strip())) or _is_int(v)


def _is_author(v: object) -> bool:
    return isinstance(v, str) or (isinstance(v, dict) and isinstance(v.get("name", ""), str)
                                  and _optional(_is_id)(v.get("id")) and _optional(_is_str)(v.get("email"))
                                  and _optional(_is_str)(v.get("affiliation")))


def _list_of(item: Check) -> Check:
    return lambda v: isinstance(v, list) and all(item(x) for x in v)


# The fields of a submission or draft (citations and reviewers queries, reviewers assign): what each
# reader takes from it, and in what form. Fields not named here are ignored.
QUERY_FIELDS: Mapping[str, tuple[Check, str]] = {
    "id": (_is_id, "a non-empty string or an integer"),
    "title": (_optional(_is_str), "a string"),
    "abstract": (_optional(_is_str), "a string"),
    "year": (_optional(_is_int), "an integer year"),
    "authors": (_optional(_list_of(_is_author)), "a list of names or {name, id?, email?, affiliation?} objects"),
    "author_ids": (_optional(_list_of(_is_id)), "a list of ids"),
    "references": (_optional(_list_of(_is_id)), "a list of paper ids"),
    "k": (_optional(lambda v: _is_int(v) and v >= 1), "a positive integer"),
}


def parse_json(text: str, what: str, path: str | Path, line: int | None = None) -> object:
    """The JSON value of `text` (a line, or a whole file when `line` is None); not JSON is a UsageError naming
    the file, the line and where in it."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"column {exc.colno}" if line is not None else f"line {exc.lineno} column {exc.colno}"
        raise bad_line(what, path, line, f"not JSON ({exc.msg} at {where})") from None
    except RecursionError:
        raise bad_line(what, path, line, "JSON nested too deeply") from None
    except ValueError as exc:
        if not _too_many_digits(exc):
            raise
        raise bad_line(what, path, line, "not JSON (a number with too many digits)") from None


def read_jsonl(path: str | Path, what: str, fields: Mapping[str, tuple[Check, str]] = QUERY_FIELDS,
               required: tuple[str, ...] = ("id",), warn: Warn = no_warning) -> list[dict]:
    """The JSON objects of a JSON-lines file, one per non-blank line, each field of `fields` checked; a
    file without one record is refused too (a run over nothing looks like a run with no results). The first
    required field is the record's key: a record repeated is kept once (reported through `warn`), another
    record under the same key is refused."""
    records = []
    repeats = Repeats(what, path, "record", required[0] if required else None)
    for n, line in text_lines(path, what):
        if not line.strip():
            continue
        record = parse_json(line, what, path, n)
        if not isinstance(record, dict):
            raise bad_line(what, path, n, f"expected a JSON object {{...}}, got {type(record).__name__}")
        for name in required:
            if name not in record:
                raise bad_line(what, path, n, f"the object has no {name!r}")
        for name, (check, expected) in fields.items():
            if name in record and not check(record[name]):
                raise bad_line(what, path, n, f"{name!r} must be {expected}, got {json.dumps(record[name])[:40]}")
        if not required or repeats.first(str(record[required[0]]).strip(), n, record):
            records.append(record)
    if not records:
        raise bad_line(what, path, None, "holds no records (expected one JSON object per line)")
    repeats.report(warn)
    return records


# --- TOML -------------------------------------------------------------------------------------------------


def read_toml_table(path: str | Path, table: str, what: str = "--config") -> dict:
    """The `[table]` of a TOML file ({} when it has none); a bad file is a ConfigError naming it."""
    text = read_text(path, what, ConfigError)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib of Python 3.11 keeps the position only in its message: "Invalid value (at line 2, column 5)".
        at = re.search(r"\(at line (\d+), column \d+\)$", str(exc))
        reason = re.sub(r" \(at [^)]*\)$", "", str(exc))
        raise ConfigError(f"{_where(what, path, int(at.group(1)) if at else None)}: not TOML ({reason})") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise ConfigError(f"{_where(what, path)}: not TOML (nested too deeply)") from None
    except ValueError as exc:
        if not _too_many_digits(exc):
            raise
        raise ConfigError(f"{_where(what, path)}: not TOML (a number with too many digits)") from None
    values = doc.get(table, {})
    if not isinstance(values, dict):
        raise ConfigError(f"{_where(what, path)}: {table!r} must be a table ([{table}]), got {type(values).__name__}")
    return values
