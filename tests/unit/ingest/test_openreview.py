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


# --- openreview-expertise's own layout -----------------------------------------------------------------------
# Each test below follows the file of openreview/openreview-expertise it names, at commit
# 4110008253381cc1b7cab203bfa6f1cd4cd5b7a1 (expertise does not install from a registry: its reading and
# writing are followed line by line, in our own code).

EXPERTISE = "openreview/openreview-expertise@4110008253381cc1b7cab203bfa6f1cd4cd5b7a1"


def expertise_archives(archives: Path) -> dict[str, list[dict]]:
    """The archives as expertise reads them: expertise/dataset/core.py ArchivesDataset, lines 40-49. Every file
    of the folder is one reviewer, whose profile id is the file name up to its last '.', one JSON note a line."""
    found: dict[str, list[dict]] = {}
    for path in archives.iterdir():
        profile_id = path.name[: path.name.rindex(".")]
        found[profile_id] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return found


def expertise_publication(note_id: str, title, abstract, **dates) -> dict:
    """A publication as expertise/create_dataset.py get_publications writes it (lines 259-275): the API's
    fields reduced to id, dates and title/abstract/venueid, API 2's {"value"} wrappers taken off (lines 239-249);
    a missing title is '' (API 1, `content.get('title', '')`) or None (API 2, `.get('value')`)."""
    return {"id": note_id, **dates, "content": {"title": title, "abstract": abstract, "venueid": "dblp.org/X"}}


def test_export_names_archives_and_ids_as_openreview_has_them(tmp_path):
    """Profile ids bare in every file: expertise takes an archive's file name as the profile id it scores
    (core.py lines 42-45; create_dataset.py line 750 writes `<profile id>.jsonl`)."""
    source = tmp_path / "source" / "archives"
    source.mkdir(parents=True)
    (source / "~Abe_Roberts1.jsonl").write_text(json.dumps(
        {"id": "pub1", "content": {"title": {"value": "Graph matching"}, "abstract": {"value": "We match."},
                                   "authors": {"value": ["Abe Roberts", "Bo Chen"]},
                                   "authorids": {"value": ["~Abe_Roberts1", "~Bo_Chen2"]},
                                   "year": {"value": 2021}}}) + "\n", encoding="utf-8")
    before = InMemoryStore()
    load(before, "openreview", source.parent, tmp_path)
    submission = {"id": "openreview:sub1", "title": "S", "abstract": "A", "authors": ["Cy Doe"],
                  "author_ids": ["openreview:~Cy_Doe1"]}
    counts = export_dataset(before, ["openreview:~Abe_Roberts1"], [submission], tmp_path / "out")
    assert counts.reviewers == 1 and counts.publications == 1

    archives = expertise_archives(tmp_path / "out" / "archives")
    assert list(archives) == ["~Abe_Roberts1"]
    [note] = archives["~Abe_Roberts1"]
    assert note["id"] == "pub1" and note["content"]["authorids"] == ["~Abe_Roberts1", "~Bo_Chen2"]
    # SubmissionsDataset reads submissions.json with json.load (core.py lines 82-84): {note id: note}.
    submissions = json.loads((tmp_path / "out" / "submissions.json").read_text(encoding="utf-8"))
    assert submissions == {"sub1": {"id": "sub1", "content": {"title": "S", "abstract": "A", "authors": ["Cy Doe"],
                                                              "authorids": ["~Cy_Doe1"]}}}
    after = InMemoryStore()  # and ingesting the export gives the same graph back
    load(after, "openreview", tmp_path / "out", tmp_path)
    assert graph_of(after) == graph_of(before)


