"""The store against the real Neo4j: schema, idempotent upserts, merges, stubs, reads, write-back."""

from __future__ import annotations

import numpy as np

from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle, Venue


def bundle(pid, source, refs=(), title="A title", doi=None, authors=("a:1", "a:2", "a:3"), venue=None):
    authors_ = tuple(Author(a, f"Name {a}") for a in authors)
    return PaperBundle(
        paper=Paper(pid, title, abstract="abc", year=2001, doi=doi, sources=(source,),
                    venue_id=venue.id if venue else None),
        authors=authors_, venue=venue,
        authorships=tuple(Authorship(a.id, pid, i + 1) for i, a in enumerate(authors_)),
        citations=tuple(Citation(pid, r) for r in refs))


def test_schema_is_idempotent(store):
    first = store.schema_names()
    store.apply_schema()
    store.apply_schema()
    assert store.schema_names() == first
    for name in ("paper_id", "author_id", "venue_id", "topic_id", "scoring_run_id"):
        assert name in first["constraints"]
    for name in ("paper_year", "paper_doi", "author_name"):
        assert name in first["indexes"]


def test_upsert_twice_changes_no_count(store):
    venue = Venue("venue:kdd", "KDD")
    batch = [bundle(f"p{i}", f"x:p{i}", refs=(f"p{(i + 1) % 20}", f"ext{i}"), venue=venue) for i in range(20)]
    first = store.write_bundles(batch)
    stats1 = store.stats()
    second = store.write_bundles(batch)
    assert store.stats() == stats1
    assert stats1["nodes"]["Paper"] == 40 and stats1["stubs"]["Paper"] == 20
    assert stats1["relationships"]["CITES"] == 40 and stats1["relationships"]["AUTHORED"] == 60
    assert stats1["relationships"]["PUBLISHED_IN"] == 20 and stats1["nodes"]["Venue"] == 1
    assert first.papers_created == 20 and first.stubs_created == 20
    assert second.papers_created == 0 and second.stubs_created == 0 and second.merged == 0


def test_stub_is_filled_and_doi_merges_sources(store):
    store.write_bundles([bundle("p1", "aminer:1", refs=("10.1/x",))])
    assert store.stats()["stubs"]["Paper"] == 1
    counts = store.write_bundles([bundle("10.1/x", "bibtex:k1", doi="10.1/x")])
    assert counts.stubs_filled == 1 and store.stats()["stubs"]["Paper"] == 0
    merged = store.write_bundles([bundle("10.1/x", "openalex:W9", doi="10.1/x", title=None)])
    assert merged.merged == 1
    ids, values = store.read_nodes("Paper", ["sources", "title", "stub"])
    row = dict(zip(ids, zip(*values.values())))["10.1/x"]
    assert row == (["bibtex:k1", "openalex:W9"], "A title", False)


def test_reads_and_write_back_round_trip(store):
    store.write_bundles([bundle("p1", "s:1", refs=("p2",)), bundle("p2", "s:2", refs=("p3",)),
                         bundle("p3", "s:3")])
    src, dst, w = store.read_edges("CITES")
    assert sorted(zip(src, dst)) == [("p1", "p2"), ("p2", "p3")] and np.all(w == 1.0)
    ids, _ = store.read_nodes("Paper")
    vec = np.arange(len(ids) * 3, dtype=np.float32).reshape(len(ids), 3)
    store.write_node_properties("Paper", ids, {"pagerank": np.linspace(0.1, 0.3, len(ids)),
                                               "semantic_vector": list(vec)})
    store.write_node_properties("Paper", ids, {"pagerank": np.linspace(0.1, 0.3, len(ids))})
    ids2, values = store.read_nodes("Paper", ["pagerank", "semantic_vector"])
    assert ids2 == ids
    assert np.allclose(values["pagerank"], np.linspace(0.1, 0.3, len(ids)))
    assert np.allclose(np.array(values["semantic_vector"]), vec)
    assert store.write_node_properties("Paper", ["missing"], {"pagerank": [1.0]}) == 1  # ignored, no error


def test_reference_by_source_id_finds_the_doi_node_in_either_order(store):
    # The cited paper arrives after the citation: its stub (under the source id) folds into the DOI node.
    store.write_bundles([bundle("aminer:1", "aminer:1", refs=("aminer:2",))])
    assert store.stats()["stubs"]["Paper"] == 1
    store.write_bundles([bundle("10.1234/b", "aminer:2", doi="10.1234/b")])
    src, dst, _ = store.read_edges("CITES")
    assert list(zip(src, dst)) == [("aminer:1", "10.1234/b")]
    assert store.stats()["nodes"]["Paper"] == 2 and store.stats()["stubs"]["Paper"] == 0
    # The cited paper is already there: a new reference by source id resolves through the alias.
    store.write_bundles([bundle("aminer:3", "aminer:3", refs=("aminer:2", "aminer:3"))])
    src, dst, _ = store.read_edges("CITES")
    assert sorted(zip(src, dst)) == [("aminer:1", "10.1234/b"), ("aminer:3", "10.1234/b")]
    assert store.stats()["nodes"]["Paper"] == 3


def test_snapshot_from_store_matches_the_offline_build(store, tmp_path):
    from scholargraph.graph.snapshot import GraphSnapshot
    from scholargraph.ingest.loader import ingest
    from scholargraph.ingest.offline import snapshot_from_files
    from tests.conftest import require_shared_data

    nips = str(require_shared_data("nips", "nips-1987-1993.aminer.jsonl"))
    ingest(store, "aminer", [nips], quarantine_path=tmp_path / "q", checkpoint_dir=tmp_path / "c", quiet=True)
    live = GraphSnapshot.from_store(store, with_text=True)
    offline = snapshot_from_files("aminer", [nips])
    assert sorted(live.paper_ids) == sorted(offline.paper_ids)
    assert live.citations.nnz == offline.citations.nnz == 493
    assert live.authorship.nnz == offline.authorship.nnz
    i, j = live.paper_index["aminer:nips-0001"], offline.paper_index["aminer:nips-0001"]
    assert live.titles[i] == offline.titles[j] and live.paper_year[i] == offline.paper_year[j]
    assert live.venue_ids == ["venue:nips"]
