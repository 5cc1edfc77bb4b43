"""normalize(): identity rules, cleanup, validation (InvalidRecord) and drops, for every format."""

from __future__ import annotations

import datetime

import pytest

from scholargraph.errors import InvalidRecord, UsageError
from scholargraph.graph.records import Citation, RawRecord
from scholargraph.ingest.normalize import (
    FORMATS,
    Dropped,
    clean_text,
    inverted_index_to_text,
    iter_raw,
    normalize,
)

NEXT_YEAR = datetime.date.today().year + 1


def norm(fmt: str, data: dict, line: int = 1):
    return normalize(fmt, RawRecord(source="test.jsonl", line=line, data=data))


def reason(fmt: str, data: dict) -> str:
    with pytest.raises(InvalidRecord) as caught:
        norm(fmt, data)
    return caught.value.reason


def dropped(fmt: str, data: dict) -> str:
    with pytest.raises(Dropped) as caught:
        norm(fmt, data)
    return caught.value.reason


def outcomes(fmt: str, path) -> list:
    """(line, paper id | 'invalid: category' | 'dropped: reason') for every record of a file."""
    result = []
    for raw in iter_raw(fmt, str(path)):
        try:
            result.append((raw.line, normalize(fmt, raw).paper.id))
        except InvalidRecord as exc:
            result.append((raw.line, "invalid: " + exc.reason.split(":")[0]))
        except Dropped as exc:
            result.append((raw.line, "dropped: " + exc.reason))
    return result


def aminer(**fields) -> dict:
    return {"id": "p1", "title": "A title", "authors": ["Ann Author"], "year": 2001, **fields}


# --- fixture files -----------------------------------------------------------------------------


def test_fixture_outcomes(fixtures_dir):
    assert outcomes("openalex", fixtures_dir / "openalex_works.jsonl") == [
        (1, "10.7717/peerj.4375"), (2, "openalex:W1000000001"), (3, "invalid: malformed JSON"),
        (4, "invalid: invalid year"), (5, "invalid: missing title")]
    assert outcomes("aminer", fixtures_dir / "aminer_v10.jsonl") == [
        (1, "aminer:00127ee2-cb05-48ce-bc49-9de556b93346"),
        (2, "aminer:51c7e02e-f5ed-431a-8cf5-f761f266d4be"),
        (3, "invalid: missing title"), (4, "invalid: no authors")]
    assert outcomes("aminer", fixtures_dir / "aminer_v12.json") == [
        (2, "10.1109/iv.2005.36"), (3, "aminer:2005687710")]
    assert outcomes("s2", fixtures_dir / "s2_graph.json") == [
        (2, "10.1145/3097983.3098036"), (46, "s2:0000aaaa")]
    assert outcomes("s2", fixtures_dir / "s2_papers.jsonl") == [(1, "10.1000/xyz.1"), (2, "s2corpus:1002")]
    assert outcomes("s2", fixtures_dir / "s2_abstracts.jsonl") == [
        (1, "s2corpus:1001"), (2, "dropped: empty abstract")]
    assert outcomes("s2", fixtures_dir / "s2_citations.jsonl") == [
        (1, "s2corpus:1002"), (2, "dropped: unresolved citation"), (3, "dropped: self citation")]
    assert outcomes("bibtex", fixtures_dir / "sample.bib") == [
        (7, "10.1145/1111.2222"), (19, "bibtex:dblp:journals/x/Smith19"), (27, "dropped: session header"),
        (35, "invalid: unbalanced braces"), (40, "bibtex:after-broken"), (47, "invalid: no authors"),
        (52, "invalid: invalid year"), (58, "bibtex:parens-key")]


def test_openalex_work(fixtures_dir):
    raw = next(iter_raw("openalex", str(fixtures_dir / "openalex_works.jsonl")))
    bundle = normalize("openalex", raw)
    paper = bundle.paper
    assert paper.id == paper.doi == "10.7717/peerj.4375"
    assert paper.sources == ("openalex:W2741809807",)
    assert paper.title == "The state of OA: a large-scale analysis"
    assert paper.abstract == "Despite growing interest in Open Access (OA) in scholarly communication"
    assert (paper.year, paper.n_citation, paper.partial, paper.stub) == (2018, 421, False, False)
    assert bundle.venue.id == paper.venue_id == "venue:peerj" and bundle.venue.name == "PeerJ"
    assert [(a.id, a.name, a.orcid, a.sources) for a in bundle.authors] == [
        ("orcid:0000-0003-1613-5981", "Heather Piwowar", "0000-0003-1613-5981", ("openalex:A5023888391",)),
        ("openalex:A5006120224", "Jason Priem", None, ("openalex:A5006120224",)),
        ("name:stefanie_haustein", "Stefanie Haustein", None, ())]
    assert [(s.author_id, s.paper_id, s.position) for s in bundle.authorships] == [
        ("orcid:0000-0003-1613-5981", paper.id, 1), ("openalex:A5006120224", paper.id, 2),
        ("name:stefanie_haustein", paper.id, 3)]
    # Duplicates and the self-reference (by its OpenAlex id) are gone.
    assert bundle.citations == (Citation(paper.id, "openalex:W1000000001"),
                                Citation(paper.id, "openalex:W1000000002"))
    assert (bundle.origin, bundle.line) == (raw.source, 1)


