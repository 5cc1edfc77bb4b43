"""The whitespace-free id migration against the real Neo4j: old ids renamed, old forms still resolve, a
second run changes nothing; and the store-side id lookup behind `query -p` and the resolver."""

from __future__ import annotations

import neo4j
import pytest

from scholargraph.graph.ids import IdResolver
from scholargraph.graph.records import Author, Authorship, Paper, PaperBundle, Venue


def bundle(pid, sources, authors, venue=None, doi=None, year=2001):
    authors_ = tuple(Author(a, name, sources=(a,)) for a, name in authors)
    return PaperBundle(
        paper=Paper(pid, f"Title of {pid}", abstract="abc", year=year, doi=doi, sources=tuple(sources),
                    venue_id=venue.id if venue else None),
        authors=authors_, venue=venue,
        authorships=tuple(Authorship(a.id, pid, i + 1) for i, a in enumerate(authors_)))


def dump(settings) -> tuple[list, list]:
    """Every node (labels, properties) and relationship (type, end ids, properties), sorted: the whole graph."""
    auth = (settings.neo4j_user, settings.password) if settings.password else None
    with neo4j.GraphDatabase.driver(settings.uri, auth=auth) as driver:
        nodes, _, _ = driver.execute_query(
            "MATCH (n) WHERE NOT n:Migration RETURN labels(n) AS labels, properties(n) AS props",
            database_=settings.neo4j_database)
        rels, _, _ = driver.execute_query(
            "MATCH (a)-[r]->(b) RETURN type(r) AS type, a.id AS a, b.id AS b, properties(r) AS props",
            database_=settings.neo4j_database)
    norm = lambda rows: sorted(repr(sorted(r.data().items())) for r in rows)  # noqa: E731
    return norm(nodes), norm(rels)


@pytest.fixture
def old_graph(store):
    """A graph as ingestion wrote it before ids were whitespace-free."""
    sigir = Venue("venue:acm sigir", "ACM SIGIR")
    store.write_bundles([
        bundle("bibtex:my key", ["bibtex:my key"], [("name:ann lee", "Ann Lee"), ("name:carl c", "Carl C")],
               venue=sigir),
        bundle("10.1/x", ["bibtex:other key"], [("name:ann lee", "Ann Lee"), ("s2author:42", "Dana D")],
               doi="10.1/x"),
        # Ingested after the upgrade but before the migration: 'name:carl_c' exists beside 'name:carl c'.
        bundle("aminer:7", ["aminer:7"], [("name:carl_c", "Carl C")]),
    ])
    return store


