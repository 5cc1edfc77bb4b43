"""HotCRP's downloads in: the PC list (members matched to the graph's authors, emails and affiliations stored) and
the papers' JSON (a --queries file, and its declared PC conflicts as a --conflicts file)."""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scholargraph.graph.ids import MAX_EXAMPLES, output_id
from scholargraph.graph.records import affiliation_entry, fold_id, fold_name, paper_text
from scholargraph.hotcrp_conflicts import CT_DEFAULT, is_author, upload_type
from scholargraph.hotcrp_conflicts import parse_json as hotcrp_conflict
from scholargraph.ingest.normalize import clean_text
from scholargraph.ingest.openreview import ChairFile, merge_author_details, rejected_entry
from scholargraph.user_files import Repeats, Warn, bad_line, count, no_warning, parse_json, read_text

# The CSV a chair downloads from HotCRP's Users page (PC members, select all, Download "PC info"), in
# kohler/hotcrp src/pages/p_users.php `handle_pcinfo`: given_name,family_name,email,affiliation[,orcid][,country]
# [,phone][,disabled][,preferred_email],roles[,tags],collaborators,follow[,topic: ...] since 2024-09 (first,last,
# email,... before). The "Names and emails" download (given_name,family_name,email,affiliation[,country][,orcid],
# `handle_nameemail`) and the bulk account upload's `name` column are read too. Collaborators (declared
# conflicts) are not read here.
REQUIRED = ("email",)
# The names HotCRP's own account upload takes for these columns (src/userstatus.php `$csv_synonyms`), matched
# without case; the paper JSON's author keys are matched against them too (src/author.php `assign_keyed` reads
# firstName|first|givenName|given, lastName|last|familyName|family, name|fullName; the export writes given_name,
# family_name since 2026-02, first, last before).
GIVEN_NAME_KEYS = ("given_name", "givenname", "given", "firstname", "first_name", "first")
FAMILY_NAME_KEYS = ("family_name", "familyname", "family", "lastname", "last_name", "last", "surname")
FULL_NAME_KEYS = ("name", "fullname")


@dataclass(frozen=True)
class PcMember:
    line: int
    name: str  # "" for a member listed without a name: matched by email only
    email: str
    affiliation: str | None

    def example(self) -> str:
        """How a summary names the member: by line and name, never by email."""
        return f"line {self.line} {self.name or '(no name)'}"


def person_name(fields: dict[str, object]) -> str:
    """The name a HotCRP person record gives (`fields` keyed in lower case): its full name, else its given and
    family names joined; "" when it gives none."""

    def first_text(keys: Sequence[str]) -> str:
        for key in keys:
            value = fields.get(key)
            text = clean_text(value) if isinstance(value, str) else None
            if text:
                return text
        return ""

    given, family = first_text(GIVEN_NAME_KEYS), first_text(FAMILY_NAME_KEYS)
    return first_text(FULL_NAME_KEYS) or " ".join(p for p in (given, family) if p)


def read_pc_list(path: str, what: str = "PC list", warn: Warn = no_warning) -> list[PcMember]:
    """The rows of a HotCRP PC info CSV, each with the line it starts on; a missing column, or a row without an
    email, is a UsageError naming the file and the line (read before the store is opened). A member without a
    name is kept with name "": match_pc finds members by email first, and says how many had no name. A member
    listed twice (the same email) is kept once and reported through `warn`; listed again with another name or
    affiliation, the file is refused naming both lines (user_files.Repeats)."""
    reader = csv.reader(io.StringIO(read_text(path, what)))
    repeats = Repeats(what, path, "PC member", by="email")
    members = []
    try:
        header = [cell.strip().lower() for cell in next(reader, [])]
        if not any(header):
            raise bad_line(what, path, 1, "no header (expected HotCRP's PC info columns given_name,family_name,"
                           "email,...)")
        if "email" not in header or not set(GIVEN_NAME_KEYS + FAMILY_NAME_KEYS + FULL_NAME_KEYS) & set(header):
            raise bad_line(what, path, 1, f"expected the columns given_name,family_name,email (HotCRP's PC info; "
                           f"first,last,email before 2024-09), got {','.join(header)[:80]}")
        for row in reader:
            # A record ends on reader.line_num; a quoted cell (collaborators) may have spanned several lines.
            n = reader.line_num - sum(cell.count("\n") for cell in row)
            if not any(cell.strip() for cell in row):
                continue
            cells: dict[str, object] = {column: cell.strip() for column, cell in zip(header, row) if column}
            email = str(cells.get("email", "")).lower()
            name = person_name(cells)
            if "@" not in email:
                raise bad_line(what, path, n, "no email address in the email column")
            affiliation = clean_text(str(cells.get("affiliation", "")))
            if repeats.first(email, n, (name, affiliation)):
                members.append(PcMember(n, name, email, affiliation))
    except csv.Error as exc:
        raise bad_line(what, path, reader.line_num or None, f"not CSV ({exc})") from None
    if not members:
        raise bad_line(what, path, None, "holds no PC members")
    repeats.report(warn)
    return members


