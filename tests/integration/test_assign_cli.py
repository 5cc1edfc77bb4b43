"""`reviewers assign` end to end on a small synthetic graph in a real Neo4j: the constraints hold in what it
prints and in what it writes (ASSIGNED_TO, read back through the query library), chair's files are obeyed,
an infeasible request exits 2 with the shortage named, and the randomised mode is reproducible."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from tests.cli import run as cli
from tests.conftest import cli_env, open_test_store

K = 2
MAX_LOAD = 3


@pytest.fixture(scope="module")
def graph(neo4j_settings, tmp_path_factory):
    work = tmp_path_factory.mktemp("assign")
    env = cli_env(neo4j_settings, work / "home")
    with open_test_store(neo4j_settings) as store:
        store.apply_schema()
        store.reset()
        corpus = trained_synth_graph(env, work, 300)
        records = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
        records.sort(key=lambda r: (r.get("year") or 0, r["id"]))
        newest = records[-12:]
        authors = {r["id"]: {a["name"] if isinstance(a, dict) else a for a in r.get("authors") or ()} for r in newest}
        yield env, work, [r["id"] for r in newest], authors
        store.reset()


def trained_synth_graph(env, work, papers: int):
    """A synthetic graph of `papers` ingested, its features computed and a small model trained: the corpus."""
    cli(env, "synth", "--papers", str(papers), "--seed", "5", "--out", str(work / "synth"))
    corpus = work / "synth" / "corpus.aminer.jsonl"
    cli(env, "ingest", "aminer", str(corpus))
    cli(env, "features", "--topics", "4")
    cli(env, "reviewers", "train", "--training-queries", "20", "--steps", "20")
    return corpus


def assign(env, papers, *args, check=True):
    paper_args = [a for p in papers for a in ("--paper", p)]
    return cli(env, "reviewers", "assign", *paper_args, "--per-paper", str(K), "--max-load", str(MAX_LOAD), *args,
               check=check)


def rows_of(proc) -> list[dict]:
    return list(csv.DictReader(io.StringIO(proc.stdout)))


@pytest.mark.long(reason="the module's graph: ingest, features and a reviewer model through the CLI")
def test_assignment_meets_every_constraint_and_is_written(graph):
    env, work, papers, authors = graph
    proc = assign(env, papers, "--format", "csv", "--write")
    rows = rows_of(proc)
    per_paper = Counter(r["paper"] for r in rows)
    assert set(per_paper) == set(papers) and set(per_paper.values()) == {K}
    assert max(Counter(r["reviewer"] for r in rows).values()) <= MAX_LOAD
    assert all(" " not in r["reviewer"] and float(r["affinity"]) == float(r["affinity"]) for r in rows)
    assert "greedy" in proc.stderr and "ASSIGNED_TO" in proc.stderr  # the baseline and the write are reported
    # No one reviews a paper they wrote (the graph's conflicts are ruled out).
    assert not [r for r in rows if r["name"] in authors[r["paper"]]]
    # Written once, read back through the query library.
    first = papers[0]
    out = cli(env, "query", "assignment_of_paper", "-p", f"paperId=aminer:{first}", "--format", "jsonl").stdout
    stored = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert {s["reviewer"] for s in stored} == {r["reviewer"] for r in rows if r["paper"] == first}
    reviewer = stored[0]["reviewer"]
    out = cli(env, "query", "load_of_reviewer", "-p", f"authorId={reviewer}", "--format", "jsonl").stdout
    load = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert 1 <= len(load) <= MAX_LOAD and {item["load"] for item in load} == {len(load)}


def test_forbidden_and_forced_pairs_are_obeyed(graph):
    env, work, papers, _ = graph
    first = rows_of(assign(env, papers, "--format", "csv"))
    taken = first[0]
    forbid = work / "forbid.txt"
    forbid.write_text(f"paper reviewer\n{taken['paper']} {taken['reviewer']}\n", encoding="utf-8")
    again = rows_of(assign(env, papers, "--format", "csv", "--forbid", str(forbid)))
    assert (taken["paper"], taken["reviewer"]) not in {(r["paper"], r["reviewer"]) for r in again}
    # Force a reviewer the optimum did not pick for the last paper.
    last = papers[-1]
    chosen = {r["reviewer"] for r in first if r["paper"] == last}
    other = next(r["reviewer"] for r in first if r["reviewer"] not in chosen)
    force = work / "force.csv"
    force.write_text(f"{last},{other}\n", encoding="utf-8")
    forced = rows_of(assign(env, papers, "--format", "csv", "--force", str(force)))
    pair = [r for r in forced if r["paper"] == last and r["reviewer"] == other]
    assert pair and pair[0]["forced"] == "true"
    assert Counter(r["paper"] for r in forced)[last] == K


def test_infeasible_request_exits_2_naming_the_shortage(graph):
    env, _, papers, _ = graph
    proc = assign(env, papers, "--max-load", "0", check=False)
    assert proc.returncode == 2
    assert "capacity" in proc.stderr and "short by" in proc.stderr and "Traceback" not in proc.stderr
    proc = assign(env, papers, "--candidates-per-paper", "1", check=False)
    assert proc.returncode == 2 and "fewer candidates" in proc.stderr


def test_senior_rule_is_reported_and_randomised_mode_is_reproducible(graph):
    env, _, papers, _ = graph
    proc = assign(env, papers, "--senior", "papers>=4", "--format", "tsv")
    assert "senior" in proc.stderr and "%" in proc.stderr
    runs = [assign(env, papers, "--max-prob", "0.5", "--seed", "7", "--format", "trec").stdout for _ in range(2)]
    assert runs[0] == runs[1]
    lines = runs[0].splitlines()
    assert len(lines) == K * len(papers) and all(len(line.split()) == 6 for line in lines)
    assert all(line.split()[5] == "assign-random" for line in lines)


def test_new_submissions_from_jsonl_with_a_per_paper_count(graph):
    env, work, papers, _ = graph
    subs = work / "subs.jsonl"
    subs.write_text("\n".join(json.dumps(r) for r in (
        {"id": "new-1", "title": "Graph ranking of reviewers", "abstract": "citation graph expertise", "k": 1},
        {"id": "new-2", "title": "Topic models of papers", "abstract": "latent topics in abstracts"})),
        encoding="utf-8")
    proc = cli(env, "reviewers", "assign", "--queries", str(subs), "--per-paper", "3", "--format", "jsonl", "--write")
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert Counter(r["paper"] for r in rows) == {"new-1": 1, "new-2": 3}
    assert "none of the 2 submissions is in the graph" in proc.stderr  # nothing stored, and it says so


def test_a_hotcrp_upload_with_declared_conflicts(graph):
    # The chair's round: conflicts declared in HotCRP's own layout (by email), the assignment out as HotCRP's
    # bulk upload; the declared pair is never assigned and every pair is either written or reported.
    env, work, papers, _ = graph
    first = rows_of(assign(env, papers, "--format", "csv"))
    taken = first[0]
    email = {r: f"reviewer{i}@uni.example" for i, r in enumerate(sorted({row["reviewer"] for row in first}))}
    emails = work / "emails.csv"
    emails.write_text("reviewer_id,email\n" + "".join(f"{r},{e}\n" for r, e in email.items()), encoding="utf-8")
    conflicts = work / "hotcrp-conflicts.csv"
    conflicts.write_text(f"paper,action,email\n{taken['paper']},conflict,{email[taken['reviewer']]}\n"
                         f"{taken['paper']},conflict,ghost@nowhere.example\n", encoding="utf-8")
    out = work / "hotcrp-upload.csv"
    proc = assign(env, papers, "--format", "hotcrp", "--out", str(out), "--conflicts", str(conflicts),
                  "--emails", str(emails))
    header, *rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert header == ["paper", "action", "email"] and rows
    assert {r[1] for r in rows} == {"primary"} and all("@" in r[2] and " " not in r[2] for r in rows)
    assert [taken["paper"], "primary", email[taken["reviewer"]]] not in rows
    assert "read as HotCRP bulk assignments" in proc.stderr
    assert "declared conflicts ruled out: 1 (submission, reviewer) pair(s): declared (hotcrp) 1" in proc.stderr
    # An email nobody has is reported by its line, not dropped, and no email is echoed.
    assert f"{taken['paper']} (the email of line 3)" in proc.stderr and "@" not in proc.stderr
    left_out = sum(int(line.split("hotcrp: ")[1].split()[0]) for line in proc.stderr.splitlines()
                   if "hotcrp: " in line and "left out" in line)
    assert len(rows) + left_out == K * len(papers)
