"""Declared conflicts (and forced pairs) as the chair's tools write them, read and matched to the graph.

One reader for every file of pairs a chair hands `reviewers recommend|assign` (--conflicts, --forbid,
--force); the layout is told by the file's header and shape:
- OpenReview constraints (openreview-matcher `--constraints`): `paper,profile,value` rows, no header; -1 is
  a conflict, 1 a forced assignment, 0 nothing.
- HotCRP bulk assignments: a header naming `paper` (or `pid`), `action` and `email`; `conflict` rows are
  conflicts, their type read as HotCRP's upload reads it (scholargraph/hotcrp_conflicts.py): a type with no PC
  conflict in it (`no`, `n`, `off`, `pinned unconflicted`, ...) is not one and is counted, a type HotCRP
  refuses (`false`, `clear`, `author`, ...) refuses the file naming the line; other actions are counted.
- HotCRP's PC-conflicts download (Search > Download > PC conflicts): `paper,title,given_name,family_name,email,
  conflicttype` (src/listactions/la_get_sub.php line 55; `first,last` before 2024-09), both read.
- Plain `paper reviewer` pairs (a `paper,reviewer` header is skipped): the --forbid/--force file of old.
A reviewer is given by an id (qualified or bare) or by an email (the Author nodes' `emails`, or --emails)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from scholargraph import hotcrp_conflicts
from scholargraph.conference.conflicts import ConflictChecker
from scholargraph.conference.exchange import EmailBook
from scholargraph.conference.submissions import Query, ReviewerPool
from scholargraph.errors import UsageError
from scholargraph.graph.ids import output_id
from scholargraph.user_files import (
    INTEGER,
    Repeats,
    Warn,
    bad_line,
    examples,
    no_warning,
    require_effect,
    table_lines,
)

OPENREVIEW = "openreview"
HOTCRP = "hotcrp"
HOTCRP_PC_CONFLICTS = "hotcrp pc conflicts"
PAIRS = "pairs"
LAYOUTS = {OPENREVIEW: "OpenReview constraints (paper,profile,-1|0|1)",
           HOTCRP: "HotCRP bulk assignments (paper,action,email)",
           HOTCRP_PC_CONFLICTS: "HotCRP PC conflicts (paper,title,given_name,family_name,email,conflicttype; "
                                "first,last before 2024-09)",
           PAIRS: "`paper reviewer` pairs"}


@dataclass(frozen=True)
class DeclaredPair:
    """One declared pair as the file gives it: the paper, the reviewer (an id or an email), why."""

    paper: str
    reviewer: str
    reason: str
    line: int = 0  # where the file gives it: an email is never echoed, its line is named instead


@dataclass
class DeclaredFile:
    """What a declared file holds: its layout, its conflicts and forced pairs, and the rows that are neither
    (other HotCRP actions, cleared conflicts, OpenReview 0s), counted."""

    path: str
    what: str
    layout: str
    conflicts: list[DeclaredPair] = field(default_factory=list)
    forced: list[DeclaredPair] = field(default_factory=list)
    other_rows: int = 0

    def describe(self) -> str:
        """The stderr line that says how the file was read."""
        parts = [f"{len(self.conflicts):,} conflict(s)"]
        if self.forced:
            parts.append(f"{len(self.forced):,} forced pair(s)")
        if self.other_rows:
            parts.append(f"{self.other_rows:,} row(s) neither (other actions, cleared conflicts, 0s) not used")
        return f"{self.what} {self.path}: read as {LAYOUTS[self.layout]}: {', '.join(parts)}"

    @property
    def has_emails(self) -> bool:
        return any("@" in p.reviewer for p in (*self.conflicts, *self.forced))

    @property
    def rows(self) -> int:
        """The rows read (each repeat once): what `require_applied` says none of applies."""
        return len(self.conflicts) + len(self.forced) + self.other_rows


def _reason(layout: str, kind: str = "") -> str:
    source = {OPENREVIEW: "openreview", HOTCRP: "hotcrp", HOTCRP_PC_CONFLICTS: "hotcrp", PAIRS: "file"}[layout]
    return f"declared ({source}{': ' + kind if kind else ''})"


def read_declared(path: str, what: str, plain: str = "conflict", warn: Warn = no_warning) -> DeclaredFile:
    """The pairs of a declared file, its layout detected (see the module), each pair once (a repeat is
    reported through `warn`; a pair both a conflict and forced is refused). `plain`: what a plain pair is
    ("conflict" for --conflicts/--forbid, "forced" for --force)."""
    out = _read_layout(path, what, plain)
    _keep_once(out, warn)
    return out


def _keep_once(out: DeclaredFile, warn: Warn) -> None:
    """The file's pairs, each kept at its first line; an email in any case names the same reviewer."""
    repeats = Repeats(out.what, out.path, "pair")
    given = sorted([(p, False) for p in out.conflicts] + [(p, True) for p in out.forced], key=lambda t: t[0].line)
    kept = [(p, forced) for p, forced in given
            if repeats.first((p.paper, p.reviewer.lower() if "@" in p.reviewer else p.reviewer), p.line, forced)]
    out.conflicts = [p for p, forced in kept if not forced]
    out.forced = [p for p, forced in kept if forced]
    repeats.report(warn)


