"""The chair's tools' formats out: suggestions and assignments as OpenReview, HotCRP and CMT read them.

Pure writers over (submission, reviewer, score) pairs whose ids are already in the caller's form, plus the
reviewers' emails the tools key people by (HotCRP and CMT): the Author nodes' `emails`, or a `--emails` file.
Sources of each layout (docs/assignment.md, "The chair's tools"):
- OpenReview: openreview-py `venue/matching.py` `_build_scores_from_file` and openreview-matcher `--scores` /
  `--constraints`: CSV rows `paper_id,profile_id,value` and no header line; ids bare (`~Ann_Lee1`, never the
  graph's `openreview:~Ann_Lee1`), and a number in every value cell (`float(row[2])`).
- HotCRP: its bulk-assignment help (`src/help/h_bulkassign.php`, `etc/assignmentparsers.json`): a CSV with a
  header naming `paper` (or `pid`), `action` and `email`; actions `primary`, `secondary`, `pcreview`,
  `conflict`, and `pref` with a `preference` column: an integer, -20 to 20 typically, -100 meaning a conflict
  (HotCRP's help, `etc/msgs.json` `revprefdescription`; `src/assigners/a_preference.php`).
- CMT: "Import Assignments (Reviewer)": an XML file of `<submission submissionId="..."><user email="..."/>`.
  CMT documents no import of outside affinity (TPMS) scores: their table is written in CMT's tab-delimited
  template style (a `#` header line), for the chair's records or CMT support, not for an upload page."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

from scholargraph.errors import UsageError
from scholargraph.graph.ids import IdResolver, is_openreview_id, openreview_id, output_id
from scholargraph.user_files import Repeats, Warn, bad_line, examples, no_warning, require_effect, table_lines

TOOL_FORMATS: Mapping[str, str] = {
    "openreview": "openreview: the matcher's CSV `submission,profile,score`, no header (affinity scores; for assign "
                  "the assigned pairs, the edges to post as proposed assignments)",
    "hotcrp": "hotcrp: HotCRP bulk-assignment CSV (recommend: `paper,action,email,preference` rows of action "
              "pref; assign: `paper,action,email` rows of action primary)",
    "cmt": "cmt: CMT (recommend: a tab-delimited score table; assign: the Import Assignments XML)",
}
NEEDS_EMAIL = ("hotcrp", "cmt")  # the tools that know reviewers by their email
HOTCRP_ASSIGN_ACTION = "primary"


@dataclass(frozen=True)
class Pair:
    """One (submission, reviewer) row to export: `paper` and `reviewer` as the output prints them (the caller's
    given form), `node` the reviewer's node id (its email is looked up by it), `score` None when unknown."""

    paper: str
    reviewer: str
    node: str
    score: float | None


@dataclass
class Export:
    """A tool file's text and what could not go into it: pairs whose reviewer has no known email, pairs
    without a score (each a `paper reviewer` example string)."""

    text: str
    no_email: list[str] = field(default_factory=list)
    no_score: list[str] = field(default_factory=list)
    # OpenReview assignments: the assigned pairs without a score, as `paper,profile` rows for a side file
    # (every row of the matcher's file needs a number: openreview-py reads it with float()).
    unscored_rows: str = ""
    not_profiles: list[str] = field(default_factory=list)  # OpenReview: reviewers that are no OpenReview profile

    def warnings(self, fmt: str) -> list[str]:
        """One line per kind of omission (count and examples); empty when every pair was written."""
        lines = []
        if self.no_email:
            lines.append(f"{fmt}: {len(self.no_email):,} pair(s) left out, the reviewer has no known email (give "
                         f"--emails FILE or ingest their profiles): {examples(self.no_email)}")
        if self.no_score and self.unscored_rows:
            lines.append(f"{fmt}: {len(self.no_score):,} assigned pair(s) have no affinity (no eligible evidence) "
                         f"and are left out of the file, whose every row needs a number: {examples(self.no_score)}")
        elif self.no_score:
            lines.append(f"{fmt}: {len(self.no_score):,} pair(s) have no score (no eligible evidence) and are not "
                         f"written as one: {examples(self.no_score)}")
        if self.not_profiles:
            lines.append(f"{fmt}: {len(self.not_profiles):,} reviewer(s) have no OpenReview profile id and are "
                         f"written with the graph's id, which OpenReview does not know: {examples(self.not_profiles)}")
        return lines


# --- emails -----------------------------------------------------------------------------------------------


