"""HotCRP's PC member list in: members matched to the graph's authors, their emails and affiliations stored."""

from __future__ import annotations

import csv
import datetime
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scholargraph.graph.ids import MAX_EXAMPLES, output_id
from scholargraph.graph.records import affiliation_entry, fold_name
from scholargraph.ingest.normalize import clean_text
from scholargraph.ingest.openreview import merge_author_details
from scholargraph.user_files import bad_line, read_text

# The CSV a chair downloads from HotCRP's Users page (PC members, select all, Download "PC info"; users.php
# `pcinfo` in kohler/hotcrp): first,last,email[,preferred_email],roles[,tags],affiliation,collaborators,
# follow[,phone][,topic: ...]. The "Names and emails" download (first,last,email,affiliation) and the bulk
# account upload's `name` column are read too. Collaborators (declared conflicts) are not read here.
REQUIRED = ("email",)


@dataclass(frozen=True)
class PcMember:
    line: int
    name: str
    email: str
    affiliation: str | None


def read_pc_list(path: str, what: str = "PC list") -> list[PcMember]:
    """The members of a HotCRP PC info CSV; a missing column, or a row without an email or a name, is a
    UsageError naming the file and the line (read before the store is opened)."""
    text = read_text(path, what)
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise bad_line(what, path, None, f"not CSV ({exc})") from None
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise bad_line(what, path, 1, "no header (expected HotCRP's PC info columns first,last,email,...)")
    header = [cell.strip().lower() for cell in rows[0]]
    if "email" not in header or not ({"first", "last"} & set(header) or "name" in header):
        raise bad_line(what, path, 1, f"expected the columns first,last,email (HotCRP's PC info), got "
                       f"{','.join(header)[:80]}")
    members = []
    for n, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        cells = dict(zip(header, (cell.strip() for cell in row)))
        email = cells.get("email", "").lower()
        name = cells.get("name") or " ".join(p for p in (cells.get("first"), cells.get("last")) if p)
        if "@" not in email:
            raise bad_line(what, path, n, "no email address in the email column")
        if not name.strip():
            raise bad_line(what, path, n, "no name (first, last or name)")
        members.append(PcMember(n, clean_text(name) or name, email, clean_text(cells.get("affiliation", ""))))
    if not members:
        raise bad_line(what, path, None, "holds no PC members")
    return members


@dataclass
class PcMatch:
    """Members matched to graph authors, and those that matched none or several (by line)."""

    matched: dict[str, PcMember] = field(default_factory=dict)  # author id -> member
    unmatched: list[PcMember] = field(default_factory=list)
    ambiguous: list[tuple[PcMember, list[str]]] = field(default_factory=list)

    def lines(self, path: str) -> list[str]:
        """The summary: counts, and a few examples of what did not match by line and name (never an email)."""
        out = [f"PC members: {len(self.matched)} matched to graph authors"]
        if self.unmatched:
            shown = ", ".join(f"line {m.line} {m.name}" for m in self.unmatched[:MAX_EXAMPLES])
            out.append(f"{len(self.unmatched)} matched no author of the graph (left out), e.g. {shown}")
        if self.ambiguous:
            shown = "; ".join(f"line {m.line} {m.name}: {' '.join(output_id(i) for i in ids[:3])}"
                              for m, ids in self.ambiguous[:MAX_EXAMPLES])
            out.append(f"{len(self.ambiguous)} matched several authors (left out; put the one meant in "
                       f"the graph's ids in --pool instead), e.g. {shown}")
        return out


def match_pc(store, members: Sequence[PcMember]) -> PcMatch:
    """Each member's author: the one whose stored emails hold the member's email, else the one whose folded
    name (or name-keyed id) is the member's; several candidates are ambiguous, none unmatched."""
    ids, props = store.read_nodes("Author", ["name", "emails"])
    by_email: dict[str, set[str]] = {}
    by_name: dict[str, set[str]] = {}
    for aid, name, emails in zip(ids, props["name"], props["emails"]):
        for email in emails or ():
            by_email.setdefault(email, set()).add(aid)
        if name:
            by_name.setdefault(fold_name(name), set()).add(aid)
        if aid.startswith("name:"):
            by_name.setdefault(aid[5:].replace("_", " "), set()).add(aid)
    result = PcMatch()
    for member in members:
        found = by_email.get(member.email) or by_name.get(fold_name(member.name), set())
        if len(found) == 1:
            result.matched[next(iter(found))] = member
        elif found:
            result.ambiguous.append((member, sorted(found)))
        else:
            result.unmatched.append(member)
    return result


def store_pc_details(store, match: PcMatch, year: int | None = None) -> int:
    """The matched members' emails and current affiliations (from `year`, this year by default, on) onto
    their authors; set unions, so importing the list again changes nothing."""
    year = year or datetime.date.today().year
    details = {aid: ([m.email], [affiliation_entry(m.affiliation, year, None)] if m.affiliation else [])
               for aid, m in match.matched.items()}
    return merge_author_details(store, details)


def write_pool(match: PcMatch, path: Path) -> None:
    """The matched authors' ids, one per line: a --pool file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(output_id(aid) + "\n" for aid in sorted(match.matched)), encoding="utf-8")