def _read_layout(path: str, what: str, plain: str) -> DeclaredFile:
    rows = list(table_lines(path, what))
    if not rows:
        raise bad_line(what, path, None, "holds no pairs")
    header = [c.strip().lower() for c in rows[0][1]]
    paper_col = next((header.index(n) for n in ("paper", "pid") if n in header), None)
    if paper_col is not None and "action" in header and ("email" in header or "user" in header):
        return _read_hotcrp(path, what, rows, header, paper_col)
    if paper_col is not None and "email" in header and "conflicttype" in header:
        return _read_pc_conflicts(path, what, rows, header, paper_col)
    first = rows[0][1]
    if len(first) >= 3 and INTEGER.match(first[2]):  # a 4th column: refused by the reader, never read as pairs
        return _read_openreview(path, what, rows)
    out = DeclaredFile(path, what, PAIRS)
    target = out.forced if plain == "forced" else out.conflicts
    for k, (n, parts) in enumerate(rows):
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise bad_line(what, path, n, f"expected `paper reviewer`, got {' '.join(parts)[:60]!r}")
        if k == 0 and parts[0].lower() in ("paper", "paper_id", "submission"):
            continue
        target.append(DeclaredPair(parts[0], parts[1], _reason(PAIRS, what.lstrip("-")), n))
    if not target:
        raise bad_line(what, path, None, "holds no pairs (expected `paper reviewer` lines)")
    return out


def _cell(parts: list[str], col: int | None) -> str:
    return parts[col].strip() if col is not None and col < len(parts) else ""


def _read_hotcrp(path: str, what: str, rows, header: list[str], paper_col: int) -> DeclaredFile:
    out = DeclaredFile(path, what, HOTCRP)
    action_col = header.index("action")
    email_col = header.index("email") if "email" in header else header.index("user")
    type_col = next((header.index(n) for n in ("conflict type", "conflicttype", "conflict") if n in header), None)
    for n, parts in rows[1:]:
        paper, action, email = _cell(parts, paper_col), _cell(parts, action_col).lower(), _cell(parts, email_col)
        if not paper or not action:
            raise bad_line(what, path, n, "a row without its paper or its action")
        if action != "conflict":
            out.other_rows += 1
            continue
        text = _cell(parts, type_col)
        # src/assigners/a_conflict.php lines 102-107 (kohler/hotcrp 0f25da6c): the type after a `old:` matcher
        # prefix; an author or contact type is refused there. An empty cell reads as the column's absence, "on".
        ct = hotcrp_conflicts.parse_assignment(text.split(":", 1)[-1] or "on")
        if ct is None or hotcrp_conflicts.is_author(ct):
            raise bad_line(what, path, n, f"conflict type {text[:40]!r} is not one HotCRP's upload takes "
                           "(src/conflict.php parse_assignment): collaborator, advisor, institutional, personal, "
                           "other, administrative, yes or no, optionally pinned")
        if not hotcrp_conflicts.is_pc_conflict(ct):
            out.other_rows += 1
            continue
        if not email:
            raise bad_line(what, path, n, "a conflict row without the reviewer's email")
        out.conflicts.append(DeclaredPair(paper, email, _reason(HOTCRP, hotcrp_conflicts.type_words(ct)), n))
    return out


def _read_pc_conflicts(path: str, what: str, rows, header: list[str], paper_col: int) -> DeclaredFile:
    out = DeclaredFile(path, what, HOTCRP_PC_CONFLICTS)
    email_col, type_col = header.index("email"), header.index("conflicttype")
    for n, parts in rows[1:]:
        paper, email = _cell(parts, paper_col), _cell(parts, email_col)
        if not paper or not email:
            raise bad_line(what, path, n, "a row without its paper or the PC member's email")
        text = _cell(parts, type_col)
        # HotCRP lists conflicted pairs only, each type in its display text (src/listactions/la_get_sub.php
        # lines 62-73, kohler/hotcrp 0f25da6c): a text it does not write (a site's translation) is a conflict.
        ct = hotcrp_conflicts.parse_text(text)
        if ct is not None and not hotcrp_conflicts.is_conflicted(ct):
            out.other_rows += 1
            continue
        kind = " ".join(text.lower().split()) if ct is None else hotcrp_conflicts.type_words(ct)
        out.conflicts.append(DeclaredPair(paper, email, _reason(HOTCRP_PC_CONFLICTS, kind), n))
    return out


def _read_openreview(path: str, what: str, rows) -> DeclaredFile:
    out = DeclaredFile(path, what, OPENREVIEW)
    for n, parts in rows:
        if len(parts) != 3 or not parts[0] or not parts[1] or not INTEGER.match(parts[2]) \
                or int(parts[2]) not in (-1, 0, 1):
            raise bad_line(what, path, n, f"expected OpenReview's `paper,profile,-1|0|1`, got {','.join(parts)[:60]!r}")
        value = int(parts[2])
        if value == 0:
            out.other_rows += 1
        else:
            (out.conflicts if value < 0 else out.forced).append(DeclaredPair(parts[0], parts[1], _reason(OPENREVIEW),
                                                                             n))
    return out


