"""The GraphStore contract, one test per promise; each store's test module subclasses StoreContract."""

from __future__ import annotations

import time

import numpy as np
import pytest

from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle, Venue
from scholargraph.graph.snapshot import NO_VENUE, NO_YEAR, GraphSnapshot

REL = "SUGGESTED_REVIEWER"


def bundle(pid, source, refs=(), title="A title", doi=None, authors=("a:1", "a:2"), venue=None, year=2001,
           abstract="abc"):
    authors_ = tuple(Author(a, f"Name {a}") for a in authors)
    return PaperBundle(
        paper=Paper(pid, title, abstract=abstract, year=year, doi=doi, sources=(source,),
                    venue_id=venue.id if venue else None),
        authors=authors_, venue=venue,
        authorships=tuple(Authorship(a.id, pid, i + 1) for i, a in enumerate(authors_)),
        citations=tuple(Citation(pid, r) for r in refs))


def small_graph(store):
    venue = Venue("venue:kdd", "KDD")
    store.write_bundles([bundle("p1", "s:1", refs=("p2", "ext"), venue=venue, year=2000),
                         bundle("p2", "s:2", refs=("p3",), authors=("a:2", "a:3"), year=2001),
                         bundle("p3", "s:3", venue=venue, year=2002, title="Third")])


def props(store, label, node_id, *names):
    ids, values = store.read_nodes(label, list(names))
    i = ids.index(node_id)
    return tuple(values[n][i] for n in names)


