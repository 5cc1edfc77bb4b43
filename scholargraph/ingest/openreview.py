"""The OpenReview expertise dataset both ways: its submissions and profiles in, the graph's reviewers out."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scholargraph.graph.ids import openreview_id
from scholargraph.graph.records import affiliation_entry, fold_id, paper_text
from scholargraph.ingest.formats import openreview as layout
from scholargraph.ingest.formats.openreview import ARCHIVES, MATCH_SUBMISSIONS
from scholargraph.ingest.normalize import clean_text, content_value, openreview_author_id, profile_name
from scholargraph.ingest.sources import expand_inputs, iter_json_records
from scholargraph.user_files import examples

# The layout is openreview/openreview-expertise's (README, "Datasets"), see formats/openreview.py.
# Submissions: submissions.json ({id: note}, what expertise.create_dataset writes), submissions.jsonl (one
# note per line) or submissions/<id>.jsonl. Profiles (optional; not part of the expertise dataset, but what
# the OpenReview API returns for the reviewers: openreview-py `get_profiles`): profiles.json (a list or
# {id: profile}) or profiles.jsonl, each {"id": "~Ann_Lee1", "content": {"emails", "preferredEmail",
# "history": [{"position", "start", "end", "institution": {"name", "domain"}}]}}.
SUBMISSION_FILES = ("submissions.json", "submissions.jsonl")
SUBMISSION_DIR = "submissions"
PROFILE_FILES = ("profiles.json", "profiles.jsonl")


@dataclass
class ChairFile:
    """What one of the tool's side files gave: its good records and its bad ones (quarantine entries). A note id
    given again (in the same file or another) is kept once: `repeated` lists the repeats that give the same
    record, `conflicting` those that give another (quarantined too: the first is kept), each as
    `id (file:line, first at file:line)`."""

    records: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)
    conflicting: list[str] = field(default_factory=list)

    def lines(self, what: str) -> list[str]:
        """Summary lines on the repeated notes (count and examples); none when no id was given twice."""
        lines = []
        if self.repeated:
            lines.append(f"{what}: {len(self.repeated):,} note(s) given again with the same content, kept once: "
                         f"{examples(self.repeated)}")
        if self.conflicting:
            lines.append(f"{what}: {len(self.conflicting):,} note(s) given again with other content: the first "
                         f"is kept, the repeat quarantined: {examples(self.conflicting)}")
        return lines


def rejected_entry(source: str, line: int, reason: str, excerpt: str, fmt: str) -> dict:
    """A quarantine entry for a bad record of a chair's file."""
    return {"file": source, "line": line, "reason": reason, "format": fmt, "excerpt": excerpt[:500]}


def _notes(path: str, fmt: str, out: ChairFile) -> Iterator[tuple[str, int, dict]]:
    """(file, line, note) of each JSON object of `path`; a {id: note} dict (submissions.json) is unwrapped."""
    out.files.append(path)
    for raw in iter_json_records(path):
        if raw.data is None:
            out.rejected.append(rejected_entry(raw.source, raw.line, raw.error or "malformed JSON", raw.excerpt, fmt))
            continue
        if "id" not in raw.data and "content" not in raw.data and all(isinstance(v, dict) for v in raw.data.values()):
            for key, note in raw.data.items():  # {id: note}: the key is the id when the note has none
                yield raw.source, raw.line, {"id": key, **note}
        else:
            yield raw.source, raw.line, raw.data


def _side_files(directory: str, names: Sequence[str], folder: str | None = None) -> list[str]:
    found = [os.path.join(directory, n) for n in names if os.path.isfile(os.path.join(directory, n))]
    if folder and os.path.isdir(os.path.join(directory, folder)):
        sub = os.path.join(directory, folder)
        found += [os.path.join(sub, n) for n in sorted(os.listdir(sub)) if n.endswith((".json", ".jsonl"))]
    return found