def test_migration_renames_old_ids_and_keeps_them_resolvable(old_graph, neo4j_settings):
    store = old_graph
    assert not store.ids_migrated()
    counts = store.migrate_ids(batch_size=1)  # one row per batch: paging and folding across batches
    assert counts["Author"] == 2 and counts["Venue"] == 1 and counts["Paper"] == 2
    assert counts["PaperAlias"] == 1 and counts["folded"] == 1
    assert store.ids_migrated()

    author_ids, values = store.read_nodes("Author", ["sources"])
    authors = dict(zip(author_ids, values["sources"]))
    assert set(authors) == {"name:ann_lee", "name:carl_c", "s2author:42"}
    assert "name:ann lee" in authors["name:ann_lee"] and "name:carl c" in authors["name:carl_c"]
    paper_ids, pv = store.read_nodes("Paper", ["venue_id", "sources"])
    papers = dict(zip(paper_ids, zip(pv["venue_id"], pv["sources"])))
    assert set(papers) == {"bibtex:my_key", "10.1/x", "aminer:7"}
    assert papers["bibtex:my_key"] == ("venue:acm_sigir", ["bibtex:my_key"])
    assert papers["10.1/x"][1] == ["bibtex:other_key"]
    venue_ids, _ = store.read_nodes("Venue")
    assert venue_ids == ["venue:acm_sigir"]
    # The folded author kept both authorships; nothing points at a node that is gone.
    src, dst, _ = store.read_edges("AUTHORED")
    assert sorted(p for a, p in zip(src, dst) if a == "name:carl_c") == ["aminer:7", "bibtex:my_key"]
    assert store.read_edges("PUBLISHED_IN")[:2] == (["bibtex:my_key"], ["venue:acm_sigir"])

    # Old forms, new forms and bare ids resolve through the store.
    resolver = IdResolver(lookup=store.lookup_ids)
    papers_res = resolver.resolve("paper", ["bibtex:my key", "bibtex:other key", "bibtex:other_key", "7", "nope"])
    assert papers_res.ids == {"bibtex:my key": "bibtex:my_key", "bibtex:other key": "10.1/x",
                              "bibtex:other_key": "10.1/x", "7": "aminer:7"}
    assert papers_res.unknown == ["nope"]
    authors_res = resolver.resolve("author", ["name:ann lee", "Name:Ann Lee", "42", "s2author:42"])
    assert authors_res.ids == {"name:ann lee": "name:ann_lee", "Name:Ann Lee": "name:ann_lee",
                               "42": "s2author:42", "s2author:42": "s2author:42"}
    assert resolver.resolve("venue", ["venue:acm sigir"]).ids == {"venue:acm sigir": "venue:acm_sigir"}

    # A second run finds nothing and changes nothing.
    before = dump(neo4j_settings)
    again = store.migrate_ids(batch_size=1)
    assert not any(again.values())
    assert dump(neo4j_settings) == before


def test_ingest_after_migration_lands_on_the_migrated_nodes(old_graph, tmp_path, neo4j_settings):
    from scholargraph.ingest.loader import ingest

    old_graph.migrate_ids()
    bib = tmp_path / "more.bib"
    bib.write_text("@inproceedings{mykey2,\n title={Another paper},\n author={Lee, Ann},\n year={2003},\n"
                   " booktitle={ACM SIGIR}\n}\n", encoding="utf-8")
    ingest(old_graph, "bibtex", [str(bib)], quarantine_path=tmp_path / "q.jsonl",
           checkpoint_dir=tmp_path / "ck", quiet=True)
    author_ids, _ = old_graph.read_nodes("Author")
    assert "name:ann_lee" in author_ids and not [a for a in author_ids if " " in a]
    venue_ids, _ = old_graph.read_nodes("Venue")
    assert venue_ids == ["venue:acm_sigir"]


def test_reviewers_expertise_settings_follow_the_migration(old_graph):
    """Settings stored under old ids (an author renamed, an author folded into its new id, an excluded paper
    and a venue weight with whitespace) name the same nodes after the migration."""
    from scholargraph.conference import profiles
    from scholargraph.conference.profiles import ExpertiseSettings
    from scholargraph.graph.snapshot import GraphSnapshot

    profiles.write_settings(old_graph, {
        "name:ann lee": ExpertiseSettings(excluded=("bibtex:other key",), weights=(("venue:venue:acm sigir", 2.0),)),
        "name:carl c": ExpertiseSettings(since=2002)})
    old_graph.migrate_ids()
    settings = profiles.read_settings(old_graph)
    assert set(settings) == {"name:ann_lee", "name:carl_c"}  # renamed in place, and folded into the new id
    assert settings["name:carl_c"].since == 2002
    snapshot = GraphSnapshot.from_store(old_graph)
    book = profiles.load_book(old_graph, snapshot)
    assert book is not None
    papers = [snapshot.paper_index["bibtex:my_key"], snapshot.paper_index["10.1/x"]]
    weights, why = book.paper_weights("name:ann_lee", papers)
    assert weights.tolist() == [2.0, 0.0] and why == ["", "excluded"]  # the SIGIR paper; 10.1/x by its old alias
    weights, _ = book.paper_weights("name:carl_c", [snapshot.paper_index["bibtex:my_key"]])
    assert weights.tolist() == [0.0]  # 2001, before the folded author's `since`