class StoreContract:
    """Tests every GraphStore must pass; a subclass provides the `store` fixture (an empty store)."""

    def test_writing_a_batch_twice_changes_nothing(self, store):
        venue = Venue("venue:kdd", "KDD")
        batch = [bundle(f"p{i}", f"x:p{i}", refs=(f"p{(i + 1) % 6}", f"ext{i}"), venue=venue) for i in range(6)]
        first = store.write_bundles(batch)
        stats = store.stats()
        second = store.write_bundles(batch)
        assert store.stats() == stats
        assert stats["nodes"]["Paper"] == 12 and stats["stubs"]["Paper"] == 6 and stats["nodes"]["Venue"] == 1
        assert stats["nodes"]["ScoringRun"] == 0 and stats["relationships"]["SUGGESTED_REVIEWER"] == 0
        assert stats["relationships"]["CITES"] == 12 and stats["relationships"]["AUTHORED"] == 12
        assert stats["relationships"]["PUBLISHED_IN"] == 6
        assert (first.papers, first.papers_created, first.stubs_created, first.citations) == (6, 6, 6, 12)
        assert (second.papers_created, second.stubs_created, second.merged) == (0, 0, 0)

    def test_a_stub_is_filled_and_a_doi_merges_sources(self, store):
        store.write_bundles([bundle("p1", "aminer:1", refs=("10.1/x",))])
        assert store.stats()["stubs"]["Paper"] == 1
        counts = store.write_bundles([bundle("10.1/x", "bibtex:k1", doi="10.1/x")])
        assert counts.stubs_filled == 1 and store.stats()["stubs"]["Paper"] == 0
        merged = store.write_bundles([bundle("10.1/x", "openalex:W9", doi="10.1/x", title=None)])
        assert merged.merged == 1
        assert props(store, "Paper", "10.1/x", "sources", "title", "stub") == (
            ["bibtex:k1", "openalex:W9"], "A title", False)

    def test_a_reference_by_source_id_finds_the_doi_node_in_either_order(self, store):
        store.write_bundles([bundle("aminer:1", "aminer:1", refs=("aminer:2",))])
        store.write_bundles([bundle("10.1234/b", "aminer:2", doi="10.1234/b")])
        store.write_bundles([bundle("aminer:3", "aminer:3", refs=("aminer:2",))])
        src, dst, _ = store.read_edges("CITES")
        assert sorted(zip(src, dst)) == [("aminer:1", "10.1234/b"), ("aminer:3", "10.1234/b")]
        assert store.stats()["nodes"]["Paper"] == 3 and store.stats()["stubs"]["Paper"] == 0

    def test_ids_are_looked_up_by_any_form_that_names_a_node(self, store):
        store.write_bundles([bundle("10.1/x", "aminer:7", doi="10.1/x", authors=("a:1",)),
                             bundle("aminer:8", "aminer:8", authors=("a:2",))])
        papers = store.lookup_ids("paper", {"doi": ["10.1/x"], "alias": ["aminer:7"], "own": ["x", "aminer:8"],
                                            "none": ["aminer:9"]})
        assert papers == {"doi": ["10.1/x"], "alias": ["10.1/x"], "own": ["aminer:8"]}
        # An author is found by its own id, else by a source id it was seen under.
        assert store.lookup_ids("author", {"own": ["a:1"], "none": ["a:3"]}) == {"own": ["a:1"]}
        assert store.lookup_ids("author", {}) == {}
        with pytest.raises(ValueError):
            store.lookup_ids("Paper; DROP", {"x": ["y"]})

    def test_the_snapshot_reads_the_whole_graph_page_by_page(self, store):
        small_graph(store)
        snap = GraphSnapshot.from_store(store, with_text=True)
        assert sorted(snap.paper_ids) == ["ext", "p1", "p2", "p3"]
        i = snap.paper_index
        assert snap.paper_stub[i["ext"]] and snap.paper_year[i["ext"]] == NO_YEAR
        assert snap.paper_year[i["p3"]] == 2002 and snap.titles[i["p3"]] == "Third" and snap.abstracts[i["p1"]] == "abc"
        assert snap.venue_ids == ["venue:kdd"] and snap.venue_names == ["KDD"]
        assert snap.paper_venue[i["p2"]] == NO_VENUE and snap.paper_venue[i["p3"]] == 0
        cites = {(snap.paper_ids[a], snap.paper_ids[b]) for a, b in zip(*snap.citations.nonzero())}
        assert cites == {("p1", "p2"), ("p1", "ext"), ("p2", "p3")}
        a = snap.author_index
        assert snap.authorship[a["a:3"], i["p2"]] == 2 and snap.authorship[a["a:1"], i["p1"]] == 1
        assert snap.author_names[a["a:1"]] == "Name a:1"
        pages = list(store.pages("store/snapshot_papers", page_size=3, withText=False))
        assert [len(p) for p in pages] == [3, 1] and [r[0] for p in pages for r in p] == ["ext", "p1", "p2", "p3"]
        assert all(r[4] is None and r[5] is None for p in pages for r in p)
        cited = [r for p in store.pages("store/snapshot_citations", page_size=2) for r in p]
        assert sorted((r[0], sorted(r[1])) for r in cited) == [("p1", ["ext", "p2"]), ("p2", ["p3"])]

    def test_node_properties_are_written_back_and_none_removes_one(self, store):
        small_graph(store)
        ids, _ = store.read_nodes("Paper")
        rank = np.linspace(0.1, 0.4, len(ids))
        vectors = np.arange(len(ids) * 3, dtype=np.float32).reshape(len(ids), 3)
        assert store.write_node_properties("Paper", ids, {"pagerank": rank, "citation_vector": list(vectors)}) == 4
        store.write_node_properties("Paper", ids, {"pagerank": rank})
        ids2, values = store.read_nodes("Paper", ["pagerank", "citation_vector"])
        assert ids2 == ids and np.allclose(values["pagerank"], rank)
        assert np.allclose(np.array(values["citation_vector"]), vectors)
        assert isinstance(values["pagerank"][0], float)
        store.write_node_properties("Paper", ["p1"], {"pagerank": [None]})
        assert props(store, "Paper", "p1", "pagerank") == (None,)
        assert store.write_node_properties("Paper", ["missing"], {"pagerank": [1.0]}) == 1  # skipped, no error
        assert store.stats()["nodes"]["Paper"] == 4
        with pytest.raises(ValueError):
            store.write_node_properties("Paper", ids, {"pagerank": [1.0]})

    def test_expertise_settings_are_read_for_the_authors_that_have_them(self, store):
        small_graph(store)
        store.write_node_properties("Author", ["a:1", "a:2"], {"expertise_excluded": [["p1"], None],
                                                              "expertise_since": [None, 2001],
                                                              "expertise_weights": [None, '{"source:s": 0.5}']})
        store.write_bundles([bundle("p1", "s:1", venue=Venue("venue:kdd", "KDD"), year=2000)])  # a re-ingest
        records = sorted(store.stream("store/expertise_settings"), key=lambda r: r["id"])
        assert [dict(r) for r in records] == [
            {"id": "a:1", "expertiseExcluded": ["p1"], "expertiseSince": None, "expertiseRecentYears": None,
             "expertiseWeights": None},
            {"id": "a:2", "expertiseExcluded": None, "expertiseSince": 2001, "expertiseRecentYears": None,
             "expertiseWeights": '{"source:s": 0.5}'}]

    def test_derived_edges_of_an_older_version_are_dropped(self, store):
        small_graph(store)
        rows = [{"source": "a:1", "target": "a:2", "weight": 2.0}, {"source": "a:2", "target": "a:3", "weight": 1.0}]
        assert store.write_edges("COAUTHOR", iter(rows), "v1") == 2
        store.write_edges("COAUTHOR", rows[:1] + [{"source": "a:1", "target": "nobody", "weight": 1.0}], "v2")
        store.delete_stale_edges("COAUTHOR", "v2")
        src, dst, w = store.read_edges("COAUTHOR")
        assert list(zip(src, dst, w.tolist())) == [("a:1", "a:2", 2.0)]
        store.upsert_topics([{"id": "topic:0", "words": ["x"], "weights": [1.0], "modelVersion": "v2"}])
        store.write_edges("HAS_TOPIC", [{"source": "p1", "target": "topic:0", "weight": 0.5}], "v2")
        assert store.read_edges("HAS_TOPIC")[2].tolist() == [0.5] and store.stats()["nodes"]["Topic"] == 1
        assert store.read_nodes("Topic", ["words", "model_version"])[1] == {"words": [["x"]], "model_version": ["v2"]}

    def test_stored_vectors_and_their_stamps_are_read_back(self, store):
        small_graph(store)
        store.write_node_properties("Paper", ["p1", "p2"], {
            "semantic_vector": [[1.0, 0.0], [0.0, 1.0]], "semantic_encoder": ["enc@1", "enc@1"],
            "semantic_text_hash": ["h1", "h2"], "topic_vector": [[0.5, 0.5], None]})
        stamps = sorted(r for page in store.pages("store/paper_semantic_stamps") for r in page)
        assert [list(r) for r in stamps] == [["p1", "enc@1", "h1"], ["p2", "enc@1", "h2"]]
        snap = GraphSnapshot.from_store(store, with_vectors=True)
        i = snap.paper_index
        assert snap.semantic_encoder == "enc@1" and snap.citation_vectors is None
        assert snap.semantic_vectors[i["p2"]].tolist() == [0.0, 1.0] and not snap.semantic_vectors[i["p3"]].any()
        assert snap.topic_vectors[i["p1"]].tolist() == [0.5, 0.5] and not snap.topic_vectors[i["p2"]].any()

    def test_changed_papers_are_those_written_after_the_watermark(self, store):
        small_graph(store)
        watermark = store.server_time()
        assert store.changed_papers(watermark) == []
        small_graph(store)  # the same records again: nothing changed
        assert store.changed_papers(watermark) == []
        store.write_bundles([bundle("p3", "s:3", year=2002, title="Third, revised"),
                             bundle("p0", "s:0", refs=("ext2",))])
        assert store.changed_papers(watermark) == ["p0", "p3"]  # not the new stub ext2
        assert store.server_time() > watermark

    def test_the_last_change_moves_only_when_a_paper_changes(self, store):
        assert store.last_change() is None
        small_graph(store)
        first = store.last_change()
        assert first is not None and first <= store.server_time()
        small_graph(store)  # the same records again
        assert store.last_change() == first
        store.write_bundles([bundle("p3", "s:3", year=2002, title="Third, revised")])
        assert store.last_change() > first

    def test_a_scoring_run_is_switched_in_at_once_and_a_failed_one_changes_nothing(self, store):
        small_graph(store)
        assert store.current_run("reviewers") is None and store.last_run("reviewers") is None
        store.record_run("r1", {"job": "reviewers", "status": "running", "watermark": 5})
        assert store.write_scores(REL, [{"source": "a:1", "target": "p1", "props": {"score": 0.9, "rank": 1}}],
                                  "r1") == 1
        assert store.current_run("reviewers") is None  # written beside, not visible before the switch
        store.switch_run("r1")
        current = store.current_run("reviewers")
        assert current["id"] == "r1" and current["status"] == "succeeded" and current["watermark"] == 5
        store.delete_old_scores(REL, "r1")
        store.record_run("r2", {"job": "reviewers", "status": "running"})
        store.write_scores(REL, [{"source": "a:2", "target": "p1", "props": {"score": 0.5}}], "r2")
        store.record_run("r2", {"status": "failed", "error": "the model crashed"})
        assert store.current_run("reviewers")["id"] == "r1" and store.last_run("reviewers")["id"] == "r1"
        store.record_run("r3", {"job": "reviewers", "status": "running"})
        store.write_scores(REL, [{"source": "a:3", "target": "p2", "props": {"score": 0.7}}], "r3")
        store.switch_run("r3")
        store.delete_old_scores(REL, "r3")
        assert store.current_run("reviewers")["id"] == "r3" and store.last_run("reviewers")["id"] == "r3"
        assert store.stats()["relationships"][REL] == 1  # older runs' edges are gone
        assert store.current_run("citations") is None  # runs are per job

    def test_an_incremental_run_carries_the_scores_of_papers_it_did_not_rescore(self, store):
        small_graph(store)
        assert store.carry_forward_scores(REL, "r0", []) == (0, 0)  # no current run yet
        store.record_run("r1", {"job": "reviewers", "status": "running"})
        store.write_scores(REL, [{"source": a, "target": p, "props": {"score": 1.0}}
                                 for a, p in (("a:1", "p1"), ("a:2", "p1"), ("a:1", "p2"), ("a:3", "p3"))], "r1")
        store.switch_run("r1")
        store.record_run("r2", {"job": "reviewers", "status": "running"})
        store.write_scores(REL, [{"source": "a:2", "target": "p2", "props": {"score": 0.3}}], "r2")
        assert store.carry_forward_scores(REL, "r2", ["p2"]) == (3, 2)
        store.switch_run("r2")
        store.delete_old_scores(REL, "r2")
        assert store.stats()["relationships"][REL] == 4

    def test_runs_of_a_dead_lock_holder_are_marked_failed(self, store):
        from datetime import UTC, datetime

        now = datetime.now(UTC)
        store.record_run("old", {"job": "reviewers", "status": "running", "lock_owner": "dead", "heartbeat_at": now})
        store.record_run("mine", {"job": "citations", "status": "running", "lock_owner": "me", "heartbeat_at": now})
        store.record_run("silent", {"job": "features", "status": "running"})
        assert store.fail_stale_runs(600, "me") == 2
        assert store.fail_stale_runs(600, "me") == 0
        store.record_run("x", {"job": "reviewers", "status": "succeeded", "finished_at": now})
        assert store.last_run("reviewers")["id"] == "x" and store.last_run("features") is None

    def test_the_lock_is_held_by_one_owner_until_released_or_expired(self, store):
        acquired, owner, expires = store.acquire_lock("jobs", "one", 60)
        assert acquired and owner == "one" and expires
        acquired, owner, _ = store.acquire_lock("jobs", "two", 60)
        assert not acquired and owner == "one"
        assert store.renew_lock("jobs", "one", 60) and not store.renew_lock("jobs", "two", 60)
        store.release_lock("jobs", "two")  # not the holder: nothing happens
        assert not store.acquire_lock("jobs", "two", 60)[0]
        store.release_lock("jobs", "one")
        assert store.acquire_lock("jobs", "two", 1)[0]
        time.sleep(1.2)
        assert store.acquire_lock("jobs", "three", 60)[0]  # the lease ran out
        assert not store.renew_lock("jobs", "two", 60)
