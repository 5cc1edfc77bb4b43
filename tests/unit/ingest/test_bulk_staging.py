"""BulkStaging (pure, no Neo4j): the upsert semantics applied in memory, and the importer's CSV files.
The integration test (tests/integration/ingest/test_bulk.py) holds the whole graph to the transactional
path; these pin the details a fixture may not reach."""

from __future__ import annotations

import csv

from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle
from scholargraph.ingest.bulk import ARRAY_DELIMITER, BulkStaging, _cell


def bundle(pid, title="T", sources=None, cites=(), authors=("a1",), partial=False, **paper) -> PaperBundle:
    return PaperBundle(
        paper=Paper(id=pid, title=title, sources=tuple(sources if sources is not None else [f"src:{pid}"]),
                    partial=partial, **paper),
        authors=tuple(Author(id=a, name=a.upper(), sources=(a,)) for a in authors),
        authorships=tuple(Authorship(author_id=a, paper_id=pid, position=i + 1) for i, a in enumerate(authors)),
        citations=tuple(Citation(citing_id=pid, cited_id=c) for c in cites))


def rows(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def export(staging, tmp_path):
    files, counts = staging.write_import_files(tmp_path / "csv", quiet=True)
    return {spec.split("=", 1)[0]: rows(spec.split("=", 1)[1]) for kind in files.values() for spec in kind}, counts


def test_counts_follow_the_upsert_queries(tmp_path):
    staging = BulkStaging(tmp_path / "s", ingested_at=123)
    first = staging.write_bundles([bundle("p1", cites=["p2", "p3"]), bundle("p3")])
    assert (first.papers, first.papers_created, first.stubs_created, first.citations) == (2, 2, 1, 2)
    # The stub p2 is filled by its record; p1 seen from another source merges.
    second = staging.write_bundles([bundle("p2"), bundle("p1", sources=["other:1"])])
    assert (second.papers_created, second.stubs_filled, second.merged) == (0, 1, 1)
    tables, counts = export(staging, tmp_path)
    papers = {r["id"]: r for r in tables["Paper"]}
    assert papers["p1"]["sources:string[]"] == ARRAY_DELIMITER.join(["src:p1", "other:1"])
    assert papers["p2"]["stub:boolean"] == "false" and papers["p2"]["ingestedAt:long"] == "123"
    assert counts.papers == 3 and counts.stubs == 0 and counts.citations == 2
    staging.close()


def test_alias_folds_a_stub_and_moves_its_citations(tmp_path):
    staging = BulkStaging(tmp_path / "s", ingested_at=1)
    staging.write_bundles([bundle("src:w1", sources=["src:w1"], cites=["src:w2"]),
                           bundle("src:w3", sources=["src:w3"], cites=["src:w2"])])
    # src:w2 arrives with its DOI: the stub src:w2 folds into 10.1/two; it cites src:w1 and itself.
    staging.write_bundles([bundle("10.1/two", sources=["src:w2"], cites=["src:w1", "src:w2"])])
    tables, counts = export(staging, tmp_path)
    ids = {r[":ID(Paper)"]: r["id"] for r in tables["Paper"]}
    assert sorted(ids.values()) == ["10.1/two", "src:w1", "src:w3"]
    cites = sorted((ids[r[":START_ID(Paper)"]], ids[r[":END_ID(Paper)"]]) for r in tables["CITES"])
    assert cites == [("10.1/two", "src:w1"), ("src:w1", "10.1/two"), ("src:w3", "10.1/two")]
    assert tables["PaperAlias"] == [{":ID(PaperAlias)": "0", "id": "src:w2", "paperId": "10.1/two"}]
    assert counts.stubs == 0
    staging.close()


def test_partial_records_keep_stub_status_and_fill_fields(tmp_path):
    staging = BulkStaging(tmp_path / "s", ingested_at=1)
    staging.write_bundles([bundle("p1", title=None, partial=True, abstract="An abstract.", authors=())])
    staging.write_bundles([bundle("p1", title="Title", year=2001)])
    staging.write_bundles([bundle("p1", title=None, partial=True, abstract="Newer.", authors=())])
    tables, _ = export(staging, tmp_path)
    (paper,) = tables["Paper"]
    assert (paper["title"], paper["abstract"], paper["year:long"], paper["stub:boolean"]) == \
        ("Title", "Newer.", "2001", "false")
    staging.close()


def test_cells_keep_empty_strings_quotes_newlines_and_nulls_apart():
    assert _cell(None) == ""
    assert _cell("") == '""'
    assert _cell('say "hi"\nthere') == '"say ""hi""\nthere"'
    assert _cell(["a", "b"]) == f'"a{ARRAY_DELIMITER}b"'
    assert (_cell(True), _cell(False), _cell(7)) == ("true", "false", "7")


def test_the_importer_reads_in_parallel_chunks_unless_a_field_holds_a_line_break(tmp_path):
    from scholargraph.server.admin_import import import_command

    for title, expected in (("One line", 0), ("Two\nlines", 1)):
        staging = BulkStaging(tmp_path / f"s{expected}", ingested_at=1)
        staging.write_bundles([bundle("p1", title=title), bundle("p2")])
        tables, counts = export(staging, tmp_path / f"out{expected}")
        assert counts.multiline_rows == expected
        assert {p["title"] for p in tables["Paper"]} == {title, "T"}  # the line break survives the CSV
        staging.close()
    files = {"nodes": ["Paper=p.csv"], "relationships": []}
    assert "--multiline-fields=false" in import_command(files, ARRAY_DELIMITER, tmp_path / "r", multiline=False)
    assert "--multiline-fields=true" in import_command(files, ARRAY_DELIMITER, tmp_path / "r", multiline=True)


def test_the_paper_row_is_the_cells_of_its_columns():
    from scholargraph.ingest.bulk import paper_line

    records = [["p1", 'A "quoted" title', None, 2001, "10.1/x", "venue:v", ["s:1", "s:2"], [], []],
               ["p2", None, "", None, None, None, [], [], []],
               ["p3", "T", "Line\nbreak", 1999, None, "venue:w", None, [], []]]
    for i, record in enumerate(records):
        for stub, ingested in ((True, None), (False, 123)):
            cells = [i, *record[:6], record[6], stub, ingested]
            assert paper_line(i, record, stub, ingested) == ",".join(_cell(v) for v in cells)