def test_openalex_title_falls_back_to_display_name(fixtures_dir):
    records = list(iter_raw("openalex", str(fixtures_dir / "openalex_works.jsonl")))
    assert normalize("openalex", records[1]).paper.title == "A work without a DOI"


def test_s2_graph_paper(fixtures_dir):
    first, second = (normalize("s2", r) for r in iter_raw("s2", str(fixtures_dir / "s2_graph.json")))
    paper = first.paper
    assert paper.sources == ("s2:649def34f8be52c8b66281af98ae884c09aef38b", "s2corpus:3776053")
    assert [a.id for a in first.authors] == ["s2author:1741101", "s2author:2059015"]
    assert first.citations == (
        Citation(paper.id, "10.18653/v1/n18-3011"), Citation(paper.id, "s2:c3d4"),
        Citation(paper.id, "s2:e5f6"), Citation("s2:ffff", paper.id))
    assert (paper.n_citation, first.venue.id) == (250, "venue:naacl")
    assert second.venue.name == "ACL"  # empty venue string -> publicationVenue.name
    assert second.authors[0].id == "name:nameonly_person"


def test_s2_dataset_rows(fixtures_dir):
    papers = [normalize("s2", r) for r in iter_raw("s2", str(fixtures_dir / "s2_papers.jsonl"))]
    assert papers[0].paper.sources == ("s2corpus:1001",) and papers[0].paper.n_citation == 7
    assert papers[1].venue.name == "Information Retrieval Journal"
    abstract = normalize("s2", next(iter_raw("s2", str(fixtures_dir / "s2_abstracts.jsonl")))).paper
    assert abstract.partial and abstract.title is None and abstract.abstract == "An abstract for paper one."
    citation = normalize("s2", next(iter_raw("s2", str(fixtures_dir / "s2_citations.jsonl"))))
    assert citation.paper.partial and citation.paper.title is None and citation.authors == ()
    assert citation.citations == (Citation("s2corpus:1002", "s2corpus:1001"),)


def test_s2orc_metadata():
    bundle = norm("s2", {"paper_id": "77490025", "title": "T", "doi": None, "year": 1975, "venue": None,
                         "journal": "Zhurnal", "abstract": None,
                         "authors": [{"first": "Ann", "middle": ["B.", "C."], "last": "Dee", "suffix": "Jr"},
                                     {"first": "", "middle": [], "last": "", "suffix": ""}],
                         "outbound_citations": ["1", "2", "1", "77490025"], "inbound_citations": ["9"]})
    assert bundle.paper.id == "s2corpus:77490025" and bundle.venue.name == "Zhurnal"
    assert [a.name for a in bundle.authors] == ["Ann B. C. Dee Jr"]
    assert bundle.citations == (Citation("s2corpus:77490025", "s2corpus:1"),
                                Citation("s2corpus:77490025", "s2corpus:2"),
                                Citation("s2corpus:9", "s2corpus:77490025"))


def test_aminer_v12_record(fixtures_dir):
    bundle = normalize("aminer", next(iter_raw("aminer", str(fixtures_dir / "aminer_v12.json"))))
    assert bundle.paper.abstract == "We present a learning network tool."
    assert bundle.paper.sources == ("aminer:1091",)
    assert [(a.id, a.name) for a in bundle.authors] == [("aminer:2312688602", "Nina Nguyen"),
                                                        ("aminer:2482909946", "Omar Otis")]
    assert bundle.venue.id == "venue:information_visualisation"
    assert [c.cited_id for c in bundle.citations] == ["aminer:2005687710", "aminer:2018037215"]


def test_bibtex_entry(fixtures_dir):
    bundle = normalize("bibtex", next(iter_raw("bibtex", str(fixtures_dir / "sample.bib"))))
    assert bundle.paper.id == "10.1145/1111.2222" and bundle.paper.sources == ("bibtex:10.1145/1111.2222",)
    assert bundle.venue.id == "venue:sigir" and bundle.venue.name == "SIGIR '20"  # series wins over booktitle
    assert bundle.authors[0].id == "name:beatrice_dupont"


