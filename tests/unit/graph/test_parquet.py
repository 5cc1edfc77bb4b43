"""Parquet snapshots on InMemoryStore: export, read back, the as-of cut, part files and refusals."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from scholargraph.errors import UsageError
from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.parquet import (
    MANIFEST,
    SCHEMAS,
    TABLES,
    export_parquet,
    read_manifest,
    read_snapshot,
    verify_snapshot,
)
from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle, Venue
from scholargraph.graph.snapshot import GraphSnapshot


def bundle(pid, year, refs=(), authors=("a:1",), venue=None, title="A title", abstract="words", venue_id=None):
    authors_ = tuple(Author(a, f"Name {a}") for a in authors)
    return PaperBundle(
        paper=Paper(pid, title, abstract=abstract, year=year, sources=(pid,),
                    venue_id=venue.id if venue else venue_id),
        authors=authors_, venue=venue,
        authorships=tuple(Authorship(a.id, pid, i + 1) for i, a in enumerate(authors_)),
        citations=tuple(Citation(pid, r) for r in refs))


def world() -> InMemoryStore:
    """Dated papers over 2000-2004, an undated full paper that cites, stubs cited early and late, two venues
    (one without papers), a paper naming a venue that has no node, authors active only late, no-text papers."""
    kdd, www = Venue("venue:kdd", "KDD"), Venue("venue:www", None)
    store = InMemoryStore()
    store.write_bundles([
        bundle("p:1", 2000, refs=("stub:a",), authors=("a:1", "a:2"), venue=kdd),
        bundle("p:2", 2001, refs=("p:1", "stub:b"), authors=("a:2",), title=None, abstract=None),
        bundle("p:3", 2002, refs=("p:1", "p:2", "p:nodate"), authors=("a:3", "a:1"), venue=kdd),
        bundle("p:4", 2004, refs=("p:3", "stub:c", "stub:a"), authors=("a:4",), venue_id="venue:ghost"),
        bundle("p:nodate", None, refs=("p:1", "stub:d"), authors=("a:5",)),
        bundle("p:5", 2003, refs=("p:4", "p:3"), authors=("a:4", "a:2")),
    ])
    store.write_bundles([PaperBundle(paper=None, venue=www)])
    return store


def assert_same(a: GraphSnapshot, b: GraphSnapshot) -> None:
    assert a.paper_ids == b.paper_ids
    assert a.author_ids == b.author_ids
    assert a.venue_ids == b.venue_ids
    np.testing.assert_array_equal(a.paper_year, b.paper_year)
    np.testing.assert_array_equal(a.paper_stub, b.paper_stub)
    np.testing.assert_array_equal(a.paper_venue, b.paper_venue)
    for name in ("citations", "authorship"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and x.dtype == y.dtype and (x != y).nnz == 0, name
    if a.n_papers or b.n_papers:
        assert (a.titles, a.abstracts) == (b.titles, b.abstracts)
    else:  # as_of of a text snapshot keeps empty lists where build() of no papers has no text (None)
        assert not a.titles and not b.titles and not a.abstracts and not b.abstracts
    assert (a.author_names, a.venue_names) == (b.author_names, b.venue_names)
    assert a.extra == b.extra


def test_round_trip_equals_from_store(tmp_path):
    store = world()
    manifest = export_parquet(store, tmp_path / "snap")
    got = read_snapshot(tmp_path / "snap")
    want = GraphSnapshot.from_store(store, with_text=True)
    assert_same(got, want)
    assert want.n_papers == 10 and "venue:ghost" in got.venue_ids and got.titles and None in got.titles
    assert manifest == read_manifest(tmp_path / "snap")
    assert manifest["format"] == "scholargraph-snapshot" and manifest["format_version"] == 1
    assert manifest["as_of"] is None and manifest["with_text"] is True
    assert manifest["counts"] == {"papers": 10, "authors": 5, "venues": 3, "authorships": 9, "citations": 13}
    assert manifest["tables"] == {t: [f"{t}/part-00000.parquet"] for t in TABLES}
    assert len(manifest["graph_version"]) == 64 and isinstance(manifest["watermark"], int)
    for t in TABLES:
        assert pq.read_schema(tmp_path / "snap" / t / "part-00000.parquet").equals(SCHEMAS[t], check_metadata=False)


def test_without_text(tmp_path):
    store = world()
    manifest = export_parquet(store, tmp_path / "snap", with_text=False)
    assert manifest["with_text"] is False
    table = pq.read_table(tmp_path / "snap" / "papers")
    assert table.column("title").null_count == table.num_rows == 10
    assert_same(read_snapshot(tmp_path / "snap"), GraphSnapshot.from_store(store, with_text=False))
    # A text export read without text is the text-less snapshot.
    export_parquet(store, tmp_path / "text")
    assert_same(read_snapshot(tmp_path / "text", with_text=False), GraphSnapshot.from_store(store))


@pytest.mark.parametrize("year", [2001, 2003])
def test_as_of_equals_snapshot_as_of(tmp_path, year):
    store = world()
    manifest = export_parquet(store, tmp_path / "snap", as_of=year)
    got = read_snapshot(tmp_path / "snap")
    want = GraphSnapshot.from_store(store, with_text=True).as_of(year)
    assert_same(got, want)  # the same order too (papers in id order, authors in the store's)
    assert manifest["as_of"] == year and got.extra["as_of"] == year
    assert manifest["counts"]["papers"] == want.n_papers and manifest["counts"]["citations"] == want.citations.nnz


def test_as_of_keeps_the_stubs_kept_papers_cite_and_nothing_undated_cites(tmp_path):
    export_parquet(world(), tmp_path / "snap", as_of=2002)
    papers = pq.read_table(tmp_path / "snap" / "papers").to_pydict()
    # stub:c is cited by p:4 (2004) only; stub:d only by the undated p:nodate, which cites nothing as of T.
    assert papers["id"] == ["p:1", "p:2", "p:3", "p:nodate", "stub:a", "stub:b"]
    cites = pq.read_table(tmp_path / "snap" / "citations").to_pydict()
    assert sorted(zip(cites["citing_id"], cites["cited_id"], strict=True)) == [
        ("p:1", "stub:a"), ("p:2", "p:1"), ("p:2", "stub:b"), ("p:3", "p:1"), ("p:3", "p:2"), ("p:3", "p:nodate")]
    authors = pq.read_table(tmp_path / "snap" / "authors").to_pydict()
    # a:4 wrote only later papers; a:5 the undated paper, kept because p:3 cites it.
    assert authors["id"] == ["a:1", "a:2", "a:3", "a:5"]
    assert pq.read_table(tmp_path / "snap" / "venues").num_rows == 3  # all venues, as of any year


def test_several_part_files_in_order(tmp_path):
    store = world()
    manifest = export_parquet(store, tmp_path / "snap", rows_per_file=3)
    assert manifest["tables"]["papers"] == [f"papers/part-{i:05d}.parquet" for i in range(4)]  # 10 rows
    assert len(manifest["tables"]["citations"]) == 5 and len(manifest["tables"]["venues"]) == 1
    for t, parts in manifest["tables"].items():
        sizes = [pq.ParquetFile(tmp_path / "snap" / p).metadata.num_rows for p in parts]
        assert all(s == 3 for s in sizes[:-1]) and 1 <= sizes[-1] <= 3 and sum(sizes) == manifest["counts"][t]
    assert_same(read_snapshot(tmp_path / "snap"), GraphSnapshot.from_store(store, with_text=True))
    export_parquet(store, tmp_path / "asof", as_of=2003, rows_per_file=2)
    assert_same(read_snapshot(tmp_path / "asof"), GraphSnapshot.from_store(store, with_text=True).as_of(2003))


def test_an_empty_graph_has_one_empty_part_per_table(tmp_path):
    store = InMemoryStore()
    manifest = export_parquet(store, tmp_path / "snap")
    assert manifest["counts"] == dict.fromkeys(TABLES, 0)
    for t in TABLES:
        table = pq.read_table(tmp_path / "snap" / t)  # what Spark's read of the folder sees: a schema
        assert table.num_rows == 0 and table.schema.equals(SCHEMAS[t], check_metadata=False)
    assert_same(read_snapshot(tmp_path / "snap"), GraphSnapshot.from_store(store, with_text=True))
    # As of a year before every paper: papers, citations, authorships and authors empty, venues kept.
    export_parquet(world(), tmp_path / "early", as_of=1990)
    counts = read_manifest(tmp_path / "early")["counts"]
    assert counts == {"papers": 0, "authors": 0, "venues": 3, "authorships": 0, "citations": 0}
    assert_same(read_snapshot(tmp_path / "early"), GraphSnapshot.from_store(world(), with_text=True).as_of(1990))


def test_a_non_empty_directory_is_refused(tmp_path):
    store = world()
    target = tmp_path / "snap"
    target.mkdir()
    export_parquet(store, target)  # an empty directory is fine
    with pytest.raises(UsageError, match="not empty"):
        export_parquet(store, target)
    manifest = export_parquet(store, target, as_of=2001, overwrite=True)
    assert read_manifest(target) == manifest and manifest["as_of"] == 2001
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="not empty"):
        export_parquet(store, other)
    with pytest.raises(UsageError, match="not a scholargraph snapshot"):
        export_parquet(store, other, overwrite=True)  # overwrite replaces an export, nothing else
    assert (other / "notes.txt").read_text() == "mine"
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        export_parquet(store, tmp_path / "file")


def test_bad_manifests_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="no _manifest.json"):
        read_snapshot(tmp_path)
    export_parquet(world(), tmp_path / "snap")
    path = tmp_path / "snap" / MANIFEST
    good = json.loads(path.read_text())
    path.write_text("{not json")
    with pytest.raises(UsageError, match="not a valid snapshot manifest"):
        read_manifest(tmp_path / "snap")
    path.write_text(json.dumps({**good, "format": "something-else"}))
    with pytest.raises(UsageError, match="format is not"):
        read_manifest(tmp_path / "snap")
    path.write_text(json.dumps({**good, "format_version": 2}))
    with pytest.raises(UsageError, match="format_version 2 is not supported"):
        read_snapshot(tmp_path / "snap")
    path.write_text(json.dumps({**good, "tables": {"papers": []}}))
    with pytest.raises(UsageError, match="parts of every table"):
        read_manifest(tmp_path / "snap")
    path.write_text(json.dumps(good))
    (tmp_path / "snap" / "citations" / "part-00000.parquet").unlink()
    with pytest.raises(UsageError, match="citations/part-00000.parquet listed in the manifest is missing"):
        read_snapshot(tmp_path / "snap")


@pytest.mark.parametrize("failing", ["store/snapshot_citations", "store/snapshot_authorships"])
def test_a_failed_export_leaves_no_directory(tmp_path, monkeypatch, failing):
    store = world()
    pages = store.pages

    def broken(name, /, **kwargs):
        if name == failing:
            yield from pages(name, page_size=2, **kwargs)
            raise RuntimeError("connection lost")
        yield from pages(name, **kwargs)

    monkeypatch.setattr(store, "pages", broken)
    with pytest.raises(RuntimeError, match="connection lost"):
        export_parquet(store, tmp_path / "snap", rows_per_file=2)
    assert list(tmp_path.iterdir()) == []
    # A failed overwrite keeps the earlier export.
    monkeypatch.undo()
    first = export_parquet(store, tmp_path / "snap")
    monkeypatch.setattr(store, "pages", broken)
    with pytest.raises(RuntimeError):
        export_parquet(store, tmp_path / "snap", overwrite=True)
    assert read_manifest(tmp_path / "snap") == first and [p.name for p in tmp_path.iterdir()] == ["snap"]


def test_rows_per_file_must_be_positive(tmp_path):
    with pytest.raises(UsageError, match="at least 1"):
        export_parquet(world(), tmp_path / "snap", rows_per_file=0)


def test_cli_export_parquet(tmp_path, monkeypatch):
    from scholargraph import graph_cli
    from scholargraph.cli import main

    store = world()
    monkeypatch.setattr(graph_cli, "open_store", lambda settings, quiet=False: contextlib.nullcontext(store))
    monkeypatch.setenv("SCHOLARGRAPH_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    out = tmp_path / "snap"
    result = runner.invoke(main, ["-q", "export", "parquet", str(out), "--as-of", "2002", "--rows-per-file", "4",
                                  "--no-text", "--workers", "1"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [line.split()[0] for line in lines[:5]] == list(TABLES)
    assert lines[0].split()[1] == "6" and lines[0].endswith("2 files")
    assert lines[-1] == f"manifest: {out / MANIFEST}"
    manifest = read_manifest(out)
    assert manifest["as_of"] == 2002 and manifest["with_text"] is False
    refused = runner.invoke(main, ["-q", "export", "parquet", str(out)])
    assert refused.exit_code == 2 and "not empty" in refused.output
    # By default the ids are read in EXPORT_WORKERS ranges at once, each range to its own part files.
    assert runner.invoke(main, ["-q", "export", "parquet", str(tmp_path / "ranges")]).exit_code == 0
    assert read_manifest(tmp_path / "ranges")["workers"] == graph_cli.EXPORT_WORKERS
    assert_same(read_snapshot(tmp_path / "ranges"), GraphSnapshot.from_store(store, with_text=True))


@pytest.mark.parametrize("workers", [2, 3, 16])
@pytest.mark.parametrize("year", [None, 2002])
def test_a_parallel_export_is_the_serial_one(tmp_path, workers, year):
    store = world()
    serial = export_parquet(store, tmp_path / "serial", as_of=year)
    parallel = export_parquet(store, tmp_path / "parallel", as_of=year, workers=workers, rows_per_file=2)
    assert_same(read_snapshot(tmp_path / "parallel"), read_snapshot(tmp_path / "serial"))
    assert parallel["counts"] == serial["counts"] and parallel["workers"] == workers
    papers = parallel["tables"]["papers"]
    assert papers == sorted(papers) and all(p.startswith("papers/part-r") for p in papers)


def test_id_ranges_cover_every_id_once():
    store = world()
    ids, _ = store.read_nodes("Paper", [])
    for parts in (1, 2, 3, 4, 100):
        bounds = store.id_boundaries("Paper", parts)
        assert bounds == sorted(set(bounds)) and len(bounds) <= parts - 1
        ranges = list(zip(["", *bounds], [*bounds, None]))
        read = [row[0] for lo, hi in ranges for page in store.pages("store/snapshot_papers", start=lo, until=hi)
                for row in page]
        assert read == sorted(ids)


def test_workers_must_be_positive(tmp_path):
    with pytest.raises(UsageError, match="workers"):
        export_parquet(world(), tmp_path / "snap", workers=0)


@pytest.mark.parametrize("damage", ["truncated", "flipped bytes", "deleted", "fewer rows"])
def test_a_damaged_part_is_named_by_every_reader(tmp_path, damage):
    """verify_snapshot (run before Spark reads a snapshot) and read_snapshot refuse a damaged part alike: one
    UsageError naming it and saying to export again, never a table with rows missing or changed."""
    snap = tmp_path / "snap"
    export_parquet(world(), snap, rows_per_file=4, workers=1)
    assert verify_snapshot(snap) == read_manifest(snap)
    part = snap / "citations" / "part-00001.parquet"
    body = bytearray(part.read_bytes())
    if damage == "truncated":
        part.write_bytes(bytes(body[: len(body) // 2]))
    elif damage == "flipped bytes":
        column = pq.ParquetFile(part).metadata.row_group(0).column(1)
        # The last bytes of the column chunk are its data page's values (a page header carries no checksum).
        end = (column.dictionary_page_offset or column.data_page_offset) + column.total_compressed_size
        body[end - 2] ^= 0xFF
        part.write_bytes(bytes(body))
    elif damage == "deleted":
        part.unlink()
    else:  # a valid part, of another export: the manifest's count tells
        pq.write_table(pq.read_table(part).slice(0, 1), part)
    for reader in (verify_snapshot, read_snapshot):
        with pytest.raises(UsageError) as caught:
            reader(snap)
        message = str(caught.value)
        assert "part-00001.parquet" in message or (damage == "fewer rows" and "citations parts hold" in message)
        assert message.endswith(f"export the snapshot again (`scholargraph export parquet {snap} --overwrite`)")
