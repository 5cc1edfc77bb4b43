"""Parquet snapshots from the real Neo4j: the export read back equals from_store; the CLI writes and refuses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from scholargraph.graph.parquet import MANIFEST, TABLES, export_parquet, read_manifest, read_snapshot
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.ingest.loader import ingest
from scholargraph.synth import SynthParams, generate
from scholargraph.synth.params import CORPUS_FILES
from tests.cli import run
from tests.conftest import cli_env

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "ingest"


def load_world(store, tmp_path) -> None:
    """A small synthetic world (stubs, venues, authors over 1990-2023) plus the AMiner fixture."""
    out = tmp_path / "world"
    generate(SynthParams(papers=400, seed=5, reviewer_queries=2, citation_queries=2), out)
    for name, path in (("synth", out / CORPUS_FILES["aminer"]), ("fixture", FIXTURES / "aminer_v10.jsonl")):
        ingest(store, "aminer", [str(path)], quarantine_path=tmp_path / f"{name}.q.jsonl",
               checkpoint_dir=tmp_path / f"{name}.ckpt", quiet=True)


def assert_same(a: GraphSnapshot, b: GraphSnapshot) -> None:
    assert (a.paper_ids, a.author_ids, a.venue_ids) == (b.paper_ids, b.author_ids, b.venue_ids)
    for name in ("paper_year", "paper_stub", "paper_venue"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    for name in ("citations", "authorship"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and (x != y).nnz == 0, name
    assert (a.titles, a.abstracts, a.author_names, a.venue_names) == (
        b.titles, b.abstracts, b.author_names, b.venue_names)
    assert a.extra == b.extra


def test_export_reads_back_as_from_store(store, tmp_path):
    load_world(store, tmp_path)
    want = GraphSnapshot.from_store(store, with_text=True)
    manifest = export_parquet(store, tmp_path / "snap", rows_per_file=500)
    assert_same(read_snapshot(tmp_path / "snap"), want)
    stats = store.stats()
    assert manifest["counts"] == {
        "papers": stats["nodes"]["Paper"], "authors": stats["nodes"]["Author"], "venues": want.n_venues,
        "authorships": stats["relationships"]["AUTHORED"], "citations": stats["relationships"]["CITES"]}
    assert len(manifest["tables"]["papers"]) > 1 and want.paper_stub.any() and want.n_venues > 0
    # As of a year inside the world: the cut of the pulled snapshot, papers aligned by id.
    year = int(np.median(want.paper_year[want.paper_year > 0]))
    export_parquet(store, tmp_path / "asof", as_of=year)
    assert_same(read_snapshot(tmp_path / "asof"), want.as_of(year))
    # In parallel id ranges (several Bolt sessions at once): the same tables.
    parallel = export_parquet(store, tmp_path / "parallel", workers=3)
    assert_same(read_snapshot(tmp_path / "parallel"), want)
    assert parallel["counts"] == manifest["counts"]
    assert len({p.split("-")[1] for p in parallel["tables"]["papers"]}) == 3
    export_parquet(store, tmp_path / "parallel-asof", as_of=year, workers=3)
    assert_same(read_snapshot(tmp_path / "parallel-asof"), want.as_of(year))


def run_cli(*args, env):
    return run(env, *args, check=False, quiet=False)


def test_cli_export_parquet(store, neo4j_settings, tmp_path):
    load_world(store, tmp_path)
    env = cli_env(neo4j_settings, tmp_path / "home")
    out = tmp_path / "export"
    done = run_cli("-q", "export", "parquet", str(out), "--as-of", "2010", "--no-text", env=env)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest == read_manifest(out) and manifest["as_of"] == 2010 and manifest["with_text"] is False
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == list(TABLES) and lines[-1] == f"manifest: {out / MANIFEST}"
    papers = pq.read_table(out / "papers")
    assert papers.num_rows == manifest["counts"]["papers"] > 0 and papers.column("title").null_count == papers.num_rows
    refused = run_cli("-q", "export", "parquet", str(out), env=env)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "not empty" in refused.stderr
    again = run_cli("-q", "export", "parquet", str(out), "--overwrite", env=env)
    assert again.returncode == 0, again.stderr
    assert read_manifest(out)["as_of"] is None


def test_spark_reads_the_tables(store, tmp_path, spark):
    """The other reader of the contract: every table, even an empty one, has the documented schema."""
    load_world(store, tmp_path)
    manifest = export_parquet(store, tmp_path / "snap", rows_per_file=1000)
    empty = tmp_path / "early"
    export_parquet(store, empty, as_of=1000)  # before every paper: empty tables but venues
    for table in TABLES:
        frame = spark.read.parquet(str(tmp_path / "snap" / table))
        assert frame.count() == manifest["counts"][table]
        wanted = [(f.name, str(f.type)) for f in pq.read_schema(tmp_path / "snap" / manifest["tables"][table][0])]
        assert [f.name for f in frame.schema.fields] == [name for name, _ in wanted]
        assert spark.read.parquet(str(empty / table)).columns == frame.columns
    assert spark.read.parquet(str(empty / "citations")).count() == 0
    years = dict(spark.read.parquet(str(tmp_path / "snap" / "papers")).dtypes)
    assert years == {"id": "string", "year": "int", "stub": "boolean", "venue_id": "string", "title": "string",
                     "abstract": "string"}
