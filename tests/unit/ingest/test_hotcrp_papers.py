"""HotCRP's paper JSON: papers as a --queries file (withdrawn skipped, bad ones quarantined and counted), their
declared PC conflicts as a file --conflicts reads, a bad file refused with exit 2 and one line; no email printed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from scholargraph.cli import main
from scholargraph.errors import UsageError
from scholargraph.ingest.hotcrp import read_papers
from scholargraph.ranking.reviewers.declared import HOTCRP, read_declared
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
    assert [(r["record"], r["reason"]) for r in found.rejected] == [(4, "missing id: no pid"), (5, "not a JSON object")]
    assert found.conflicts == [("1", "pc1@example.edu", "collaborator"), ("1", "pc2@other.org", "")]
    assert found.bad_conflicts == 1 and not any("@" in line for line in found.lines())


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
        ("1", "declared (hotcrp: collaborator)"), ("1", "declared (hotcrp)")]
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
