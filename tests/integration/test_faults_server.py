"""Faults of the server and of writers that meet (issue 30): Neo4j stopped under `features` and `ingest --bulk`,
two ingests at once, and `jobs run` while an ingest is writing. Every scenario goes through the real CLI in
subprocesses against a real Neo4j; the interleavings are made deterministic with a write lock the test holds.
docs/reliability.md ("The server goes away, and writers meet") has the table of what each one shows."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import neo4j
import pytest

from tests.conftest import REPO, cli_env

PAPERS = 300
TIMEOUT = 180  # seconds any one CLI call may take before the test fails instead of hanging


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> list[str]:
    """The lines of a small synthetic AMiner corpus (papers in year order: later ones cite earlier ones)."""
    out = tmp_path_factory.mktemp("faults-world") / "synth"
    subprocess.run([sys.executable, "-m", "scholargraph.cli", "-q", "synth", "--papers", str(PAPERS), "--seed", "3",
                    "--out", str(out)], cwd=REPO, check=True, capture_output=True, timeout=TIMEOUT)
    return (out / "corpus.aminer.jsonl").read_text().splitlines(keepends=True)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines))
    return path


def _ids(lines: list[str]) -> set[str]:
    return {f"aminer:{json.loads(line)['id']}" for line in lines}


def _cli(env: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "scholargraph.cli", "-q", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    if check:
        assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stderr}"
    return proc


def _popen(env: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "scholargraph.cli", "-q", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _one_clear_line(proc_stderr: str) -> str:
    """The error line a failed command ended with; fails on a traceback."""
    assert "Traceback" not in proc_stderr, proc_stderr
    lines = [ln for ln in proc_stderr.splitlines() if ln.startswith("scholargraph: ")]
    assert len(lines) == 1, proc_stderr
    return lines[0]


def _driver(settings) -> neo4j.Driver:
    auth = (settings.neo4j_user, settings.password) if settings.password else None
    return neo4j.GraphDatabase.driver(settings.uri, auth=auth)


def _wait_until_blocked(driver: neo4j.Driver, writer: subprocess.Popen, what: str) -> None:
    """Wait until some transaction waits for a lock (the writer's, on the test's lock); fails when the writer
    exits first or nothing blocks within the bound."""
    for _ in range(600):
        rows, _, _ = driver.execute_query("SHOW TRANSACTIONS YIELD status WHERE status STARTS WITH 'Blocked' "
                                          "RETURN count(*) AS n")
        if rows[0]["n"]:
            return
        assert writer.poll() is None, f"{what} ended before it reached the lock: {writer.communicate()}"
        time.sleep(0.1)
    pytest.fail(f"{what} never waited for the test's lock")


def _current_scored(settings) -> set[str]:
    """Papers with RECOMMENDED_CITATION edges of the current citations run (what readers see)."""
    with _driver(settings) as driver:
        rows, _, _ = driver.execute_query(
            "MATCH (r:ScoringRun {job: 'citations', current: true}) "
            "MATCH (p:Paper)-[e:RECOMMENDED_CITATION]->() WHERE e.runId = r.id RETURN collect(DISTINCT p.id) AS ids")
    return set(rows[0]["ids"])


# --- jobs run while an ingest writes --------------------------------------------------------------


def test_jobs_run_during_an_ingest_misses_no_paper_of_it(store, neo4j_settings, world, tmp_path):
    """An ingest stamps its papers (`ingestedAt`) when its transaction writes them, and they become visible only
    when it commits. A `jobs run` that reads its watermark and snapshot in between does not see them; the next
    incremental run must still score them."""
    env = cli_env(neo4j_settings, tmp_path / "home")
    first = _write(tmp_path / "first.jsonl", world[:200])
    small = _write(tmp_path / "small.jsonl", world[200:220])
    late = _write(tmp_path / "late.jsonl", world[220:])
    _cli(env, "ingest", "aminer", str(first))
    _cli(env, "jobs", "run", "--only", "citations")  # the first (full) run: the incremental ones follow it
    _cli(env, "ingest", "aminer", str(small))  # committed: the next run has something to score
    with _driver(neo4j_settings) as driver, driver.session() as session:
        lock = session.begin_transaction()
        # Every author of the graph write-locked: the late ingest writes its papers (stamped now), then waits
        # for the lock at its authors, its transaction open.
        lock.run("MATCH (a:Author) SET a.faultTestLock = true").consume()
        ingest = _popen(env, "ingest", "aminer", str(late))
        try:
            _wait_until_blocked(driver, ingest, "the late ingest")
            during = _cli(env, "jobs", "run", "--only", "citations")  # reads its watermark and snapshot now
            assert "20 papers changed" in during.stdout, during.stdout
        finally:
            lock.rollback()
        out, err = ingest.communicate(timeout=TIMEOUT)
        assert ingest.returncode == 0, err
    after = _cli(env, "jobs", "run", "--only", "citations")
    late_ids = _ids(world[220:])
    scored = _current_scored(neo4j_settings)
    missed = late_ids - scored
    assert not missed, f"{len(missed)} of {len(late_ids)} papers of the late ingest never scored:\n{after.stdout}"
    assert _ids(world[200:220]) <= scored
