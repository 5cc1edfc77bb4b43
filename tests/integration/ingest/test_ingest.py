"""Ingestion into the real Neo4j: idempotency, cross-source merges, stubs, kill -9 resume, exit codes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scholargraph.ingest.loader import ingest
from tests.conftest import REPO, cli_env, require_shared_data


def run(store, tmp_path, fmt, paths, **kw):
    return ingest(store, fmt, [str(p) for p in paths], quarantine_path=tmp_path / "q.jsonl",
                  checkpoint_dir=tmp_path / "ckpt", quiet=True, **kw)


def write_aminer(path: Path, n: int, bad_every: int = 0, refs: int = 10) -> Path:
    with open(path, "w") as fh:
        for i in range(n):
            if bad_every and i % bad_every == bad_every - 1:
                fh.write('{"id": "broken", "title": \n')  # malformed JSON line
                continue
            rec = {"id": f"t{i}", "title": f"Paper number {i}", "year": 1990 + i % 30,
                   "authors": [{"name": f"Author {i % 97}", "id": f"a{i % 97}"},
                               {"name": f"Author {(i * 7) % 89}", "id": f"b{(i * 7) % 89}"}],
                   "venue": {"raw": f"Venue {i % 5}"},
                   "references": [f"t{(i * 13 + k * 101) % n}" for k in range(refs)] + [f"outside{i % 50}"]}
            fh.write(json.dumps(rec) + "\n")
    return path


def test_nips_twice_changes_nothing(store, tmp_path):
    nips = require_shared_data("nips", "nips-1987-1993.aminer.jsonl")
    first = run(store, tmp_path, "aminer", [nips])
    stats = store.stats()
    assert first.read == 844 and first.quarantined == 0
    assert stats["nodes"]["Paper"] == 844 and stats["relationships"]["CITES"] == first.citations > 0
    again = run(store, tmp_path, "aminer", [nips], restart=True)  # really re-read and re-written
    assert again.written == 844 and again.created == 0
    assert store.stats() == stats


def test_cross_source_doi_merge_and_stub_fill(store, tmp_path):
    openalex = tmp_path / "works.jsonl"
    openalex.write_text(json.dumps({
        "id": "https://openalex.org/W1", "doi": "https://doi.org/10.1234/SHARED", "title": "Shared paper",
        "publication_year": 2019,
        "authorships": [{"author_position": "first",
                         "author": {"id": "https://openalex.org/A1", "display_name": "Ann Lee"}}],
        "referenced_works": ["https://openalex.org/W2"], "cited_by_count": 3}) + "\n")
    aminer = tmp_path / "aminer.jsonl"
    aminer.write_text(json.dumps({"id": "77", "doi": "10.1234/shared", "title": "Shared paper", "year": 2019,
                                  "authors": [{"name": "Ann Lee"}], "references": []}) + "\n")
    run(store, tmp_path, "openalex", [openalex])
    assert store.stats()["stubs"]["Paper"] == 1  # W2 is cited but not ingested
    summary = run(store, tmp_path, "aminer", [aminer])
    assert summary.merged == 1
    ids, values = store.read_nodes("Paper", ["sources", "stub"])
    by_id = dict(zip(ids, zip(values["sources"], values["stub"])))
    assert sorted(by_id["10.1234/shared"][0]) == ["aminer:77", "openalex:W1"]
    w2 = tmp_path / "w2.jsonl"
    w2.write_text(json.dumps({"id": "https://openalex.org/W2", "title": "Cited later", "publication_year": 2010,
                              "authorships": [{"author": {"id": "https://openalex.org/A2",
                                                          "display_name": "Bo Li"}}]}) + "\n")
    filled = run(store, tmp_path, "openalex", [w2])
    assert filled.stubs_filled == 1 and store.stats()["stubs"]["Paper"] == 0
    src, dst, _ = store.read_edges("CITES")
    assert list(zip(src, dst)) == [("10.1234/shared", "openalex:W2")]


def _cli(args, env):
    return subprocess.Popen([sys.executable, "-m", "scholargraph.cli", "-q", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.long(reason="three CLI ingests of 6,000 records, one killed")
def test_kill_minus_9_then_resume_gives_uninterrupted_counts(store, tmp_path, neo4j_settings):
    # 20 batches of 300, killed after ten or more (12,000 records took twice as long and showed nothing more).
    data = write_aminer(tmp_path / "big.jsonl", 6_000, bad_every=997)
    env = cli_env(neo4j_settings, tmp_path / "home")
    args = ["ingest", "aminer", str(data), "--batch-size", "300", "--quarantine", str(tmp_path / "q.jsonl")]
    # Reference: one uninterrupted run.
    with _cli([*args, "--restart"], env) as ref:
        _, err = ref.communicate(timeout=600)
    assert ref.returncode == 0, err
    expected = store.stats()
    expected_quarantine = (tmp_path / "q.jsonl").read_text().count("\n")
    assert expected_quarantine == 6
    store.reset()
    (tmp_path / "q.jsonl").unlink()
    # Interrupted run: kill -9 once some batches are committed, then the same command again.
    ckpt_dir = tmp_path / "home" / "checkpoints"
    with _cli([*args, "--restart"], env) as victim:  # the with block closes its pipes and reaps it
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            files = list(ckpt_dir.glob("*.json"))
            if files:
                state = json.loads(files[0].read_text())
                done = next(iter(state["files"].values()))
                if done["done"] >= 3000 and not done["finished"]:
                    break
            time.sleep(0.05)
        victim.send_signal(signal.SIGKILL)
    partial = store.stats()["nodes"]["Paper"]
    assert 0 < partial
    with _cli(args, env) as resumed:
        out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert "committed by an earlier run" in out
    assert store.stats() == expected
    assert (tmp_path / "q.jsonl").read_text().count("\n") == expected_quarantine


def test_bad_ratio_exit_code_and_unreadable_path(store, tmp_path, neo4j_settings):
    data = write_aminer(tmp_path / "bad.jsonl", 200, bad_every=10, refs=1)
    env = cli_env(neo4j_settings, tmp_path / "home")
    with _cli(["ingest", "aminer", str(data)], env) as proc:
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 3 and "above --max-bad-ratio" in err
    assert "quarantine 20" in out
    with _cli(["ingest", "aminer", str(data), "--restart", "--max-bad-ratio", "0.2"], env) as proc:
        _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    with _cli(["ingest", "aminer", str(tmp_path / "missing.jsonl")], env) as proc:
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.slow(reason="all 113k ACM-CR records into Neo4j (about 2 min); make test ingests real BibTeX of one "
                         "venue (test_citations_textonly.py) and parses more below")
def test_whole_acm_cr_collection(store, tmp_path):
    acm = require_shared_data("acm-cr", "acm-dl")
    summary = run(store, tmp_path, "bibtex", [acm])
    assert summary.read > 110_000
    assert summary.drop_reasons["session header"] > 3000
    assert summary.bad_ratio < 0.01
    stats = store.stats()
    assert stats["nodes"]["Paper"] == summary.created > 100_000
    assert stats["nodes"]["Author"] > 100_000
    # Records repeating a DOI (written twice, merged into one node) repeat their authorships too.
    assert 0.99 * summary.authorships < stats["relationships"]["AUTHORED"] <= summary.authorships