@dataclass
class PcMatch:
    """Members matched to graph authors, and those that matched none or several (by line); those listed
    without a name, which only their email can match."""

    matched: dict[str, PcMember] = field(default_factory=dict)  # author id -> member
    unmatched: list[PcMember] = field(default_factory=list)
    ambiguous: list[tuple[PcMember, list[str]]] = field(default_factory=list)
    nameless: list[PcMember] = field(default_factory=list)

    def lines(self, path: str) -> list[str]:
        """The summary: counts, and a few examples of what did not match by line and name (never an email)."""
        out = [f"PC members: {len(self.matched)} matched to graph authors"]
        if self.nameless:
            shown = ", ".join(f"line {m.line}" for m in self.nameless[:MAX_EXAMPLES])
            out.append(f"{count(len(self.nameless), 'member', 'members')} without a name (given_name, family_name "
                       f"or name): matched by email only, e.g. {shown}")
        if self.unmatched:
            shown = ", ".join(m.example() for m in self.unmatched[:MAX_EXAMPLES])
            out.append(f"{len(self.unmatched)} matched no author of the graph (left out), e.g. {shown}")
        if self.ambiguous:
            shown = "; ".join(f"{m.example()}: {' '.join(output_id(i) for i in ids[:3])}"
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
    result = PcMatch(nameless=[m for m in members if not m.name])
    for member in members:
        found = by_email.get(member.email) or (by_name.get(fold_name(member.name), set()) if member.name else set())
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
# abstract, authors: [{email, given_name, family_name, affiliation}] (first, last before 2026-02), status,
# submitted, submitted_at, withdrawn, topics, pc_conflicts: {email: conflict type or true}, ...}. Its import
# (src/paperstatus.php) also takes `id` for `pid`, and pc_conflicts as a list of emails. Keys not read here
# are ignored.
PAPERS = "hotcrp-papers"
CONFLICTS_HEADER = ("paper", "action", "email", "conflicttype")  # a HotCRP bulk-assignment upload

# HotCRP's conflict types are read by scholargraph/hotcrp_conflicts.py, the one parser conference/declared.py
# uses too: hotcrp_conflict is its parse_json, upload_type the cell that writes a conflict back.


@dataclass
class HotcrpPapers(ChairFile):
    """The papers as --queries records (each pid once), the withdrawn ones counted, the declared conflicts as
    (paper id, email, conflicttype) rows HotCRP's upload accepts, and what was not written and why."""

    withdrawn: int = 0
    conflicts: list[tuple[str, str, str]] = field(default_factory=list)
    repeated: list[tuple[int, int]] = field(default_factory=list)  # (line, line it repeats): identical, kept once
    nameless_authors: list[str] = field(default_factory=list)  # "pid 7 author 2": only an email, kept
    author_conflicts: int = 0  # author or contact conflicts only: HotCRP's upload cannot set them
    unknown_types: list[str] = field(default_factory=list)  # written as CT_DEFAULT, "collaborator"
    not_emails: int = 0  # pc_conflicts entries that name no email address
    bad_pc_conflicts: int = 0  # papers whose pc_conflicts is neither an object nor a list

    def lines(self) -> list[str]:
        """The summary: counts, and examples that are never an email."""
        out = [f"papers: {len(self.records)} read" + (f", {self.withdrawn} withdrawn (skipped)" if self.withdrawn
                                                      else "")]
        if self.nameless_authors:
            shown = ", ".join(self.nameless_authors[:MAX_EXAMPLES])
            out.append(f"{count(len(self.nameless_authors), 'author', 'authors')} without a name, only an email "
                       f"(kept: a conflict by email domain and institution, none by name), e.g. {shown}")
        if self.rejected:
            shown = "; ".join(f"record {r['record']}: {r['reason']}" for r in self.rejected[:MAX_EXAMPLES])
            out.append(f"{len(self.rejected)} bad papers quarantined, e.g. {shown}")
        if self.author_conflicts:
            out.append(f"{count(self.author_conflicts, 'author conflict', 'author conflicts')} not written "
                       "(HotCRP's upload refuses author and contact types: authorship is HotCRP's own record; here "
                       "the paper's listed authors are its conflicts by name, email domain and institution)")
        if self.unknown_types:
            shown = ", ".join(dict.fromkeys(t[:40] for t in self.unknown_types[:MAX_EXAMPLES]))
            out.append(f"{count(len(self.unknown_types), 'conflict type', 'conflict types')} HotCRP does not "
                       f"know ({shown}), written as {upload_type(CT_DEFAULT)} (HotCRP's default type, which its own "
                       "JSON import gives them)")
        if self.not_emails:
            out.append(f"{count(self.not_emails, 'pc_conflicts entry', 'pc_conflicts entries')} without an email "
                       "address (left out)")
        if self.bad_pc_conflicts:
            papers = count(self.bad_pc_conflicts, "paper's", "papers'")
            out.append(f"{papers} pc_conflicts neither an object nor a list of emails (left out)")
        return out


def paper_record(paper: dict) -> dict | str:
    """A HotCRP paper as a --queries record {id, title, abstract, authors: [{name?, email?, affiliation?}],
    year?} (year: the one it was submitted in), or why it cannot be one. An author needs a name or an email:
    HotCRP takes an author with only an email (src/options/o_authors.php lines 61-74 warn only about one with
    nothing but an affiliation; src/author.php lines 390-405 leave empty name fields out of the export)."""
    pid = paper.get("pid") if paper.get("pid") is not None else paper.get("id")
    if isinstance(pid, bool) or not isinstance(pid, (int, str)) or not str(pid).strip():
        return "missing id: no pid (or id)"
    title, abstract = paper.get("title"), paper.get("abstract")
    record: dict = {"id": fold_id(str(pid).strip()),
                    "title": clean_text(title) if isinstance(title, str) else None,
                    "abstract": clean_text(abstract) if isinstance(abstract, str) else None}
    if not paper_text(record["title"], record["abstract"]):
        return "missing title: no title and no abstract"
    authors = paper.get("authors", [])
    if not isinstance(authors, list) or not all(isinstance(a, dict) for a in authors):
        return "authors: expected a list of {email, given_name, family_name, affiliation} objects"
    record["authors"] = []
    for n, author in enumerate(authors, 1):
        fields = {str(key).lower(): value for key, value in author.items()}
        name = person_name(fields)
        email = fields.get("email")
        email = email.strip().lower() if isinstance(email, str) and "@" in email else None
        if not name and not email:
            # Neither a conflict by name nor one by email domain: refuse the paper rather than guess.
            return (f"authors: author {n} has neither a name (given_name/family_name, first/last or name) nor an "
                    f"email (it has {', '.join(sorted(fields))[:80] or 'no keys'})")
        # Without a name (HotCRP takes an author by email alone) the author still counts by email domain and
        # institution; read_papers reports them.
        entry: dict = {"name": name} if name else {}
        if email:
            entry["email"] = email
        affiliation = fields.get("affiliation")
        if isinstance(affiliation, str) and clean_text(affiliation):
            entry["affiliation"] = clean_text(affiliation)
        record["authors"].append(entry)
    submitted = paper.get("submitted_at")
    if isinstance(submitted, (int, float)) and not isinstance(submitted, bool) and submitted > 0:
        # The co-author and institution windows end at the year it was submitted, as HotCRP's chair sees it.
        record["year"] = datetime.datetime.fromtimestamp(submitted, datetime.UTC).year
    return record


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _record_lines(text: str, count: int) -> list[int]:
    """The line each element of the JSON array `text` starts on, for the quarantine (0s when its elements
    cannot be walked)."""
    decoder = json.JSONDecoder()

    def skip_space(pos: int) -> int:
        found = _JSON_SPACE.match(text, pos)
        return found.end() if found else pos

    lines: list[int] = []
    line, counted = 1, 0  # the newlines before `counted`, counted once
    pos = skip_space(0)
    if text.startswith("[", pos):
        pos = skip_space(pos + 1)
        try:
            while pos < len(text) and text[pos] != "]":
                line, counted = line + text.count("\n", counted, pos), pos
                lines.append(line)
                pos = skip_space(decoder.raw_decode(text, pos)[1])
                if text.startswith(",", pos):
                    pos = skip_space(pos + 1)
        except ValueError:
            lines = []
    return lines if len(lines) == count else [0] * count


def _conflict_entries(paper: dict, out: HotcrpPapers) -> list[tuple[object, object]]:
    """(email, value) of a paper's pc_conflicts: an object {email: type}, or a list of emails, each a conflict."""
    entries = paper.get("pc_conflicts")
    if isinstance(entries, dict):
        return list(entries.items())
    if isinstance(entries, list):
        return [(email, True) for email in entries]
    if entries is not None:
        out.bad_pc_conflicts += 1
    return []


def read_papers(path: str, what: str = PAPERS, warn: Warn = no_warning) -> HotcrpPapers:
    """HotCRP's paper JSON: a file that is not JSON, or not an array (or one object) of papers, is a
    UsageError naming it; a paper that cannot be a submission is a quarantine entry naming its record and the
    line it starts on. A pid seen again keeps its first paper: the same paper again is kept once and reported
    through `warn` (user_files.Repeats, as every user file), another paper under that pid is quarantined
    ("pid 6 repeated with other content, line 2 kept"), as a dump's bad record is, and the run goes on."""
    text = read_text(path, what)  # without a byte-order mark, which the JSON parser would refuse
    data = parse_json(text, what, path)
    papers = [data] if isinstance(data, dict) else data
    if not isinstance(papers, list):
        raise bad_line(what, path, None, f"expected HotCRP's paper JSON (an array of papers), got "
                       f"{type(data).__name__}")
    if not papers:
        raise bad_line(what, path, None, "holds no papers")
    out = HotcrpPapers(files=[path])
    starts = _record_lines(text, len(papers)) if isinstance(data, list) else [1]
    kept: dict[str, tuple[str, dict]] = {}  # pid -> (where its kept paper is, the paper)
    repeats = Repeats(what, path, "paper", by="pid")
    written: set[tuple[str, str]] = set()
    for k, (paper, line) in enumerate(zip(papers, starts), 1):
        record = paper_record(paper) if isinstance(paper, dict) else "not a JSON object"
        if isinstance(paper, dict) and (paper.get("withdrawn") is True or paper.get("status") == "withdrawn"):
            out.withdrawn += 1
            continue
        if isinstance(record, str):
            excerpt = json.dumps(paper, ensure_ascii=False)[:500]
            out.rejected.append({**rejected_entry(path, line, record, excerpt, PAPERS), "record": k})
            continue
        pid = record["id"]
        if pid in kept and kept[pid][1] != paper:
            reason = f"pid {output_id(pid)} repeated with other content, {kept[pid][0]} kept"
            out.rejected.append({**rejected_entry(path, line, reason, json.dumps(paper, ensure_ascii=False)[:500],
                                                  PAPERS), "record": k})
            continue
        if not repeats.first(pid, line, paper):
            continue
        kept[pid] = (f"line {line}" if line else f"record {k}", paper)
        out.records.append(record)
        out.nameless_authors += [f"pid {output_id(pid)} author {n}" for n, a in enumerate(record["authors"], 1)
                                 if "name" not in a]
        for email, value in _conflict_entries(paper, out):
            if not isinstance(email, str) or "@" not in email:
                out.not_emails += 1
                continue
            conflict = hotcrp_conflict(value)
            if conflict is None:
                # src/options/o_pcconflicts.php lines 179-183: HotCRP's own import warns and takes CT_DEFAULT.
                out.unknown_types.append(str(value))
                conflict = CT_DEFAULT
            kind = upload_type(conflict)
            out.author_conflicts += kind is None and is_author(conflict)
            key = (record["id"], email.strip().lower())
            if kind is not None and key not in written:
                written.add(key)
                out.conflicts.append((*key, kind))
    out.repeated = repeats.repeated
    repeats.report(warn)
    return out


def write_conflicts(conflicts: Sequence[tuple[str, str, str]], path: Path) -> None:
    """The declared conflicts as a HotCRP bulk-assignment CSV (paper,action,email,conflicttype; action
    `conflict`): what `reviewers recommend|assign --conflicts` reads, and what HotCRP uploads back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CONFLICTS_HEADER)
        writer.writerows((output_id(paper), "conflict", email, kind) for paper, email, kind in conflicts)
