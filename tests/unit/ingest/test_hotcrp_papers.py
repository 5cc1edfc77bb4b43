"""HotCRP's paper JSON: papers as a --queries file (withdrawn skipped, bad ones quarantined and counted), their
declared PC conflicts as a file --conflicts reads, a bad file refused with exit 2 and one line; no email printed."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from scholargraph.cli import main
from scholargraph.conference.conflicts import AUTHOR, ConflictChecker
from scholargraph.conference.declared import HOTCRP, read_declared
from scholargraph.conference.submissions import Query, submission_authors
from scholargraph.errors import UsageError
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.ingest.hotcrp import read_papers
from scholargraph.user_files import read_jsonl

PAPERS = [
    {"pid": 1, "title": " Graph  reviewers ", "abstract": "An abstract.", "status": "submitted", "submitted": True,
     "submitted_at": 1767225600,  # 2026-01-01 UTC
     "authors": [{"email": "Ann@CS.Example.edu", "first": "Ann", "last": "Lee", "affiliation": "Example University"},
                 {"first": "Bo", "last": "Chen"}],
     "topics": ["Graphs"], "pc_conflicts": {"pc1@example.edu": "collaborator", "pc2@other.org": True,
                                            "pc3@other.org": False, "not an email": "advisor"}},
    {"pid": 2, "title": "Gone", "status": "withdrawn", "withdrawn": True, "authors": []},
    {"pid": 3, "abstract": "No title, but an abstract.", "authors": [{"email": "cy@x.org", "first": "Cy",
                                                                       "last": "Doe"}]},
    {"title": "No pid"},
    "not a paper",
]


def write(tmp_path, data) -> str:
    path = tmp_path / "papers.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def test_papers_become_submissions_and_declared_conflicts(tmp_path):
    found = read_papers(write(tmp_path, PAPERS))
    assert [r["id"] for r in found.records] == ["1", "3"] and found.withdrawn == 1
    first = found.records[0]
    assert first["title"] == "Graph reviewers" and first["year"] == 2026
    assert first["authors"] == [{"name": "Ann Lee", "email": "ann@cs.example.edu", "affiliation": "Example University"},
                                {"name": "Bo Chen"}]
    assert [(r["record"], r["reason"]) for r in found.rejected] == [(4, "missing id: no pid (or id)"),
                                                                    (5, "not a JSON object")]
    # true (HotCRP's default type, or one the exporter could not see) is written as the type HotCRP stores for
    # it, collaborator (CT_DEFAULT): `yes` would become an administrative conflict on a chair's upload.
    assert found.conflicts == [("1", "pc1@example.edu", "collaborator"), ("1", "pc2@other.org", "collaborator")]
    assert found.not_emails == 1 and not any("@" in line for line in found.lines())


def test_the_cli_writes_queries_and_conflicts_that_recommend_reads(tmp_path):
    home = tmp_path / "home"
    result = CliRunner(env={"SCHOLARGRAPH_HOME": str(home)}).invoke(
        main, ["ingest", "hotcrp-papers", write(tmp_path, PAPERS), "--conflicts-out", str(tmp_path / "c.csv"),
               "--max-bad-ratio", "1"])
    assert result.exit_code == 0, result.output
    assert "1 withdrawn (skipped)" in result.output and "2 bad papers quarantined" in result.output
    assert "@" not in result.output  # emails are never printed
    queries = read_jsonl(str(home / "hotcrp" / "submissions.jsonl"), "--queries")  # the reader recommend uses
    assert [q["id"] for q in queries] == ["1", "3"]
    declared = read_declared(str(tmp_path / "c.csv"), "--conflicts")
    assert declared.layout == HOTCRP and [(p.paper, p.reason) for p in declared.conflicts] == [
        ("1", "declared (hotcrp: collaborator)"), ("1", "declared (hotcrp: collaborator)")]
    quarantined = (home / "quarantine" / "ingest-hotcrp-papers.jsonl").read_text().splitlines()
    assert len(quarantined) == 2
    # Above the bad-paper ratio (2 of 4), the exit is 3, as for the other ingests; the files are still written.
    strict = CliRunner(env={"SCHOLARGRAPH_HOME": str(home)}).invoke(
        main, ["ingest", "hotcrp-papers", write(tmp_path, PAPERS)])
    assert strict.exit_code == 3


@pytest.mark.parametrize("text, where", [
    ("[{\"pid\": 1,", "papers.json: not JSON"),
    ("\"a string\"", "papers.json: expected HotCRP's paper JSON"),
    ("[]", "papers.json: holds no papers"),
])
def test_a_bad_file_is_refused_with_one_line(tmp_path, text, where):
    path = write(tmp_path, text)
    with pytest.raises(UsageError, match=where):
        read_papers(path)
    result = CliRunner(env={"SCHOLARGRAPH_HOME": str(tmp_path / "home")}).invoke(
        main, ["ingest", "hotcrp-papers", path])
    assert result.exit_code == 2 and where in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


# --- the author forms and the paper keys HotCRP writes and reads -----------------------------------------
# kohler/hotcrp at commit 0f25da6c453c5cd9b869ae4f6bafdd0aee4b885e. Export: src/options/o_authors.php lines
# 19-25 writes each author with Author::unparse_nea_json, src/author.php lines 390-404: email, given_name,
# family_name, affiliation, each only when not empty (first/last before commit 971894114, 2026-02-05).
# Import: src/author.php assign_keyed, lines 249-275, also reads firstName|first|givenName|given,
# lastName|last|familyName|family and name|fullName.
AUTHOR_FORMS = {
    "given_name (2026-)": {"given_name": "Ann", "family_name": "Lee"},
    "first/last (-2026)": {"first": "Ann", "last": "Lee"},
    "name": {"name": "Ann Lee"},
    "firstName/lastName": {"firstName": "Ann", "lastName": "Lee"},
    "givenName/familyName": {"givenName": "Ann", "familyName": "Lee"},
    "fullName": {"fullName": "Ann Lee"},
}


def one_paper(tmp_path, **fields) -> str:
    return write(tmp_path, [{"pid": 7, "title": "Graph reviewers", **fields}])


@pytest.mark.parametrize("form", AUTHOR_FORMS.values(), ids=AUTHOR_FORMS.keys())
def test_every_author_form_is_named(tmp_path, form):
    author = {"email": "Ann@Uni.edu", **form, "affiliation": "Uni"}
    [record] = read_papers(one_paper(tmp_path, authors=[author])).records
    assert record["authors"] == [{"name": "Ann Lee", "email": "ann@uni.edu", "affiliation": "Uni"}]


def test_a_given_name_author_is_in_conflict_with_her_own_paper(tmp_path):
    # The defect: HotCRP's 2026 export read as {"name": ""}, so the author was no conflict of her paper and
    # `reviewers recommend` suggested her. The same paper in each form gives the author conflict.
    snapshot = GraphSnapshot.build([{"id": "p1", "year": 2024, "title": "Earlier work"}], [("s2author:7", "p1", 1)],
                                   authors=[("s2author:7", "Ann Lee")])
    for form in AUTHOR_FORMS.values():
        [record] = read_papers(one_paper(tmp_path, authors=[{"email": "ann@gmail.com", **form}])).records
        query = Query(id=record["id"], text_vector=None, topic_vector=None, references=np.zeros(0, np.int64),
                      **submission_authors(record))
        assert ConflictChecker(snapshot).explain(query) == {"s2author:7": AUTHOR}, form


@pytest.mark.parametrize("author", [
    {"affiliation": "Uni"},
    {"given_name": " ", "family_name": ""},
    {"first": 7, "last": None, "email": "not an address"},
    {},
])
def test_an_author_with_neither_a_name_nor_an_email_quarantines_the_paper(tmp_path, author):
    path = one_paper(tmp_path, authors=[{"given_name": "Bo", "family_name": "Chen"}, author])
    found = read_papers(path)
    assert found.records == []
    [entry] = found.rejected
    assert (entry["file"], entry["line"], entry["record"]) == (path, 1, 1)
    assert entry["reason"].startswith("authors: author 2 has neither a name (given_name/family_name, first/last or "
                                      "name) nor an email")


def test_an_author_with_only_an_email_is_kept_and_reported(tmp_path):
    # HotCRP takes an author by email alone (src/options/o_authors.php lines 61-74 warn only about one with
    # nothing but an affiliation) and its export leaves the empty name fields out (src/author.php lines 390-405):
    # the paper was quarantined. Kept without a name, the author is a conflict by email domain and institution.
    path = one_paper(tmp_path, authors=[{"given_name": "Bo", "family_name": "Chen"},
                                        {"email": "Ann@Uni.edu", "affiliation": "Uni"}])
    found = read_papers(path)
    assert found.rejected == []
    [record] = found.records
    assert record["authors"] == [{"name": "Bo Chen"}, {"email": "ann@uni.edu", "affiliation": "Uni"}]
    assert found.nameless_authors == ["pid 7 author 2"]
    assert ("1 author without a name, only an email (kept: a conflict by email domain and institution, none by "
            "name), e.g. pid 7 author 2") in found.lines()
    snapshot = GraphSnapshot.build([{"id": "p1", "year": 2024, "title": "Earlier work"}], [("s2author:9", "p1", 1)],
                                   authors=[("s2author:9", "Cy Doe")])
    query = Query(id=record["id"], text_vector=None, topic_vector=None, references=np.zeros(0, np.int64),
                  **submission_authors(record))
    assert query.author_names == ("Bo Chen", "") and query.author_emails == ("ann@uni.edu",)
    assert ConflictChecker(snapshot).explain(query) == {}  # no name: nobody is its author by name


def test_the_quarantine_names_the_line_each_paper_starts_on(tmp_path):
    papers = [{"pid": 1, "title": "Fine", "authors": [{"name": "Ann Lee"}]}, {"pid": 2, "authors": [{}]}]
    path = write(tmp_path, json.dumps(papers, indent=2))
    [entry] = read_papers(path).rejected
    assert entry["record"] == 2 and entry["line"] == 1 + json.dumps(papers, indent=2).split("\n").index("  {", 2)


# src/paperstatus.php lines 1201-1202: a paper's id is `pid`, else `id`. src/options/o_pcconflicts.php
# lines 151-170: pc_conflicts is an object {email: type} or a list of emails (each a conflict, `true`).
def test_a_paper_keyed_id_and_list_form_conflicts_are_read(tmp_path):
    found = read_papers(write(tmp_path, [{"id": 5, "title": "Keyed id", "authors": [{"name": "Ann Lee"}],
                                          "pc_conflicts": ["PC1@x.org", "pc2@y.org", "not an email"]}]))
    assert [r["id"] for r in found.records] == ["5"] and found.rejected == []
    assert found.conflicts == [("5", "pc1@x.org", "collaborator"), ("5", "pc2@y.org", "collaborator")]
    assert found.not_emails == 1 and found.bad_pc_conflicts == 0


def test_a_repeated_pid_keeps_its_first_paper_an_identical_one_said_another_quarantined(tmp_path):
    # As every user file (user_files.Repeats): the same paper again is kept once and said on stderr by line. As
    # an ingest: another paper under the same pid is a bad record, quarantined with its line and why.
    first = {"pid": 6, "title": "First", "pc_conflicts": {"pc@x.org": "advisor"}}
    papers = [first, {"pid": 8, "title": "Other"}, dict(first), {"pid": 6, "title": "Again"},
              {"pid": "6", "title": "First", "pc_conflicts": {"pc@x.org": "advisor"}}]
    path = write(tmp_path, json.dumps(papers, indent=1))
    said: list[str] = []
    found = read_papers(path, "hotcrp-papers", said.append)
    assert [(r["id"], r["title"]) for r in found.records] == [("6", "First"), ("8", "Other")]
    assert found.conflicts == [("6", "pc@x.org", "advisor")]
    starts = [n for n, line in enumerate(json.dumps(papers, indent=1).split("\n"), 1) if line == " {"]
    [warning] = said
    assert re.fullmatch(rf"warning: hotcrp-papers {re.escape(path)}: 1 repeated paper.* kept once, e\.g\. line "
                        rf"{starts[2]} \(as line {starts[0]}\)", warning), warning
    assert [(r["record"], r["line"], r["reason"]) for r in found.rejected] == [
        (4, starts[3], f"pid 6 repeated with other content, line {starts[0]} kept"),
        (5, starts[4], f"pid 6 repeated with other content, line {starts[0]} kept")]
    result = CliRunner(env={"SCHOLARGRAPH_HOME": str(tmp_path / "home")}).invoke(
        main, ["ingest", "hotcrp-papers", path, "--max-bad-ratio", "1"])
    assert result.exit_code == 0, result.output
    assert f"scholargraph: {warning}" in result.stderr
    assert "2 bad papers quarantined, e.g. record 4: pid 6 repeated with other content" in result.stdout


def test_the_summary_says_which_conflicts_are_not_written_and_why(tmp_path):
    # An author (or contact) is written only for the PC conflict that comes with it, which HotCRP's upload takes.
    papers = [{"pid": 1, "title": "T", "authors": [{"name": "Ann Lee", "email": "ann@x.org"}],
               "pc_conflicts": {"ann@x.org": "author", "eve@x.org": "contact", "bo@x.org": "pinned collaborator author",
                                "cy@x.org": "institutional", "di@x.org": "shared office"}},
              {"pid": 2, "title": "U", "pc_conflicts": "ann@x.org"}]
    result = CliRunner(env={"SCHOLARGRAPH_HOME": str(tmp_path / "home")}).invoke(
        main, ["ingest", "hotcrp-papers", write(tmp_path, papers), "--conflicts-out", str(tmp_path / "c.csv")])
    assert result.exit_code == 0, result.output
    assert "2 author conflicts not written (HotCRP's upload refuses author and contact types" in result.output
    assert ("1 conflict type HotCRP does not know (shared office), written as collaborator (HotCRP's default type, "
            "which its own JSON import gives them)") in result.output
    assert "1 paper's pc_conflicts neither an object nor a list of emails (left out)" in result.output
    assert "pc_conflicts: 3 declared conflicts written to" in result.output and "@" not in result.output
    rows = (tmp_path / "c.csv").read_text(encoding="utf-8").splitlines()
    assert rows == ["paper,action,email,conflicttype", "1,conflict,bo@x.org,pinned collaborator",
                    "1,conflict,cy@x.org,institutional", "1,conflict,di@x.org,collaborator"]
