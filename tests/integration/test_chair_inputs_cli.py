"""A chair's inputs through the real CLI and Neo4j: the gold-standard dev reviewers exported in OpenReview's
expertise layout and ingested back into an empty graph give the same graph; a HotCRP PC list is matched to
the graph's authors (emails stored, a pool written); `reviewers conflicts` names each conflict's reason."""

from __future__ import annotations

import csv
import io
import json

from scholargraph.ingest.loader import ingest
from tests.cli import run as cli
from tests.conftest import cli_env, open_test_store, require_shared_data


def graph_of(store) -> dict:
    ids, props = store.read_nodes("Paper", ["title", "abstract", "year", "stub"])
    papers = {p: (t, a, y) for p, t, a, y, stub in zip(ids, props["title"], props["abstract"], props["year"],
                                                        props["stub"]) if not stub}
    sources, targets, positions = store.read_edges("AUTHORED", weight="position")
    return {"papers": papers, "authored": sorted(zip(sources, targets, positions.tolist()))}


def test_openreview_round_trip_hotcrp_pc_and_conflicts(neo4j_settings, tmp_path):
    gold = require_shared_data("goldstandard-dev")
    env = cli_env(neo4j_settings, tmp_path / "home")
    reviewers = sorted({line.split()[2] for line in (gold / "qrels.txt").read_text().splitlines()})
    (tmp_path / "pool.txt").write_text("\n".join(reviewers) + "\n")  # bare S2 ids, as the qrels give them
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(line + "\n" for line in (gold / "queries.jsonl").read_text().splitlines()[:5]))
    with open_test_store(neo4j_settings) as store:
        store.apply_schema()
        store.reset()
        try:
            ingest(store, "s2", [str(gold / "corpus.s2.jsonl")], quarantine_path=tmp_path / "q.jsonl",
                   checkpoint_dir=tmp_path / "ck", quiet=True)
            before = graph_of(store)
            out = tmp_path / "or"
            cli(env, "export", "openreview", str(out), "--pool", str(tmp_path / "pool.txt"), "--queries", str(queries))
            assert len(list((out / "archives").iterdir())) == len(reviewers)
            store.reset()
            done = cli(env, "ingest", "openreview", str(out), "--submissions-out", str(tmp_path / "subs.jsonl"))
            assert "submissions: 5 written" in done.stdout
            ids = {f"s2author:{r}" for r in reviewers}
            papers = {p for a, p, _ in before["authored"] if a in ids}
            assert graph_of(store) == {"papers": {p: v for p, v in before["papers"].items() if p in papers},
                                       "authored": [e for e in before["authored"] if e[1] in papers]}

            # Two PC members: one matched by name (their email is stored), one unknown to the graph.
            author_ids, author_props = store.read_nodes("Author", ["name"])
            first = f"s2author:{reviewers[0]}"
            full = author_props["name"][author_ids.index(first)]
            pc = tmp_path / "pc.csv"
            pc.write_text("first,last,email,roles,affiliation,collaborators,follow\n"
                          f"{full.rsplit(' ', 1)[0]},{full.rsplit(' ', 1)[-1]},{first[9:]}@cs.cmu.edu,pc,CMU,,\n"
                          "Nobody,Known,nobody@example.org,pc,Nowhere,,\n")
            done = cli(env, "ingest", "hotcrp-pc", str(pc), "--pool-out", str(tmp_path / "pc-pool.txt"))
            assert "1 matched no author" in done.stdout and "@" not in done.stdout  # emails are never printed
            assert (tmp_path / "pc-pool.txt").read_text().split() == [first]
            ids, props = store.read_nodes("Author", ["emails", "affiliations"])
            assert props["emails"][ids.index(first)] == [f"{first[9:]}@cs.cmu.edu"]

            # A submission by that reviewer: the reviewer is in conflict as its author, with the reason.
            sub = tmp_path / "sub.jsonl"
            sub.write_text(json.dumps({"id": "S1", "title": "t", "author_ids": [first]}) + "\n")
            done = cli(env, "reviewers", "conflicts", "--queries", str(sub), "--pool", str(tmp_path / "pc-pool.txt"),
                       "--format", "csv")
            rows = list(csv.DictReader(io.StringIO(done.stdout)))
            assert [(r["paper"], r["reviewer"], r["reason"]) for r in rows] == [("S1", first, "author")]
        finally:
            store.reset()
