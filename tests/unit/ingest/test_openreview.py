"""OpenReview expertise datasets both ways: archives, submissions and profiles in; the graph's reviewers out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.records import RawRecord, parse_affiliation
from scholargraph.ingest.loader import ingest
from scholargraph.ingest.normalize import iter_raw, normalize
from scholargraph.ingest.openreview import (
    export_dataset,
    merge_author_details,
    read_profiles,
    read_submissions,
)


def load(store, fmt: str, path: Path, tmp_path: Path):
    return ingest(store, fmt, [str(path)], quarantine_path=tmp_path / f"q-{fmt}.jsonl",
                  checkpoint_dir=tmp_path / f"ck-{fmt}", quiet=True, restart=True)


def graph_of(store) -> dict:
    """What a round trip must keep: papers (title, abstract, year) and who authored which, in which order."""
    ids, props = store.read_nodes("Paper", ["title", "abstract", "year", "stub"])
    papers = {pid: (t, a, y) for pid, t, a, y, stub in zip(ids, props["title"], props["abstract"], props["year"],
                                                            props["stub"]) if not stub}
    sources, targets, positions = store.read_edges("AUTHORED", weight="position")
    return {"papers": papers, "authored": sorted(zip(sources, targets, positions.tolist()))}


def write_dataset(root: Path) -> Path:
    (root / "archives").mkdir(parents=True)
    (root / "archives" / "~Ann_Lee1.jsonl").write_text("\n".join([
        json.dumps({"id": "note1", "cdate": 1577836800000,  # 2020-01-01
                    "content": {"title": {"value": "Graph matching"}, "abstract": {"value": "We match."},
                                "authors": {"value": ["Ann Lee", "Bo Chen"]},
                                "authorids": {"value": ["~Ann_Lee1", "bo@example.org"]}}}),
        json.dumps({"id": "note2", "content": {"title": "Solo work", "year": 2018}}),  # owner not listed
        "{not json",
    ]) + "\n")
    (root / "submissions.json").write_text(json.dumps({
        "sub1": {"content": {"title": "A submission", "abstract": "About matching.",
                             "authors": ["Cy Doe"], "authorids": ["~Cy_Doe1"]}},
        "sub2": {"content": {}},
    }))
    (root / "profiles.json").write_text(json.dumps([
        {"id": "~Ann_Lee1", "content": {"emails": ["Ann@CMU.edu"], "preferredEmail": "ann@cmu.edu",
                                        "history": [{"position": "PhD", "start": 2015, "end": 2020,
                                                     "institution": {"name": "Carnegie Mellon University",
                                                                     "domain": "cmu.edu"}}]}},
        {"content": {}},
    ]))
    return root


def test_archives_become_papers_of_their_reviewer(tmp_path):
    root = write_dataset(tmp_path / "ds")
    store = InMemoryStore()
    summary = load(store, "openreview", root, tmp_path)
    graph = graph_of(store)
    assert graph["papers"] == {"openreview:note1": ("Graph matching", "We match.", 2020),
                               "openreview:note2": ("Solo work", None, 2018)}
    # The email author id is personal data, never an id: that author is keyed by name.
    assert graph["authored"] == [("name:bo_chen", "openreview:note1", 2.0),
                                 ("openreview:~Ann_Lee1", "openreview:note1", 1.0),
                                 ("openreview:~Ann_Lee1", "openreview:note2", 1.0)]
    assert summary.quarantined == 1  # the bad line, as for every other format


def test_submissions_and_profiles(tmp_path):
    root = write_dataset(tmp_path / "ds")
    found = read_submissions(str(root))
    assert found.records == [{"id": "sub1", "title": "A submission", "abstract": "About matching.",
                              "authors": ["Cy Doe"], "author_ids": ["openreview:~Cy_Doe1"]}]
    assert [r["reason"] for r in found.rejected] == ["missing title: no title and no abstract"]
    profiles, bad = read_profiles(str(root))
    assert len(bad.rejected) == 1
    assert [(p.author_id, p.emails) for p in profiles] == [("openreview:~Ann_Lee1", ["ann@cmu.edu"])]
    assert parse_affiliation(profiles[0].affiliations[0]) == ("Carnegie Mellon University", 2015, 2020)

    store = InMemoryStore()
    load(store, "openreview", root, tmp_path)
    details = {p.author_id: (p.emails, p.affiliations) for p in profiles}
    assert merge_author_details(store, details) == 1
    merge_author_details(store, details)  # idempotent
    load(store, "openreview", root, tmp_path)  # a re-ingest keeps them
    ids, props = store.read_nodes("Author", ["emails", "affiliations"])
    ann = ids.index("openreview:~Ann_Lee1")
    assert props["emails"][ann] == ["ann@cmu.edu"]
    assert props["affiliations"][ann] == ["2015-2020|Carnegie Mellon University"]


def test_project_ids_and_dois_are_kept():
    bundle = normalize("openreview", RawRecord("a.jsonl", 1, {
        "id": "10.1145/3336191.3371770", "_archiveOwner": "s2author:7",
        "content": {"title": "T", "authors": ["Ann"], "authorids": ["s2author:7"]}}))
    assert bundle.paper.id == "10.1145/3336191.3371770"
    assert [a.id for a in bundle.authors] == ["s2author:7"]


def test_other_files_of_the_dataset_are_not_papers(tmp_path):
    root = write_dataset(tmp_path / "ds")
    assert list(iter_raw("openreview", str(root / "submissions.json"))) == []


def test_s2_affiliations_are_stored_with_the_paper_year():
    bundle = normalize("s2", RawRecord("a.jsonl", 1, {
        "paperId": "p1", "title": "T", "year": 2019,
        "authors": [{"authorId": "1", "name": "Ann", "affiliations": ["CMU", "CMU"]}]}))
    assert bundle.authors[0].affiliations == ("2019|CMU",)


@pytest.fixture
def gold(shared_data) -> Path:
    return shared_data / "goldstandard-dev"


def test_round_trip_on_the_gold_standard(gold, tmp_path):
    """Dev reviewers' papers (S2) -> OpenReview's layout -> an empty graph: the same papers and authorships."""
    before = InMemoryStore()
    load(before, "s2", gold / "corpus.s2.jsonl", tmp_path)
    reviewers = sorted({f"s2author:{line.split()[2]}" for line in (gold / "qrels.txt").read_text().splitlines()})
    queries = [json.loads(line) for line in (gold / "queries.jsonl").read_text().splitlines()[:5]]
    counts = export_dataset(before, reviewers, queries, tmp_path / "or")
    assert counts.reviewers == len(reviewers) and counts.submissions == 5
    after = InMemoryStore()
    load(after, "openreview", tmp_path / "or", tmp_path)
    # Only the reviewers' papers travel: compare the graph they span.
    expected = graph_of(before)
    papers = {p for a, p, _ in expected["authored"] if a in reviewers}
    expected = {"papers": {p: v for p, v in expected["papers"].items() if p in papers},
                "authored": [e for e in expected["authored"] if e[1] in papers]}
    assert graph_of(after) == expected
    assert [r["id"] for r in read_submissions(str(tmp_path / "or")).records] == [q["id"] for q in queries]


def test_a_submission_author_listed_by_email_keeps_it_for_conflicts():
    from scholargraph.ingest.openreview import submission_record

    record = submission_record({"id": "s", "content": {"title": "T", "authors": ["Cy Doe", "Di Ng"],
                                                       "authorids": ["~Cy_Doe1", "Di@Uni.edu"]}})
    assert record["authors"] == ["Cy Doe", {"name": "Di Ng", "email": "di@uni.edu"}]
    assert record["author_ids"] == ["openreview:~Cy_Doe1"]