# --- identity ----------------------------------------------------------------------------------


def test_doi_wins_and_is_lower_cased_but_the_source_id_stays_in_sources():
    paper = norm("aminer", aminer(doi="https://doi.org/10.1145/ABC.Def")).paper
    assert (paper.id, paper.doi, paper.sources) == ("10.1145/abc.def", "10.1145/abc.def", ("aminer:p1",))
    assert norm("aminer", aminer(doi="not a doi")).paper.id == "aminer:p1"
    assert norm("aminer", aminer(id=None, doi="10.1234/x")).paper.sources == ()


def test_bibtex_doi_from_url_when_the_doi_field_is_missing():
    data = {"ENTRYTYPE": "article", "ID": "key", "title": "T", "author": ["A B"], "url": "https://doi.org/10.5555/Q"}
    assert norm("bibtex", data).paper.id == "10.5555/q"


def test_missing_id_and_doi():
    assert reason("aminer", aminer(id=None)) == "missing id: neither a source id nor a DOI"
    assert reason("aminer", aminer(id="  ")).startswith("missing id")
    assert reason("openalex", {"title": "T", "authorships": []}).startswith("missing id")


def test_author_ids_positions_and_duplicates():
    bundle = norm("aminer", aminer(authors=[
        {"name": "Ann  A.", "id": 7}, {"name": "Bob", "orcid": "0000-0002-1825-0097"}, {"name": "", "id": 8},
        {"name": "Ann A.", "id": 7}, "Carl C", {"org": "nameless"}, 42, {"name": "Dee", "id": {"bad": 1}}]))
    assert [(a.id, a.name) for a in bundle.authors] == [
        ("aminer:7", "Ann A."), ("orcid:0000-0002-1825-0097", "Bob"), ("name:carl_c", "Carl C"),
        ("name:dee", "Dee")]
    assert [s.position for s in bundle.authorships] == [1, 2, 3, 4]


def test_references_drop_duplicates_self_references_and_junk():
    bundle = norm("aminer", aminer(references=["p2", "p2", "p1", None, {"x": 1}, 5, "10.1000/ABC"]))
    assert [c.cited_id for c in bundle.citations] == ["aminer:p2", "aminer:5", "10.1000/abc"]


def test_venues_merge_across_sources():
    bib = norm("bibtex", {"ENTRYTYPE": "inproceedings", "ID": "k", "title": "T", "author": ["A B"],
                          "series": "SIGIR '20", "booktitle": "Proceedings of the 43rd ..."})
    s2 = norm("s2", {"corpusid": 1, "title": "T", "authors": [{"authorId": "1", "name": "A"}],
                     "venue": "SIGIR 2021"})
    aminer_v11 = norm("aminer", aminer(venue={"raw": "SIGIR", "id": 5}))
    assert bib.venue.id == s2.venue.id == aminer_v11.venue.id == "venue:sigir"
    assert norm("aminer", aminer(venue="2020")).venue is None  # nothing left once the year is gone


def test_no_id_has_whitespace_whatever_the_source_gives():
    bundle = norm("bibtex", {"ENTRYTYPE": "inproceedings", "ID": "my key", "title": "T",
                             "author": ["Ahmed T. Elthakeb"], "booktitle": "Neural Information Processing"})
    assert bundle.paper.id == "bibtex:my_key" and bundle.paper.sources == ("bibtex:my_key",)
    assert bundle.authors[0].id == "name:ahmed_t_elthakeb"
    assert bundle.venue.id == "venue:neural_information_processing"
    s2 = norm("s2", {"paperId": "abc def", "title": "T", "authors": [{"authorId": "17 37", "name": "A"}],
                     "references": [{"paperId": "x y"}]})
    assert s2.paper.id == "s2:abc_def" and s2.authors[0].id == "s2author:17_37"
    assert [c.cited_id for c in s2.citations] == ["s2:x_y"]
    amin = norm("aminer", aminer(references=["p 9"]))
    assert [c.cited_id for c in amin.citations] == ["aminer:p_9"]


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize("year, expected", [
    (2020, 2020), ("2020", 2020), (" 1999 ", 1999), (2020.0, 2020), (NEXT_YEAR, NEXT_YEAR), (None, None),
    ("", None),
])
def test_valid_years(year, expected):
    assert norm("aminer", aminer(year=year)).paper.year == expected