def submission_record(note: Mapping) -> dict:
    """An OpenReview submission note as a `--queries` record: {id, title, abstract, year?, authors (a name,
    or {name, email} for an author listed by email), author_ids}. The id stays OpenReview's own (the
    matcher's and the affinity CSV's); author ids are the graph's (openreview_author_id: a profile id
    qualified, an email left out)."""
    content = note.get("content") if isinstance(note.get("content"), dict) else {}
    record: dict = {"id": fold_id(str(note["id"]))}
    for name in ("title", "abstract"):
        value = content_value(content, name)
        record[name] = clean_text(value) if isinstance(value, str) else None
    year = content_value(content, "year")
    if isinstance(year, int) and not isinstance(year, bool):
        record["year"] = year
    names = content_value(content, "authors")
    ids = content_value(content, "authorids")
    record["authors"] = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
    ids = ids if isinstance(ids, list) else []
    if len(ids) == len(record["authors"]):
        # An author without a profile is listed by email: kept beside the name for the email-domain conflicts
        # (conference/conflicts.py), never an id.
        record["authors"] = [{"name": n, "email": i.strip().lower()} if isinstance(i, str) and "@" in i else n
                             for n, i in zip(record["authors"], ids)]
    graph_ids = [openreview_author_id(i) for i in ids]
    record["author_ids"] = [i for i in graph_ids if i]
    return record


def read_submissions(directories: str | Sequence[str]) -> ChairFile:
    """The submissions of one dataset folder, or of several, as --queries records; a note without an id or any
    text is rejected, a note id given twice is kept once (ChairFile)."""
    folders = [directories] if isinstance(directories, str) else list(directories)
    return _read_submission_files([path for folder in folders
                                   for path in _side_files(folder, SUBMISSION_FILES, SUBMISSION_DIR)])


def match_submission_files(paths: Sequence[str]) -> list[str]:
    """The archives/match_submissions.jsonl files among the ingest's inputs (dataset folders, archives folders
    or files): create_dataset.py writes the submissions of its `match_paper_*` settings there, for paper-paper
    matching. They are submissions, no reviewer's publications: the archive parser skips them."""
    return [path for path in expand_inputs(list(paths)) if layout.is_match_submissions(path)]


def read_match_submissions(paths: Sequence[str]) -> ChairFile:
    """The submissions of the match_submissions files among `paths` (match_submission_files) as --queries
    records, rejected notes apart."""
    return _read_submission_files(match_submission_files(paths))


def _read_submission_files(paths: Sequence[str]) -> ChairFile:
    out = ChairFile()
    first: dict[str, tuple[dict, str]] = {}  # id -> (its record, where it was read first)
    for path in paths:
        for source, line, note in _notes(path, "openreview-submissions", out):
            if not isinstance(note.get("id"), (str, int)) or isinstance(note.get("id"), bool):
                out.rejected.append(rejected_entry(source, line, "missing id", json.dumps(note)[:500],
                                              "openreview-submissions"))
                continue
            record = submission_record(note)
            if not paper_text(record["title"], record["abstract"]):
                out.rejected.append(rejected_entry(source, line, "missing title: no title and no abstract",
                                              json.dumps(note)[:500], "openreview-submissions"))
                continue
            seen = first.get(record["id"])
            if seen is None:
                first[record["id"]] = (record, f"{source}:{line}")
                out.records.append(record)
                continue
            # A dump is ingested whole: a repeat is reported, never a reason to stop; the first one is kept.
            repeat = f"{record['id']} ({source}:{line}, first at {seen[1]})"
            if seen[0] == record:
                out.repeated.append(repeat)
            else:
                out.conflicting.append(repeat)
                out.rejected.append(rejected_entry(source, line, f"duplicate id: {record['id']} was read at "
                                                   f"{seen[1]} with other content, which is kept",
                                                   json.dumps(note)[:500], "openreview-submissions"))
    return out