def read_email_file(path: str, what: str = "--emails", warn: Warn = no_warning) -> list[tuple[str, str]]:
    """(reviewer id as given, email) rows of a `reviewer_id,email` table (comma, tab or space separated; the
    cell holding an '@' is the email, so either order works; a header line without one is skipped; cells
    after the id are not read). A row repeated is kept once (`warn` says so); one reviewer may have several
    addresses, each naming them in a conflicts file."""
    rows: list[tuple[str, str]] = []
    repeats = Repeats(what, path, "row")
    for k, (n, parts) in enumerate(table_lines(path, what)):
        cells = [p for p in parts if p]
        mails = [c for c in cells if "@" in c]
        ids = [c for c in cells if "@" not in c]
        if not mails and k == 0:
            continue  # a header line
        if len(mails) != 1 or not ids:
            raise bad_line(what, path, n, f"expected `reviewer_id,email`, got {','.join(cells)[:60]!r}")
        row = (ids[0], mails[0].lower())
        if repeats.first(row, n):
            rows.append(row)
    if not rows:
        raise bad_line(what, path, None, "holds no `reviewer_id,email` rows")
    repeats.report(warn)
    return rows


@dataclass
class EmailBook:
    """Reviewers' emails both ways: `email[node id]` (the one an export writes: the --emails file's, else the
    node's first) and `nodes[email]` (the author nodes an email names, for declared-conflict files)."""

    email: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, set[str]] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)  # --emails ids the graph does not have
    listed_known: int = 0  # --emails rows whose id the graph has: none, and the file changes nothing

    def add(self, node: str, address: str, preferred: bool = False) -> None:
        address = address.strip().lower()
        if not address or any(c.isspace() for c in address):
            return  # never emit an address a tool would split
        self.nodes.setdefault(address, set()).add(node)
        if preferred or node not in self.email:
            self.email[node] = address

    def node_of(self, address: str) -> str | None:
        """The one author node an email names (None when none does, or more than one)."""
        found = self.nodes.get(address.strip().lower(), set())
        return next(iter(found)) if len(found) == 1 else None

    @classmethod
    def build(cls, stored: Iterable[tuple[str, object]], listed: Sequence[tuple[str, str]] = (),
              resolve: Callable[[list[str]], Mapping[str, str]] | None = None) -> EmailBook:
        """From the Author nodes' (id, emails) and the --emails rows (ids resolved by `resolve`: given -> node);
        a listed email wins over a stored one for what an export writes."""
        book = cls()
        for node, emails in stored:
            for address in (emails if isinstance(emails, (list, tuple)) else [emails] if emails else []):
                if isinstance(address, str):
                    book.add(node, address)
        if listed:
            nodes = dict(resolve([g for g, _ in listed])) if resolve is not None else {}
            for given, address in listed:
                if given in nodes:
                    book.add(nodes[given], address, preferred=True)
                    book.listed_known += 1
                else:
                    book.unknown.append(given)
        return book

    @classmethod
    def from_store(cls, store, listed: Sequence[tuple[str, str]] = (),
                   resolve: Callable[[list[str]], Mapping[str, str]] | None = None) -> EmailBook:
        """The Author nodes' `emails` (absent on a graph without profiles: then only --emails counts; no store,
        None, reads none) and the --emails rows, their ids resolved by `resolve` (default: against the store,
        qualified or bare)."""
        stored: Iterable[tuple[str, object]] = ()
        if store is not None:
            ids, props = store.read_nodes("Author", ["emails"])
            stored = zip(ids, props["emails"])
            if resolve is None:
                resolver = IdResolver(lookup=store.lookup_ids)
                resolve = lambda given: resolver.resolve("author", given).ids  # noqa: E731
        return cls.build(stored, listed, resolve)

    def warning(self) -> str | None:
        if not self.unknown:
            return None
        return (f"warning: --emails: {len(self.unknown):,} reviewer id(s) are not in the graph and left out: "
                f"{examples(self.unknown)}")

    def require_listed(self, path: str, rows: int, allow_empty: bool, warn: Warn) -> None:
        """An --emails file of `rows` rows none of whose ids the graph has changes nothing: refused unless
        `allow_empty` (user_files.require_effect)."""
        if rows and not self.listed_known:
            require_effect("--emails", path, rows, "row", allow_empty, warn)


# --- the writers ------------------------------------------------------------------------------------------


