"""A library without citations (real ACM BibTeX: ICTIR 2019 and 2020, 82 papers) in a real Neo4j: `citations
train` says why it trains nothing and exits 0; `recommend`, `evaluate` and the scheduled job are served by the
text-only ranker, named in the output (BM25, then BM25 + MiniLM once `features` stored MiniLM vectors)."""

from __future__ import annotations

import json

import pytest

from tests.cli import run as cli
from tests.conftest import cli_env, open_test_store, require_shared_data

QUERY = "10.1145/3409256.3409817"
ENCODER = "minilm-onnx-int8"  # an ACM-CR dev query that is itself an ICTIR 2020 paper of the library


@pytest.fixture(scope="module")
def library(neo4j_settings, tmp_path_factory):
    # Two years of the venue (82 papers; all twelve are 397): each is encoded with MiniLM in the last test.
    bibs = [require_shared_data("acm-cr", "acm-dl", "ictir", f"ictir-{year}.bib") for year in (2019, 2020)]
    queries = require_shared_data("acm-cr", "queries-dev.jsonl")
    work = tmp_path_factory.mktemp("textonly")
    env = cli_env(neo4j_settings, work / "home")
    drafts = work / "drafts.jsonl"
    drafts.write_text("".join(line + "\n" for line in queries.read_text(encoding="utf-8").splitlines()
                              if json.loads(line)["id"] == QUERY), encoding="utf-8")
    with open_test_store(neo4j_settings) as store:
        store.apply_schema()
        store.reset()
        cli(env, "ingest", "bibtex", *map(str, bibs))
        yield env, work, drafts
        store.reset()


def recommend(env, drafts, fmt):
    return cli(env, "citations", "recommend", "--queries", str(drafts), "--k", "10", "--format", fmt)


def test_train_says_why_and_trains_nothing(library):
    env, work, _ = library
    proc = cli(env, "citations", "train")
    assert "no citations" in proc.stdout and "nothing trained" in proc.stdout and "text-only" in proc.stdout
    assert not (work / "home" / "models" / "citations" / "current.json").exists()


def test_recommend_and_jobs_are_served_by_bm25_without_a_model(library):
    env, _, drafts = library
    proc = recommend(env, drafts, "jsonl")
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(rows) == 10 and {r["ranker"] for r in rows} == {"bm25"}
    assert "text-only ranker bm25" in proc.stderr
    assert all(" " not in r["paper_id"] and r["year"] <= 2020 for r in rows)
    assert not [r for r in rows if QUERY in r["paper_id"].lower()]  # the draft is in the library: never itself
    assert all(r["shared_terms"] for r in rows)
    trec = recommend(env, drafts, "trec").stdout.splitlines()
    assert len(trec) == 10 and all(len(line.split()) == 6 and line.endswith(" bm25") for line in trec)
    # The scheduled scoring job writes the text-only recommendations too.
    job = cli(env, "jobs", "run", "--only", "citations")
    assert "RECOMMENDED_CITATION" in job.stdout, job.stdout


@pytest.mark.long(reason="encodes the real ICTIR papers with MiniLM")
def test_pretrained_vectors_are_fused_once_features_stored_them(library):
    env, _, drafts = library
    # The vectors step alone, with the default encoder (int8 ONNX: the fp32 torch one took twice as long here).
    cli(env, "features", "--only", "vectors", "--encoder", ENCODER)
    rows = [json.loads(line) for line in recommend(env, drafts, "jsonl").stdout.splitlines() if line.strip()]
    assert len(rows) == 10 and {r["ranker"] for r in rows} == {f"bm25+{ENCODER}"}
    table = cli(env, "citations", "recommend", "--title", "Clarifying questions in conversational search",
                "--abstract", "Asking users clarifying questions to improve document ranking.").stdout
    assert table.startswith(f"citations for draft (bm25+{ENCODER})")