@pytest.mark.parametrize("no_title", ["", None], ids=["api1", "api2"])
def test_a_publication_with_an_abstract_and_no_title_is_a_paper(tmp_path, no_title):
    """expertise scores by abstract unless told otherwise (execute_expertise.py lines 30-31: use_title False,
    use_abstract True; bm25.py lines 33-42 reads the abstract first), and create_dataset.py keeps publications
    without a title (lines 228-230 drop them only with `with_title`)."""
    archives = tmp_path / "ds" / "archives"
    archives.mkdir(parents=True)
    (archives / "~Ann_Lee1.jsonl").write_text("".join(json.dumps(note) + "\n" for note in [
        expertise_publication("p1", no_title, "An abstract only.", cdate=1577836800000),
        expertise_publication("p2", "Titled", "Both.", cdate=1577836800000),
        expertise_publication("p3", no_title, "", cdate=1577836800000),  # no text at all: nothing to score
    ]), encoding="utf-8")
    store = InMemoryStore()
    summary = load(store, "openreview", tmp_path / "ds", tmp_path)
    assert graph_of(store)["papers"] == {"openreview:p1": (None, "An abstract only.", 2020),
                                         "openreview:p2": ("Titled", "Both.", 2020)}
    assert summary.quarantined == 1
    assert dict(summary.quarantine_reasons) == {"missing title": 1}
    # The untitled paper is the reviewer's expertise in an export too.
    counts = export_dataset(store, ["openreview:~Ann_Lee1"], [], tmp_path / "out")
    assert counts.publications == 2


def test_match_submissions_are_submissions_to_match_not_an_archive(tmp_path):
    """create_dataset.py lines 755-763: with a `match_paper_*` setting it writes archives/match_submissions.jsonl,
    one submission a line ({id, mdate, content: {title, abstract}}, lines 618-625), for paper-paper matching."""
    archives = tmp_path / "ds" / "archives"
    archives.mkdir(parents=True)
    (archives / "~Ann_Lee1.jsonl").write_text(json.dumps(
        expertise_publication("p1", "Mine", "Ann's paper.", pdate=1577836800000)) + "\n", encoding="utf-8")
    (archives / "match_submissions.jsonl").write_text("".join(json.dumps(note) + "\n" for note in [
        {"id": "s1", "mdate": 1700000000000, "content": {"title": "First", "abstract": "One."}},
        {"id": "s2", "mdate": 1700000000000, "content": {"title": None, "abstract": "Two."}},
    ]), encoding="utf-8")
    store = InMemoryStore()
    load(store, "openreview", tmp_path / "ds", tmp_path)
    graph = graph_of(store)
    assert list(graph["papers"]) == ["openreview:p1"]  # no paper of an author "match_submissions"
    assert [a for a, _, _ in graph["authored"]] == ["openreview:~Ann_Lee1"]

    from scholargraph.ingest.openreview import archive_lines

    lines, rejected = archive_lines([str(tmp_path / "ds")], tmp_path / "home" / "submissions.jsonl")
    written = tmp_path / "home" / "match_submissions.jsonl"
    assert [json.loads(line)["id"] for line in written.read_text(encoding="utf-8").splitlines()] == ["s1", "s2"]
    assert rejected == []
    [line] = lines
    assert line.startswith("match_submissions: 2 submissions to match") and str(written) in line


def test_dates_in_seconds_are_read_as_seconds_and_said(tmp_path):
    """OpenReview's dates are milliseconds (create_dataset.py lines 231-236 copy pdate into cdate, tcdate when
    there is neither, and sort by them); a file that gives seconds has its papers dated 1970 unless told apart."""
    archives = tmp_path / "ds" / "archives"
    archives.mkdir(parents=True)
    (archives / "~Ann_Lee1.jsonl").write_text("".join(json.dumps(note) + "\n" for note in [
        expertise_publication("p1", "Seconds", "A.", cdate=1577836800),  # 2020-01-01 in seconds
        expertise_publication("p2", "Milliseconds", "B.", cdate=1546300800000),  # 2019-01-01
    ]), encoding="utf-8")
    store = InMemoryStore()
    summary = load(store, "openreview", tmp_path / "ds", tmp_path)
    assert {p: year for p, (_, _, year) in graph_of(store)["papers"].items()} == {"openreview:p1": 2020,
                                                                                  "openreview:p2": 2019}
    # The normaliser counts them as it reads them: the loader's summary says so, no second pass over the archives.
    assert [line for line in summary.lines() if line.startswith("dates")] == [
        f"dates      1 publication(s) give their date in seconds, not OpenReview's milliseconds, and "
        f"were read as seconds: e.g. {archives / '~Ann_Lee1.jsonl'}:1"]
    from scholargraph.ingest.openreview import archive_lines

    lines, _ = archive_lines([str(tmp_path / "ds")], tmp_path / "home" / "submissions.jsonl")
    assert lines == []


