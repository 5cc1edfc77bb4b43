"""Rows as text: the one aligned-table layout and the table/jsonl/csv/tsv/trec renderings every command prints."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scholargraph.graph.ids import output_id

FORMATS = ("table", "jsonl", "csv", "tsv", "trec")


def text_table(header: Sequence[str], rows: Sequence[Sequence], *, left: int = 1, widths: Sequence[int] | None = None,
               sep: str = "  ", rule: str | None = "columns") -> str:
    """An aligned plain-text table: the first `left` columns left-aligned, the rest right-aligned.

    `widths` fixes the column widths (a longer cell overflows, as in an f-string); by default each column is as
    wide as its widest cell. `rule` under the header: "columns" (dashes per column), "full" (one line of dashes
    as long as the header) or None."""
    cells = [[str(c) for c in row] for row in rows]
    if widths is None:
        widths = [max(len(c) for c in col) for col in zip([str(h) for h in header], *cells)]

    def line(row: Sequence[str]) -> str:
        return sep.join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    head = line([str(h) for h in header])
    lines = [head]
    if rule == "columns":
        lines.append(line(["-" * w for w in widths]))
    elif rule == "full":
        lines.append("-" * len(head))
    return "\n".join(lines + [line(r) for r in cells])


def trec_lines(qid: str, ranked: Sequence[tuple[str, float]], tag: str) -> list[str]:
    """TREC run lines `qid Q0 doc rank score tag`."""
    # Six whitespace-separated columns, whatever the ids.
    return [f"{output_id(qid)} Q0 {output_id(doc)} {rank} {score:.6f} {tag}"
            for rank, (doc, score) in enumerate(ranked, start=1)]


@dataclass(frozen=True)
class Trec:
    """Which columns make a TREC run, and its run tag. Without a `rank` column the rank is the position within a
    run of rows of one query."""

    query: str
    doc: str
    score: str
    tag: str
    rank: str | None = None


@dataclass
class Rows:
    """A command's result rows, and what its formats need beyond the cells.

    `records`: the jsonl objects where they carry more than the columns (default: one object per row);
    `trec`: the run's columns (None: the command offers no trec); `text`: the command's own table layout
    (default: the aligned table of the cells, with a row count)."""

    columns: Sequence[str]
    rows: Sequence[Sequence]
    records: Sequence[Mapping] | None = None
    trec: Trec | None = None
    text: Sequence[str] | None = None


def render(rows: Rows, fmt: str) -> str:
    """The rows in one of FORMATS (lines joined, no final newline)."""
    if fmt == "jsonl":
        records = rows.records if rows.records is not None else [dict(zip(rows.columns, r)) for r in rows.rows]
        return "\n".join(json.dumps(r, default=str, ensure_ascii=False) for r in records)
    if fmt == "csv":
        # Quoted where a cell needs it: a name may hold a comma.
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(rows.columns)
        writer.writerows(rows.rows)
        return out.getvalue().removesuffix("\n")
    if fmt == "tsv":
        # A tab or newline inside a cell would break the columns: whitespace runs become one space.
        return "\n".join("\t".join(" ".join(str(c).split()) for c in row) for row in [rows.columns, *rows.rows])
    if fmt == "trec":
        if rows.trec is None:
            raise ValueError("these rows have no TREC columns")
        return "\n".join(_trec(rows))
    if fmt != "table":
        raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    if rows.text is not None:
        return "\n".join(rows.text)
    cells = [[_cell(v) for v in row] for row in rows.rows]
    n = len(cells)
    return text_table(rows.columns, cells, left=len(rows.columns)) + f"\n({n} row{'s' if n != 1 else ''})"


def _trec(rows: Rows) -> list[str]:
    spec = rows.trec
    assert spec is not None
    at = {c: i for i, c in enumerate(rows.columns)}
    q, d, s = at[spec.query], at[spec.doc], at[spec.score]
    # A row without a score (a pair that could not be scored) is no line of the run.
    scored = [row for row in rows.rows if row[s] != ""]
    if spec.rank is not None:
        r = at[spec.rank]
        return [f"{output_id(row[q])} Q0 {output_id(row[d])} {row[r]} {float(row[s]):.6f} {spec.tag}"
                for row in scored]
    lines: list[str] = []
    group: list[tuple[str, float]] = []
    qid = ""
    for row in scored:
        if row[q] != qid and group:
            lines += trec_lines(qid, group, spec.tag)
            group = []
        qid = row[q]
        group.append((row[d], float(row[s])))
    if group:
        lines += trec_lines(qid, group, spec.tag)
    return lines


def _cell(value) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (list, dict)) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."
