"""Faults of the server and of writers that meet (issue 30): Neo4j stopped under `features` and `ingest --bulk`,
two ingests at once, and `jobs run` while an ingest is writing. Every scenario goes through the real CLI in
subprocesses against a real Neo4j; the interleavings are made deterministic with a write lock the test holds.
docs/reliability.md ("The server goes away, and writers meet") has the table of what each one shows."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import neo4j
import pytest

from scholargraph.server import local_server
from tests.conftest import REPO, cli_env, open_test_store

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


# --- the server stopped under `features` ------------------------------------------------------------


def _managed_env(settings) -> dict:
    """The environment of a user of the managed server of `settings` (its home's password, no URI)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARGRAPH_")}
    env.update(SCHOLARGRAPH_HOME=str(settings.home), SCHOLARGRAPH_NEO4J_PORT=str(settings.neo4j_port),
               SCHOLARGRAPH_NEO4J_HTTP_PORT=str(settings.neo4j_http_port), SCHOLARGRAPH_HEAP=settings.heap,
               SCHOLARGRAPH_PAGECACHE=settings.pagecache, SCHOLARGRAPH_CACHE=str(settings.cache))
    return env


def _kill_server(settings, sig: int) -> None:
    pid = local_server.running_pid(settings)
    assert pid is not None, "the managed server is not running"
    os.kill(pid, sig)
    for _ in range(1200):  # SIGTERM: Neo4j ends its open transactions and shuts down
        if local_server.running_pid(settings) is None:
            return
        time.sleep(0.1)
    pytest.fail(f"the server (pid {pid}) did not stop after signal {sig}")


def _features_runs(settings) -> dict[str, dict]:
    with _driver(settings) as driver:
        rows, _, _ = driver.execute_query(
            "MATCH (r:ScoringRun {job: 'features'}) RETURN r.id AS id, properties(r) AS p")
    return {r["id"]: r["p"] for r in rows}


FEATURE_STEPS = "networks,pagerank,topics"  # the write-back under test; the text encoder adds nothing here


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_server_stopped_during_features_write_back(spare_settings, world, tmp_path, sig):
    """Neo4j stops half way through the write-back of `features` (after the networks and PageRank are written,
    while the topics wait): one line and exit 1, the last successful run stays the one that describes the
    graph, and the next `features` (which starts the server again) completes a consistent graph."""
    from scholargraph.graph.features import features_up_to_date

    settings = spare_settings
    env = _managed_env(settings)
    try:
        _cli(env, "ingest", "aminer", str(_write(tmp_path / "first.jsonl", world[:250])))  # starts the server
        _cli(env, "features", "--only", FEATURE_STEPS)
        (before,) = _features_runs(settings)
        _cli(env, "ingest", "aminer", str(_write(tmp_path / "more.jsonl", world[250:])))
        with _driver(settings) as driver, driver.session() as session:
            lock = session.begin_transaction()
            # The Topic nodes write-locked: the write-back commits networks and PageRank, then waits at the topics.
            lock.run("MATCH (t:Topic) SET t.faultTestLock = true").consume()
            features = _popen(env, "features", "--only", FEATURE_STEPS)
            _wait_until_blocked(driver, features, "features")
            _kill_server(settings, sig)
            try:
                lock.rollback()
            except neo4j.exceptions.DriverError:
                pass  # the server took the transaction with it
        _, err = features.communicate(timeout=TIMEOUT)
        assert features.returncode == 1, err
        line = _one_clear_line(err)
        assert "cannot reach Neo4j" in line, line

        local_server.start(settings, quiet=True)  # the user's next command does the same
        runs = _features_runs(settings)
        (killed,) = set(runs) - {before}
        assert runs[killed]["status"] == "running"  # never succeeded: the lease expiry marks it failed later
        with open_test_store(settings) as store:
            assert store.last_run("features")["id"] == before
            # Half of it is written, and no run claims it describes the graph: models compute afresh.
            assert not features_up_to_date(store, settings.models_dir, FEATURE_STEPS.split(","))

        recovered = _cli(env, "features", "--only", FEATURE_STEPS)
        assert "features networks,pagerank,topics on" in recovered.stdout, recovered.stdout
        with open_test_store(settings) as store:
            last = store.last_run("features")
            assert last["id"] not in (before, killed) and last["status"] == "succeeded"
            assert features_up_to_date(store, settings.models_dir, FEATURE_STEPS.split(","))
        with _driver(settings) as driver:
            versions, _, _ = driver.execute_query(
                "MATCH ()-[e:COAUTHOR|CITES_AUTHOR|CITES_VENUE|HAS_TOPIC]->() RETURN collect(DISTINCT e.version) AS v")
            topics, _, _ = driver.execute_query("MATCH (t:Topic) RETURN collect(DISTINCT t.modelVersion) AS v")
            missing, _, _ = driver.execute_query(
                "MATCH (p:Paper) WHERE NOT coalesce(p.stub, false) AND (p.pagerank IS NULL OR p.topicVector IS NULL) "
                "RETURN count(p) AS n")
        # Every derived edge and topic is the recovered run's: none left from the killed one.
        assert versions[0]["v"] == [last["modelVersion"]] and topics[0]["v"] == [last["modelVersion"]]
        assert missing[0]["n"] == 0
    finally:
        local_server.stop(settings)