def test_the_archives_are_read_once_and_dates_in_seconds_counted_by_the_normaliser(tmp_path, monkeypatch):
    """archive_lines read every archive line a second time to count dates in seconds, with a copy of the
    normaliser's date logic: it reads no archive now, and the count (with examples, also from parse workers'
    batches) is the normaliser's."""
    from scholargraph.ingest import loader
    from scholargraph.ingest.formats import openreview as layout
    from scholargraph.ingest.normalize import DATE_IN_SECONDS
    from scholargraph.ingest.openreview import archive_lines

    archives = tmp_path / "ds" / "archives"
    archives.mkdir(parents=True)
    (archives / "~Ann_Lee1.jsonl").write_text("".join(json.dumps(note) + "\n" for note in [
        *(expertise_publication(f"s{k}", f"Seconds {k}", "A.", cdate=1577836800 + k) for k in range(7)),
        {"id": "y", "cdate": 1577836800, "content": {"title": "Year given", "year": 2018}},  # no date read
        {"id": "bad", "cdate": 1577836800, "content": {}},  # quarantined: not counted
    ]), encoding="utf-8")
    summary = load(InMemoryStore(), "openreview", tmp_path / "ds", tmp_path)
    assert summary.notices == {DATE_IN_SECONDS: 7} and summary.quarantined == 1
    [line] = [line for line in summary.lines() if line.startswith("dates")]
    assert line.startswith("dates      7 publication(s) give their date in seconds") and line.endswith(" and 2 more")
    assert f"e.g. {archives / '~Ann_Lee1.jsonl'}:1, " in line

    def no_second_pass(path):
        raise AssertionError(f"archive {path} read again")

    monkeypatch.setattr(layout, "iter_raw", no_second_pass)
    assert archive_lines([str(tmp_path / "ds")], tmp_path / "home" / "submissions.jsonl") == ([], [])
    # What a parse worker sends back keeps the notes.
    batch = loader._normalize("openreview", list(iter_raw("openreview", str(archives / "~Ann_Lee1.jsonl"))))
    assert len(batch.noted) == 7
    assert loader._Normalized.loads(batch.dumps()).noted == batch.noted


API1_NOTE = {"id": "n1", "cdate": 1546300800000,
             "content": {"title": "Graph matching", "abstract": "We match.", "authors": ["Ann Lee", "Bo Chen"],
                         "authorids": ["~Ann_Lee1", "bo@example.org"], "venue": "ICLR 2020", "year": 2020}}
API2_NOTE = {"id": "n1", "cdate": 1546300800000,
             "content": {name: {"value": value} for name, value in API1_NOTE["content"].items()}}


@pytest.mark.parametrize("note", [API1_NOTE, API2_NOTE], ids=["api1", "api2"])
def test_api1_and_api2_notes_read_alike(note):
    """API 2 wraps every content field as {"value": ...}; create_dataset.py unwraps title and abstract the same
    way (lines 239-245, 607-614)."""
    from scholargraph.ingest.openreview import submission_record

    bundle = normalize("openreview", RawRecord("archives/~Ann_Lee1.jsonl", 1, {**note, "_archiveOwner": "~Ann_Lee1"}))
    assert (bundle.paper.title, bundle.paper.abstract, bundle.paper.year) == ("Graph matching", "We match.", 2020)
    assert [a.id for a in bundle.authors] == ["openreview:~Ann_Lee1", "name:bo_chen"]
    assert bundle.venue is not None and bundle.venue.name == "ICLR 2020"
    assert submission_record(note) == {"id": "n1", "title": "Graph matching", "abstract": "We match.", "year": 2020,
                                       "authors": ["Ann Lee", {"name": "Bo Chen", "email": "bo@example.org"}],
                                       "author_ids": ["openreview:~Ann_Lee1"]}


def test_an_api2_online_date_comes_before_the_creation_date():
    """API 2 notes carry odate (the date the paper went online); create_dataset.py _get_paper_date (lines 88-112)
    takes pdate, then odate, then cdate. A paper imported years after it appeared has a late cdate."""
    bundle = normalize("openreview", RawRecord("archives/~Ann_Lee1.jsonl", 1, {
        "id": "n1", "odate": 1262304000000, "cdate": 1640995200000,  # online 2010, created in OpenReview 2022
        "content": {"title": {"value": "Old paper"}}, "_archiveOwner": "~Ann_Lee1"}))
    assert bundle.paper.year == 2010


