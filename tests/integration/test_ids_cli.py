"""Ids through the CLI on a tiny graph with name-keyed authors (one still in its old whitespace form): every
output format of `reviewers recommend` prints whitespace-free ids, bare ids resolve, unknown ones warn, and
none known exits 2 with the expected form."""

from __future__ import annotations

import csv
import io
import json

import pytest

from scholargraph.graph.records import Author, Authorship, Paper, PaperBundle
from tests.cli import run as cli
from tests.conftest import cli_env, open_test_store

QUERY = "synth-p0000300"  # the bare id of aminer:synth-p0000300


def old_form_bundles(n: int = 4) -> list[PaperBundle]:
    """Papers by an author whose id is in the old whitespace form (a graph not migrated yet)."""
    out = []
    for i in range(n):
        pid = f"legacy:p{i}"
        author = Author("name:ann lee", "Ann Lee", sources=("name:ann lee",))
        out.append(PaperBundle(paper=Paper(pid, f"Graph ranking of reviewers {i}", abstract="ranking citation graph "
                                           "reviewer expertise topic model", year=2015 + i, sources=(pid,)),
                               authors=(author,), authorships=(Authorship(author.id, pid, 1),)))
    return out


@pytest.fixture(scope="module")
def graph(neo4j_settings, tmp_path_factory):
    work = tmp_path_factory.mktemp("ids")
    env = cli_env(neo4j_settings, work / "home")
    with open_test_store(neo4j_settings) as store:
        store.apply_schema()
        store.reset()
        cli(env, "synth", "--papers", "300", "--seed", "3", "--out", str(work / "synth"))
        cli(env, "ingest", "aminer", str(work / "synth" / "corpus.aminer.jsonl"))
        bib = work / "names.bib"
        bib.write_text("".join(
            f"@inproceedings{{elt{i},\n title={{Quantized networks {i}}},\n author={{Elthakeb, Ahmed T.}},\n"
            f" abstract={{ranking citation graph reviewer expertise}},\n year={{201{i}}},\n"
            f" booktitle={{ACM SIGIR}}\n}}\n"
            for i in range(3)), encoding="utf-8")
        cli(env, "ingest", "bibtex", str(bib))
        store.write_bundles(old_form_bundles())
        cli(env, "features", "--topics", "4")
        cli(env, "reviewers", "train", "--training-queries", "10", "--steps", "10")
        yield env, work
        store.reset()


def recommend(env, *args, check=True):
    return cli(env, "reviewers", "recommend", "--paper", QUERY, "--no-coi", "--k", "1000", *args, check=check)


@pytest.mark.long(reason="the module's graph: ingest, features and a reviewer model through the CLI")
def test_every_output_format_prints_whitespace_free_ids(graph):
    env, _ = graph
    trec = recommend(env, "--format", "trec").stdout.splitlines()
    assert trec and all(len(line.split()) == 6 for line in trec)
    reviewers = [line.split()[2] for line in trec]
    assert {"name:ann_lee", "name:ahmed_t_elthakeb"} <= set(reviewers)  # the old form printed as the new
    assert {line.split()[0] for line in trec} == {QUERY}  # the query id as it was given

    tsv = recommend(env, "--format", "tsv").stdout.splitlines()
    header, rows = tsv[0].split("\t"), [line.split("\t") for line in tsv[1:]]
    assert header[:3] == ["query", "rank", "reviewer_id"] and all(len(r) == len(header) for r in rows)
    assert all(not any(c.isspace() for c in r[0] + r[2]) for r in rows)
    assert "Ann Lee" in {r[3] for r in rows}

    table = list(csv.reader(io.StringIO(recommend(env, "--format", "csv").stdout)))
    assert table[0][2] == "reviewer_id" and {"name:ann_lee"} <= {r[2] for r in table[1:]}
    assert all(not any(c.isspace() for c in r[0] + r[2]) for r in table[1:])

    lines = [json.loads(line) for line in recommend(env, "--format", "jsonl").stdout.splitlines()]
    assert all(" " not in row["reviewer_id"] and " " not in row["query"] for row in lines)
    assert lines[0]["query"] == f"aminer:{QUERY}" and lines[0]["given_query"] == QUERY


def test_bare_and_qualified_candidates_resolve_and_unknown_ones_warn(graph):
    env, work = graph
    cands = work / "candidates.txt"
    cands.write_text(f"{QUERY} 0 synth-a000001 1\n{QUERY} 0 aminer:synth-a000002 1\n"
                     f"{QUERY} 0 name:ahmed_t_elthakeb 1\n{QUERY} 0 1737249 1\n", encoding="utf-8")
    proc = recommend(env, "--candidates", str(cands), "--format", "trec")
    ranked = {line.split()[2]: float(line.split()[4]) for line in proc.stdout.splitlines()}
    # Each as given (a bare id stays bare, so that the run matches the caller's qrels), and scored.
    assert set(ranked) == {"synth-a000001", "aminer:synth-a000002", "name:ahmed_t_elthakeb"}
    assert all(score > -1.0 for score in ranked.values())
    assert "1 of 4 author ids is not in the graph and left out: 1737249" in proc.stderr


def test_none_known_exits_2_with_the_expected_form(graph):
    env, work = graph
    cands = work / "unknown.txt"
    cands.write_text(f"{QUERY} 1737249\n{QUERY} 42\n", encoding="utf-8")
    proc = recommend(env, "--candidates", str(cands), "--format", "trec", check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "none of the 2 author ids given is in the graph" in proc.stderr
    assert "s2author:1737249" in proc.stderr and "Traceback" not in proc.stderr
    missing = cli(env, "reviewers", "recommend", "--paper", "no-such-paper", check=False)
    assert missing.returncode == 2 and "no paper in the graph has the id no-such-paper" in missing.stderr


def test_query_parameters_take_bare_ids_and_print_whitespace_free_ids(graph):
    env, _ = graph
    rows = list(csv.DictReader(io.StringIO(cli(env, "query", "author_profile", "-p", "authorId=synth-a000001",
                                               "--format", "csv").stdout)))
    assert [r["author"] for r in rows] == ["aminer:synth-a000001"]
    old = cli(env, "query", "author_profile", "-p", "authorId=name:ann lee", "--format", "csv").stdout
    assert list(csv.DictReader(io.StringIO(old)))[0]["author"] == "name:ann_lee"
    unknown = cli(env, "query", "author_profile", "-p", "authorId=1737249", check=False)
    assert unknown.returncode == 2 and "no author in the graph has the id 1737249" in unknown.stderr