def archive_lines(paths: Sequence[str], submissions_target: Path) -> tuple[list[str], list[dict]]:
    """What the archives among an ingest's inputs hold beside reviewers' publications, said in summary lines:
    match_submissions files (written as a --queries file of their own beside `submissions_target`). Returns the
    lines and the rejected notes of the match_submissions files (for the quarantine). Dates given in seconds are
    counted by the normaliser, in the loader's summary."""
    lines = []
    match = read_match_submissions(paths)
    if match.records:
        target = submissions_target.with_name(f"{MATCH_SUBMISSIONS}.jsonl")
        write_queries(match.records, target)
        lines.append(f"{MATCH_SUBMISSIONS}: {len(match.records)} submissions to match (openreview-expertise's "
                     f"match_paper_* file in archives/, no reviewer's archive) written to {target} "
                     "(reviewers recommend|assign --queries)")
    lines += match.lines(MATCH_SUBMISSIONS)
    return lines, match.rejected


@dataclass
class Profile:
    """What a profile says about a reviewer: lower-cased emails and institutions with their years."""

    author_id: str
    emails: list[str]
    affiliations: list[str]


def _year(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 1000 <= value <= 9999 else None


def profile_of(note: Mapping) -> Profile | None:
    """A profile note -> Profile; None when its id is not a graph author id."""
    author_id = openreview_author_id(note.get("id"))
    if author_id is None:
        return None
    content = note.get("content") if isinstance(note.get("content"), dict) else {}
    emails: list[str] = []
    for key in ("preferredEmail", "emails", "emailsConfirmed"):
        value = content.get(key)
        for email in [value] if isinstance(value, str) else value if isinstance(value, list) else ():
            if isinstance(email, str) and "@" in email and not email.startswith("****"):
                address = email.strip().lower()
                if address not in emails:
                    emails.append(address)
    affiliations: list[str] = []
    history = content.get("history")
    for entry in history if isinstance(history, list) else ():
        institution = entry.get("institution") if isinstance(entry, dict) else None
        name = institution.get("name") if isinstance(institution, dict) else None
        if isinstance(name, str) and clean_text(name):
            item = affiliation_entry(clean_text(name) or "", _year(entry.get("start")), _year(entry.get("end")))
            if item not in affiliations:
                affiliations.append(item)
    return Profile(author_id, emails, affiliations)


def read_profiles(directory: str) -> tuple[list[Profile], ChairFile]:
    out = ChairFile()
    profiles: list[Profile] = []
    for path in _side_files(directory, PROFILE_FILES):
        for source, line, note in _notes(path, "openreview-profiles", out):
            profile = profile_of(note)
            if profile is None:
                out.rejected.append(rejected_entry(source, line, "missing id: not a profile id",
                                              json.dumps(note)[:500], "openreview-profiles"))
            else:
                profiles.append(profile)
    return profiles, out


def merge_author_details(store, details: Mapping[str, tuple[Iterable[str], Iterable[str]]]) -> int:
    """Add emails and affiliations ({author id: (emails, affiliation entries)}) to the authors of the graph
    that have those ids, as set unions with what they hold: idempotent, and kept across re-ingests (the
    ingest upsert never removes either). Returns how many authors of the graph got them."""
    if not details:
        return 0
    ids, values = store.read_nodes("Author", ["emails", "affiliations"])
    known = {aid: k for k, aid in enumerate(ids)}
    rows: list[str] = []
    emails_out: list[list[str]] = []
    affiliations_out: list[list[str] | None] = []
    for author_id, (emails, affiliations) in details.items():
        k = known.get(author_id)
        if k is None:
            continue
        old_emails = list(values["emails"][k] or [])
        old_affiliations = list(values["affiliations"][k] or [])
        rows.append(author_id)
        emails_out.append(old_emails + [e for e in dict.fromkeys(emails) if e not in old_emails])
        merged = old_affiliations + [a for a in dict.fromkeys(affiliations) if a not in old_affiliations]
        affiliations_out.append(merged or None)
    if rows:
        store.write_node_properties("Author", rows, {"emails": emails_out, "affiliations": affiliations_out})
    return len(rows)


def write_queries(records: Sequence[Mapping], path: Path) -> None:
    """The submissions as a --queries JSON-lines file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


# --- the graph's reviewers out, in the expertise dataset's layout ----------------------------------------


@dataclass
class ExportCounts:
    reviewers: int = 0
    publications: int = 0
    submissions: int = 0
    not_written: list[str] = field(default_factory=list)  # no paper with a text, or an id unfit for a file name


def export_dataset(store, reviewer_ids: Sequence[str], submissions: Sequence[Mapping], out_dir: Path) -> ExportCounts:
    """archives/<reviewer id>.jsonl (each of the reviewer's papers with a title or an abstract: {id, content:
    {title, abstract, authors, authorids, year}}) and submissions.json ({id: note}, create_dataset's file) from
    `submissions` (--queries records). OpenReview's own ids are written bare, as OpenReview has them: the file
    name is the profile id openreview-expertise scores by (`~Ann_Lee1.jsonl`, never `openreview:~Ann_Lee1`);
    other ids stay as the graph has them. `ingest openreview` of the folder gives the same graph back (it
    qualifies bare ids again). A reviewer without any paper is counted, not written."""
    paper_ids, paper_props = store.read_nodes("Paper", ["title", "abstract", "year", "stub"])
    papers = {pid: k for k, pid in enumerate(paper_ids)}
    author_ids, author_props = store.read_nodes("Author", ["name"])
    names = dict(zip(author_ids, author_props["name"]))
    sources, targets, positions = store.read_edges("AUTHORED", weight="position")
    by_paper: dict[str, list[tuple[float, str]]] = {}
    by_author: dict[str, list[str]] = {}
    for a, p, pos in zip(sources, targets, positions):
        by_paper.setdefault(p, []).append((float(pos), a))
        by_author.setdefault(a, []).append(p)
    counts = ExportCounts()
    archives = out_dir / ARCHIVES
    archives.mkdir(parents=True, exist_ok=True)
    for reviewer in reviewer_ids:
        own = sorted(p for p in by_author.get(reviewer, ()) if p in papers and not paper_props["stub"][papers[p]]
                     and (paper_props["title"][papers[p]] or paper_props["abstract"][papers[p]]))
        if not own or "/" in reviewer:
            counts.not_written.append(reviewer)
            continue
        with open(archives / f"{openreview_id(reviewer)}.jsonl", "w", encoding="utf-8") as fh:
            for pid in own:
                k = papers[pid]
                authors = [a for _, a in sorted(by_paper[pid])]
                content = {"title": paper_props["title"][k], "abstract": paper_props["abstract"][k],
                           "authors": [names.get(a) or profile_name(openreview_id(a)) or a for a in authors],
                           "authorids": [openreview_id(a) for a in authors]}
                if paper_props["year"][k] is not None:
                    content["year"] = paper_props["year"][k]
                note = {"id": openreview_id(pid), "content": content}
                fh.write(json.dumps(note, ensure_ascii=False) + "\n")
                counts.publications += 1
        counts.reviewers += 1
    notes = {}
    for record in submissions:
        content = {"title": record.get("title"), "abstract": record.get("abstract"),
                   "authors": [a if isinstance(a, str) else a.get("name", "") for a in record.get("authors") or ()],
                   "authorids": [openreview_id(a) for a in record.get("author_ids") or ()]}
        if record.get("year") is not None:
            content["year"] = record["year"]
        note_id = openreview_id(record["id"])
        notes[note_id] = {"id": note_id, "content": content}
    with open(out_dir / SUBMISSION_FILES[0], "w", encoding="utf-8") as fh:
        json.dump(notes, fh, ensure_ascii=False, indent=1)
    counts.submissions = len(notes)
    return counts
