"""HotCRP's downloads in: the PC list (members matched to the graph's authors, emails and affiliations stored) and
the papers' JSON (a --queries file, and its declared PC conflicts as a --conflicts file)."""

from __future__ import annotations

import csv
import datetime
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scholargraph.graph.ids import MAX_EXAMPLES, output_id
from scholargraph.graph.records import affiliation_entry, fold_id, fold_name, paper_text
from scholargraph.ingest.normalize import clean_text
from scholargraph.ingest.openreview import ChairFile, merge_author_details, rejected_entry
from scholargraph.user_files import bad_line, parse_json, read_text

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


# --- the papers -------------------------------------------------------------------------------------------

# HotCRP's paper JSON (Search > select papers > Download > "JSON"; the keys are the `json_key`s of
# kohler/hotcrp etc/intrinsicoptions.json, written by src/paperexport.php): an array of {pid, title,
# abstract, authors: [{email, first, last, affiliation}], status, submitted, submitted_at, withdrawn,
# topics, pc_conflicts: {email: conflict type or true}, ...}. Keys not read here are ignored.
PAPERS = "hotcrp-papers"
CONFLICTS_HEADER = ("paper", "action", "email", "conflicttype")  # a HotCRP bulk-assignment upload
_NO_CONFLICT = (False, None, "", "none", "no")


@dataclass
class HotcrpPapers(ChairFile):
    """The papers as --queries records, the withdrawn ones counted, the declared conflicts as (paper id,
    email, type), and pc_conflicts entries that name no email (counted, left out)."""

    withdrawn: int = 0
    conflicts: list[tuple[str, str, str]] = field(default_factory=list)
    bad_conflicts: int = 0

    def lines(self) -> list[str]:
        """The summary: counts only (never an email)."""
        out = [f"papers: {len(self.records)} read" + (f", {self.withdrawn} withdrawn (skipped)" if self.withdrawn
                                                      else "")]
        if self.rejected:
            shown = "; ".join(f"record {r['record']}: {r['reason']}" for r in self.rejected[:MAX_EXAMPLES])
            out.append(f"{len(self.rejected)} bad papers quarantined, e.g. {shown}")
        if self.bad_conflicts:
            out.append(f"{self.bad_conflicts} pc_conflicts entries without an email address (left out)")
        return out


def _name(author: dict) -> str | None:
    given = author.get("name")
    parts = [given] if isinstance(given, str) else [author.get(k) for k in ("first", "last")]
    return clean_text(" ".join(p for p in parts if isinstance(p, str)))


def paper_record(paper: dict) -> dict | str:
    """A HotCRP paper as a --queries record {id, title, abstract, authors: [{name, email?, affiliation?}],
    year?} (year: the one it was submitted in), or why it cannot be one."""
    pid = paper.get("pid")
    if isinstance(pid, bool) or not isinstance(pid, (int, str)) or not str(pid).strip():
        return "missing id: no pid"
    title, abstract = paper.get("title"), paper.get("abstract")
    record: dict = {"id": fold_id(str(pid).strip()),
                    "title": clean_text(title) if isinstance(title, str) else None,
                    "abstract": clean_text(abstract) if isinstance(abstract, str) else None}
    if not paper_text(record["title"], record["abstract"]):
        return "missing title: no title and no abstract"
    authors = paper.get("authors", [])
    if not isinstance(authors, list) or not all(isinstance(a, dict) for a in authors):
        return "authors: expected a list of {email, first, last, affiliation} objects"
    record["authors"] = []
    for author in authors:
        entry: dict = {"name": _name(author) or ""}
        email = author.get("email")
        if isinstance(email, str) and "@" in email:
            entry["email"] = email.strip().lower()
        affiliation = author.get("affiliation")
        if isinstance(affiliation, str) and clean_text(affiliation):
            entry["affiliation"] = clean_text(affiliation)
        record["authors"].append(entry)
    submitted = paper.get("submitted_at")
    if isinstance(submitted, (int, float)) and not isinstance(submitted, bool) and submitted > 0:
        # The co-author and institution windows end at the year it was submitted, as HotCRP's chair sees it.
        record["year"] = datetime.datetime.fromtimestamp(submitted, datetime.UTC).year
    return record


def read_papers(path: str, what: str = PAPERS) -> HotcrpPapers:
    """HotCRP's paper JSON: a file that is not JSON, or not an array (or one object) of papers, is a
    UsageError naming it; a paper that cannot be a submission is a quarantine entry naming its record."""
    data = parse_json(read_text(path, what), what, path)
    papers = [data] if isinstance(data, dict) else data
    if not isinstance(papers, list):
        raise bad_line(what, path, None, f"expected HotCRP's paper JSON (an array of papers), got "
                       f"{type(data).__name__}")
    if not papers:
        raise bad_line(what, path, None, "holds no papers")
    out = HotcrpPapers(files=[path])
    for k, paper in enumerate(papers, 1):
        record = paper_record(paper) if isinstance(paper, dict) else "not a JSON object"
        if isinstance(paper, dict) and (paper.get("withdrawn") is True or paper.get("status") == "withdrawn"):
            out.withdrawn += 1
            continue
        if isinstance(record, str):
            excerpt = json.dumps(paper, ensure_ascii=False)[:500]
            out.rejected.append({**rejected_entry(path, 0, record, excerpt, PAPERS), "record": k})
            continue
        out.records.append(record)
        conflicts = paper.get("pc_conflicts") or {}
        if not isinstance(conflicts, dict):
            out.bad_conflicts += 1
            continue
        for email, kind in conflicts.items():
            if kind in _NO_CONFLICT:
                continue
            if not isinstance(email, str) or "@" not in email:
                out.bad_conflicts += 1
                continue
            out.conflicts.append((record["id"], email.strip().lower(), "" if kind is True else str(kind).lower()))
    return out


def write_conflicts(conflicts: Sequence[tuple[str, str, str]], path: Path) -> None:
    """The declared conflicts as a HotCRP bulk-assignment CSV (paper,action,email,conflicttype; action
    `conflict`): what `reviewers recommend|assign --conflicts` reads, and what HotCRP uploads back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CONFLICTS_HEADER)
        writer.writerows((output_id(paper), "conflict", email, kind) for paper, email, kind in conflicts)
