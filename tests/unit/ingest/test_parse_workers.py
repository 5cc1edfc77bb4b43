"""Normalising in worker processes (`ingest(..., parse_workers=N)`) changes nothing but the speed: the same
graph, summary, quarantine lines and checkpoints as on the main thread, for every format, with bad records
and batches smaller than the input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.store import NODE_LABELS
from scholargraph.ingest.bulk import BulkStaging
from scholargraph.ingest.loader import ingest

from .conftest import FIXTURES

PAPER_PROPS = ("title", "abstract", "year", "doi", "venue_id", "sources", "stub")


def mixed_aminer(path, n: int = 60):
    """Good records, a malformed line, records without title, DOI duplicates (merged) and stubs."""
    with open(path, "w") as fh:
        for i in range(n):
            if i % 17 == 5:
                fh.write('{"id": "broken", "title": \n')
                continue
            rec = {"id": f"t{i}", "title": None if i % 13 == 4 else f"Paper {i}", "year": 1990 + i % 20,
                   "authors": [{"name": f"Author {i % 7}", "id": f"a{i % 7}"}], "venue": {"raw": f"V{i % 3}"},
                   "references": [f"t{(i * 5) % n}", f"outside{i % 4}"]}
            if i % 11 == 3:
                rec["doi"] = f"10.1234/dup{i % 2}"  # two DOIs shared by several records: merged across ids
            fh.write(json.dumps(rec) + "\n")
        fh.write("\n")  # a blank line is no record
    return path


def graph(store: InMemoryStore) -> dict:
    ids, values = store.read_nodes("Paper", PAPER_PROPS)
    papers = sorted(zip(ids, *(map(repr, values[p]) for p in PAPER_PROPS)))
    nodes = {label: sorted(store.read_nodes(label)[0]) for label in NODE_LABELS}
    edges = {t: sorted(zip(*store.read_edges(t)[:2])) for t in ("CITES", "AUTHORED", "PUBLISHED_IN")}
    return {"stats": store.stats(), "papers": papers, "nodes": nodes, "edges": edges}


def load(tmp_path, name, fmt, paths, workers, batch_size=4):
    store = InMemoryStore()
    summary = ingest(store, fmt, [str(p) for p in paths], quarantine_path=tmp_path / f"{name}.q.jsonl",
                     checkpoint_dir=tmp_path / f"{name}-ck", batch_size=batch_size, quiet=True,
                     parse_workers=workers)
    quarantine = (tmp_path / f"{name}.q.jsonl").read_text() if (tmp_path / f"{name}.q.jsonl").exists() else ""
    return store, summary, quarantine


def same_summary(a, b) -> bool:
    keep = ("files", "read", "written", "created", "merged", "stubs_created", "stubs_filled", "authorships",
            "citations", "quarantined", "dropped", "quarantine_reasons", "drop_reasons")
    return all(getattr(a, k) == getattr(b, k) for k in keep)


@pytest.mark.parametrize("fmt,files", [
    ("aminer", ["aminer_v10.jsonl", "aminer_v12.json"]),
    ("openalex", ["openalex_works.jsonl"]),
    ("s2", ["s2_papers.jsonl", "s2_abstracts.jsonl", "s2_citations.jsonl"]),
    ("bibtex", ["sample.bib"]),
])
def test_workers_give_the_same_graph_summary_and_quarantine(tmp_path, fmt, files):
    paths = [FIXTURES / f for f in files]
    store0, summary0, quarantine0 = load(tmp_path, "serial", fmt, paths, 0)
    store2, summary2, quarantine2 = load(tmp_path, "workers", fmt, paths, 2)
    assert graph(store2) == graph(store0) and summary0.read > 0
    assert same_summary(summary2, summary0)
    assert quarantine2 == quarantine0


def test_bad_records_duplicates_and_stubs_come_out_the_same(tmp_path):
    data = mixed_aminer(tmp_path / "mixed.jsonl")
    store0, summary0, quarantine0 = load(tmp_path, "serial", "aminer", [data], 0)
    store1, summary1, quarantine1 = load(tmp_path, "workers", "aminer", [data], 1, batch_size=3)
    assert summary0.quarantined == 4 + 4 and summary0.merged > 0 and summary0.stubs_created > 0
    assert graph(store1) == graph(store0) and same_summary(summary1, summary0)
    lines = [json.loads(line) for line in quarantine1.splitlines()]
    assert [q["line"] for q in lines] == sorted(q["line"] for q in lines)  # batches kept their order
    assert quarantine1 == quarantine0


def test_the_checkpoint_covers_the_whole_file_and_a_rerun_resumes_past_it(tmp_path):
    data = mixed_aminer(tmp_path / "mixed.jsonl")
    store, summary, _ = load(tmp_path, "workers", "aminer", [data], 1)
    state = json.loads(next((tmp_path / "workers-ck").glob("*.json")).read_text())
    [entry] = state["files"].values()
    assert entry == {**entry, "done": summary.read, "finished": True}
    again = ingest(store, "aminer", [str(data)], quarantine_path=tmp_path / "workers.q.jsonl",
                   checkpoint_dir=tmp_path / "workers-ck", batch_size=4, quiet=True, parse_workers=1)
    assert again.files_skipped == 1 and again.read == 0


def test_bulk_staging_from_workers_writes_the_same_import_files(tmp_path):
    data = mixed_aminer(tmp_path / "mixed.jsonl", n=200)
    tables = []
    for workers in (0, 2):
        staging = BulkStaging(tmp_path / f"stage{workers}", ingested_at=7)
        ingest(staging, "aminer", [str(data)], quarantine_path=tmp_path / f"q{workers}.jsonl",
               checkpoint_dir=tmp_path / f"ck{workers}", batch_size=16, quiet=True, parse_workers=workers)
        files, _ = staging.write_import_files(tmp_path / f"csv{workers}", quiet=True)
        tables.append({spec.split("=", 1)[0]: Path(spec.split("=", 1)[1]).read_text()
                       for kind in files.values() for spec in kind})
        staging.close()
    assert tables[0] == tables[1] and tables[0]["CITES"].count("\n") > 100