# --- matched to the graph -----------------------------------------------------------------------------------


@dataclass
class Matched:
    """Declared pairs matched to submissions and author nodes: `by_query[query id][author node] = reason`,
    `forced` as (query id, author node), and what named nothing known (`paper reviewer` examples)."""

    by_query: dict[str, dict[str, str]] = field(default_factory=dict)
    forced: list[tuple[str, str]] = field(default_factory=list)
    unknown_reviewer: list[str] = field(default_factory=list)
    unknown_paper: list[str] = field(default_factory=list)

    def warnings(self, what: str) -> list[str]:
        lines = []
        if self.unknown_reviewer:
            lines.append(f"warning: {what}: {len(self.unknown_reviewer):,} pair(s) name a reviewer (id or email) the "
                         f"graph does not know: not applied, {examples(self.unknown_reviewer)}")
        if self.unknown_paper:
            lines.append(f"warning: {what}: {len(self.unknown_paper):,} pair(s) name no submission of this run: not "
                         f"applied, {examples(self.unknown_paper)}")
        return lines

    def count(self) -> int:
        return sum(len(v) for v in self.by_query.values())

    def reasons(self) -> dict[str, int]:
        """How many matched conflicts each reason gives."""
        out: dict[str, int] = {}
        for found in self.by_query.values():
            for reason in found.values():
                out[reason] = out.get(reason, 0) + 1
        return out


def match_declared(files: Sequence[DeclaredFile], queries: Sequence[Query], paper_forms: Mapping[str, str],
                   resolve: Callable[[str, list[str]], Mapping[str, str]], book: EmailBook | None) -> Matched:
    """The files' pairs as (query id, author node id): a paper by its query id or the form it was given in
    (`paper_forms`: node id -> given), else resolved; a reviewer by its email (`book`) or its id (`resolve(kind,
    given) -> {given: node id}`). Nothing is dropped silently: what names nothing known is listed."""
    out = Matched()
    pairs = [(p, False) for f in files for p in f.conflicts] + [(p, True) for f in files for p in f.forced]
    if not pairs:
        return out
    by_given = {q.id: q.id for q in queries}
    by_given.update({given: node for node, given in paper_forms.items() if node in by_given})
    rest = sorted({p.paper for p, _ in pairs if p.paper not in by_given})
    if rest:
        by_given.update({g: n for g, n in resolve("paper", rest).items() if n in {q.id for q in queries}})
    ids = sorted({p.reviewer for p, _ in pairs if "@" not in p.reviewer})
    nodes = dict(resolve("author", ids)) if ids else {}
    for p, forced in pairs:
        # Emails are personal data: an example names the file's line instead.
        who = f"(the email of line {p.line})" if "@" in p.reviewer else output_id(p.reviewer)
        example = f"{output_id(p.paper)} {who}"
        node = (book.node_of(p.reviewer) if book is not None else None) if "@" in p.reviewer else nodes.get(p.reviewer)
        if node is None:
            out.unknown_reviewer.append(example)
        elif p.paper not in by_given:
            out.unknown_paper.append(example)
        elif forced:
            out.forced.append((by_given[p.paper], node))
        else:
            out.by_query.setdefault(by_given[p.paper], {}).setdefault(node, p.reason)
    return out


@dataclass
class DeclaredChecker(ConflictChecker):
    """recommend's conflict rule with the declared pairs added: the graph's conflicts (none when `enabled` is
    False, --no-coi) and, per submission, the pool reviewers a file declares (`declared[query id]`)."""

    declared: dict[str, dict[str, str]] = field(default_factory=dict)

    def pool_rows(self, pool: ReviewerPool, query: Query) -> np.ndarray:
        rows = super().pool_rows(pool, query)
        extra = [pool.row(a) for a in self.declared.get(query.id, {})]
        return np.union1d(rows, np.array([r for r in extra if r >= 0], dtype=np.int64)).astype(np.int64)


def require_applied(files: Sequence[DeclaredFile], applied: int, allow_empty: bool, warn: Warn) -> None:
    """--conflicts of which no pair applies to the run (`applied`: the pairs it rules out or forces) would
    change nothing, silently: refused unless `allow_empty` (user_files.require_effect)."""
    if not applied:
        for f in files:
            require_effect(f.what, f.path, f.rows, "row", allow_empty, warn)


def require_known(matched: Matched, what: str) -> None:
    """--forbid and --force are the chair's explicit pairs: one naming nothing known is an error, as before."""
    bad = matched.unknown_reviewer + matched.unknown_paper
    if bad:
        raise UsageError(f"{what}: {len(bad)} pair(s) name no submission or no known reviewer: {examples(bad)}")


__all__ = ["HOTCRP", "HOTCRP_PC_CONFLICTS", "LAYOUTS", "OPENREVIEW", "PAIRS", "DeclaredChecker", "DeclaredFile",
           "DeclaredPair", "Matched", "match_declared", "read_declared", "require_applied", "require_known"]