def _csv(rows: Iterable[Sequence]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().removesuffix("\n")


def _score(value: float) -> str:
    return f"{value:.6f}"


# HotCRP's typical preference range (its help: "-20 to 20 is a typical range for real preferences"), which a
# site may enforce (settings preference_min/max). -100 says "I have a conflict" (the `prefconflict` autoassigner
# makes it one), so a low score must never reach it.
HOTCRP_PREFERENCE_RANGE = 20


def hotcrp_preference(score: float) -> int:
    """A score as a HotCRP review preference: x20, rounded, kept within -20..20."""
    return max(-HOTCRP_PREFERENCE_RANGE, min(HOTCRP_PREFERENCE_RANGE, round(score * HOTCRP_PREFERENCE_RANGE)))


def export(fmt: str, what: str, pairs: Sequence[Pair], emails: Mapping[str, str] | None = None) -> Export:
    """`pairs` as tool `fmt` (TOOL_FORMATS) reads them; `what`: "scores" (recommend: one row per suggestion)
    or "assignment" (assign: one row per assigned pair). Nothing is written with a blank or made-up cell: a
    pair without an email (HotCRP, CMT) or, for scores, without a score is left out and listed; an assigned
    pair without a score leaves OpenReview's file for `unscored_rows`. OpenReview's ids are written bare.

    An OpenReview file without a single scored row is refused (UsageError, before anything is written): a blank
    line makes openreview-py's `_build_profile_scores` fail on `row[2]`, and any file without rows makes
    `_build_note_scores` delete the venue's scores and post none."""
    if fmt not in TOOL_FORMATS or what not in ("scores", "assignment"):
        raise ValueError(f"no {what} export to {fmt!r}")
    emails = emails or {}
    result = Export("")
    keep: list[tuple[Pair, str]] = []
    for p in pairs:
        example = f"{output_id(p.paper)} {output_id(p.reviewer)}"
        if p.score is None and what == "scores":
            result.no_score.append(example)
            continue
        address = emails.get(p.node, "")
        if fmt in NEEDS_EMAIL and not address:
            result.no_email.append(example)
            continue
        if p.score is None:
            result.no_score.append(example)  # assigned: HotCRP and CMT have no score cell, OpenReview a side file
        keep.append((p, address))
    # The score exports: only scored pairs were kept above.
    scored = [(p, a, p.score) for p, a in keep if p.score is not None]
    if fmt == "openreview":
        if not scored:
            raise UsageError(_nothing_to_upload(what, len(pairs), result.no_score))
        # OpenReview knows its own ids bare: a qualified `openreview:~Ann_Lee1` names no profile there.
        result.text = _csv([openreview_id(p.paper), openreview_id(p.reviewer), _score(v)] for p, _, v in scored)
        result.unscored_rows = _csv([openreview_id(p.paper), openreview_id(p.reviewer)]
                                    for p, _ in keep if p.score is None)
        result.not_profiles = list(dict.fromkeys(output_id(p.reviewer) for p, _ in keep
                                                 if not is_openreview_id(p.node)))
    elif fmt == "hotcrp" and what == "scores":
        result.text = _csv([["paper", "action", "email", "preference"],
                            *([output_id(p.paper), "pref", a, hotcrp_preference(v)] for p, a, v in scored)])
    elif fmt == "hotcrp":
        result.text = _csv([["paper", "action", "email"],
                            *([output_id(p.paper), HOTCRP_ASSIGN_ACTION, a] for p, a in keep)])
    elif what == "scores":
        result.text = "\n".join(["# Paper ID\tEmail\tScore",
                                 *(f"{output_id(p.paper)}\t{a}\t{_score(v)}" for p, a, v in scored)])
    else:
        result.text = cmt_assignments(keep)
    return result


def _nothing_to_upload(what: str, n_pairs: int, no_score: Sequence[str]) -> str:
    """Why an OpenReview file is not written, in one line."""
    pairs = "assigned pair(s)" if what == "assignment" else "suggestion(s)"
    why = (f"none of the {n_pairs:,} {pairs} has a score (no eligible evidence: {examples(no_score)})" if n_pairs
           else f"there is no {pairs[:-3]} to write")
    return (f"openreview: {why}; no file written: OpenReview's upload of a file without a score row deletes the "
            f"venue's affinity scores and posts none")


def unscored_path(out: str) -> str:
    """Where the assigned pairs without a score go beside an OpenReview file: `assign.csv` ->
    `assign.no-affinity.csv`."""
    path = Path(out)
    return str(path.with_name(f"{path.stem}.no-affinity{path.suffix or '.csv'}"))


def cmt_assignments(pairs: Sequence[tuple[Pair, str]]) -> str:
    """CMT's Import Assignments XML: one <submission> per paper (in first-seen order), a <user> per reviewer."""
    by_paper: dict[str, list[str]] = {}
    for p, address in pairs:
        by_paper.setdefault(output_id(p.paper), []).append(address)
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<assignments>"]
    for paper, addresses in by_paper.items():
        lines.append(f"  <submission submissionId={quoteattr(paper)}>")
        lines += [f"    <user email={quoteattr(a)} />" for a in addresses]
        lines.append("  </submission>")
    lines.append("</assignments>")
    return "\n".join(lines)


__all__ = ["NEEDS_EMAIL", "TOOL_FORMATS", "EmailBook", "Export", "Pair", "cmt_assignments", "export",
           "hotcrp_preference", "read_email_file", "unscored_path"]