@pytest.mark.parametrize("year", ["n/a", -5, 0, 999, NEXT_YEAR + 1, True, 2020.5, "２０２０", [2020],
                                  "2020a"])
def test_invalid_years_quarantine_the_record(year):
    assert reason("aminer", aminer(year=year)).startswith("invalid year")


def test_missing_or_empty_title():
    assert reason("aminer", aminer(title=None)) == "missing title"
    assert reason("aminer", aminer(title=" \n\t ")) == "missing title"
    work = {"id": "W1", "title": None, "display_name": "", "authorships": []}
    assert reason("openalex", work) == "missing title"


def test_no_authors():
    assert reason("aminer", aminer(authors=[])) == "no authors"
    assert reason("aminer", aminer(authors=["", "  "])) == "no authors"
    assert reason("aminer", {"id": "p", "title": "T"}) == "no authors"


@pytest.mark.parametrize("fields, message", [
    ({"title": ["A", "list"]}, "wrong type: title is list"),
    ({"abstract": 5}, "wrong type: abstract is int"),
    ({"authors": {"name": "x"}}, "wrong type: authors is dict"),
    ({"references": "p2"}, "wrong type: references is str"),
    ({"id": {"oid": 1}}, "wrong type: id is dict"),
    ({"id": True}, "wrong type: id is bool"),
])
def test_wrong_types(fields, message):
    assert reason("aminer", aminer(**fields)) == message


def test_parser_errors_pass_through_with_their_excerpt():
    raw = RawRecord(source="f.jsonl", line=9, error="malformed JSON: boom", excerpt='{"id": ')
    with pytest.raises(InvalidRecord) as caught:
        normalize("aminer", raw)
    assert (caught.value.source, caught.value.line, caught.value.reason, caught.value.raw) == (
        "f.jsonl", 9, "malformed JSON: boom", '{"id": ')


def test_invalid_record_excerpt_comes_from_the_data():
    with pytest.raises(InvalidRecord) as caught:
        norm("aminer", aminer(title=None, abstract="x" * 1000), line=4)
    assert caught.value.line == 4 and caught.value.raw.startswith('{"id": "p1"')
    assert len(caught.value.raw) <= 300


def test_unknown_s2_shape_and_unknown_format():
    assert reason("s2", {"title": "T"}).startswith("unknown record")
    with pytest.raises(UsageError):
        norm("endnote", {})
    with pytest.raises(UsageError):
        iter_raw("endnote", "x")
    assert set(FORMATS) == {"aminer", "openalex", "s2", "bibtex", "openreview"}


# --- drops -------------------------------------------------------------------------------------


def bib(**fields) -> dict:
    return {"ENTRYTYPE": "inproceedings", "ID": "k", "title": "T", "author": ["A B"], **fields}


def test_session_headers_are_dropped_unless_they_have_an_abstract():
    assert dropped("bibtex", bib(title="Session details: Retrieval", author=[])) == "session header"
    assert dropped("bibtex", bib(title="SESSION DETAILS : x")) == "session header"
    assert norm("bibtex", bib(title="Session details: Keynote", abstract="A talk.")).paper.title == \
        "Session details: Keynote"
    assert norm("bibtex", bib(title="Session-based recommendation")).paper.id == "bibtex:k"


def test_proceedings_volumes_are_dropped():
    assert dropped("bibtex", bib(ENTRYTYPE="proceedings", author=[])) == "proceedings volume"


def test_dropped_carries_where_it_came_from():
    with pytest.raises(Dropped) as caught:
        normalize("s2", RawRecord(source="c.jsonl", line=3, data={"citingcorpusid": 1,
                                                                 "citedcorpusid": None}))
    exc = caught.value
    assert (exc.source, exc.line, exc.reason) == ("c.jsonl", 3, "unresolved citation")


# --- text --------------------------------------------------------------------------------------


def test_clean_text():
    assert clean_text("  a \n b\t\tc ") == "a b c"
    assert clean_text(" \n ") is None
    assert clean_text("bad \ud800 surrogate") == "bad \ufffd surrogate"


def test_inverted_index_to_text():
    assert inverted_index_to_text({"b": [1], "a": [0, 3], "c": [2]}) == "a b c a"
    assert inverted_index_to_text({"gap": [5], "start": [0]}) == "start gap"
    assert inverted_index_to_text({"IndexLength": 2, "InvertedIndex": {"x": [1], "y": [0]}}) == "y x"
    assert inverted_index_to_text('{"x": [0]}') == "x"
    assert inverted_index_to_text({"x": [True, -1, "2", 1.5], "y": "0"}) is None
    assert inverted_index_to_text(None) is None and inverted_index_to_text("{not json") is None