def test_a_submission_given_twice_is_written_once_and_a_differing_one_reported(tmp_path):
    """A note id repeated across the submissions files (submissions.json, submissions.jsonl, submissions/, and
    several dataset folders) was written twice to the --queries file, so recommend and assign saw the submission
    twice. The same record again is kept once and counted; another record under the same id: the first is kept,
    the repeat quarantined, both said with examples. The run goes on: this is a dump."""
    from scholargraph.ingest.openreview import read_submissions

    def note(note_id, title):
        return {"id": note_id, "content": {"title": title, "abstract": "About it.", "authorids": ["~Cy_Doe1"]}}

    first, second = tmp_path / "a", tmp_path / "b"
    (first / "submissions").mkdir(parents=True)
    # submissions.json is {id: note}, the note without its id (create_dataset's file).
    (first / "submissions.json").write_text(json.dumps({"s1": {"content": note("s1", "One")["content"]},
                                                        "s2": {"content": note("s2", "Two")["content"]}}))
    (first / "submissions.jsonl").write_text(json.dumps(note("s1", "One")) + "\n"
                                             + json.dumps(note("s2", "Two, revised")) + "\n")
    (first / "submissions" / "s3.jsonl").write_text(json.dumps(note("s3", "Three")) + "\n")
    second.mkdir()
    (second / "submissions.jsonl").write_text(json.dumps(note("s3", "Three")) + "\n")
    found = read_submissions([str(first), str(second)])
    assert [(r["id"], r["title"]) for r in found.records] == [("s1", "One"), ("s2", "Two"), ("s3", "Three")]
    assert found.repeated == [f"s1 ({first / 'submissions.jsonl'}:1, first at {first / 'submissions.json'}:1)",
                              f"s3 ({second / 'submissions.jsonl'}:1, first at {first / 'submissions' / 's3.jsonl'}:1)"]
    assert found.conflicting == [f"s2 ({first / 'submissions.jsonl'}:2, first at {first / 'submissions.json'}:1)"]
    [bad] = found.rejected
    assert bad["reason"].startswith("duplicate id: s2 was read at") and bad["line"] == 2
    assert found.lines("submissions") == [
        f"submissions: 2 note(s) given again with the same content, kept once: e.g. {found.repeated[0]}, "
        f"{found.repeated[1]}",
        f"submissions: 1 note(s) given again with other content: the first is kept, the repeat quarantined: "
        f"e.g. {found.conflicting[0]}"]
    assert read_submissions(str(second)).lines("submissions") == []  # one folder, as before


def test_match_submissions_given_twice_are_written_once(tmp_path):
    """create_dataset.py's archives/match_submissions.jsonl goes through the same reader: a repeated note id is
    written once to match_submissions.jsonl, and said."""
    from scholargraph.ingest.openreview import archive_lines

    archives = tmp_path / "ds" / "archives"
    archives.mkdir(parents=True)
    (archives / "match_submissions.jsonl").write_text("".join(json.dumps(n) + "\n" for n in [
        {"id": "m1", "content": {"title": "First", "abstract": "One."}},
        {"id": "m1", "content": {"title": "First", "abstract": "One."}},
        {"id": "m1", "content": {"title": "Other", "abstract": "One."}},
    ]), encoding="utf-8")
    lines, rejected = archive_lines([str(tmp_path / "ds")], tmp_path / "home" / "submissions.jsonl")
    written = (tmp_path / "home" / "match_submissions.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["title"] for line in written] == ["First"]
    assert lines[0].startswith("match_submissions: 1 submissions to match")
    assert lines[1:] == [
        f"match_submissions: 1 note(s) given again with the same content, kept once: e.g. m1 "
        f"({archives / 'match_submissions.jsonl'}:2, first at {archives / 'match_submissions.jsonl'}:1)",
        f"match_submissions: 1 note(s) given again with other content: the first is kept, the repeat quarantined: "
        f"e.g. m1 ({archives / 'match_submissions.jsonl'}:3, first at {archives / 'match_submissions.jsonl'}:1)"]
    assert [r["line"] for r in rejected] == [3] and rejected[0]["reason"].startswith("duplicate id: m1")
