"""The CLI against real servers: unreachable server, db commands, no tracebacks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli import run_process
from tests.conftest import cli_env, managed_env

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "ingest"


def run_cli(*args, env_extra=None):
    """The entry point itself (`python -m scholargraph.cli`), in a process of its own."""
    return run_process({**os.environ, **(env_extra or {})}, *args, check=False, quiet=False, timeout=300)


def test_unreachable_server_is_one_line_and_exit_1():
    proc = run_cli("db", "stats", env_extra={"SCHOLARGRAPH_NEO4J_URI": "bolt://127.0.0.1:1"})
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scholargraph: cannot reach Neo4j at bolt://127.0.0.1:1:")
    assert "Traceback" not in proc.stderr


@pytest.mark.long(reason="starts a server of its own")
def test_wrong_password_is_one_line(neo4j_settings, spare_settings):
    from dataclasses import replace

    from scholargraph.server import local_server

    settings = replace(spare_settings, neo4j_password="right-one-42")
    local_server.start(settings, quiet=True)
    try:
        proc = run_cli("db", "stats", env_extra={"SCHOLARGRAPH_NEO4J_URI": settings.uri,
                                                 "SCHOLARGRAPH_NEO4J_PASSWORD": "wrong"})
        assert proc.returncode == 1
        assert "authentication failed" in proc.stderr and "Traceback" not in proc.stderr
        assert "wrong" not in proc.stderr.replace("authentication failed", "")
    finally:
        local_server.stop(settings)


def test_db_commands(store, neo4j_settings, tmp_path):
    env = cli_env(neo4j_settings, tmp_path / "home")
    assert run_cli("db", "init", env_extra=env).returncode == 0
    loaded = run_cli("-q", "ingest", "aminer", str(FIXTURES / "aminer_v10.jsonl"), "--max-bad-ratio", "1",
                     env_extra=env)  # the fixture holds bad records on purpose
    assert loaded.returncode == 0, loaded.stderr
    stats = run_cli("db", "stats", env_extra=env)
    assert stats.returncode == 0 and "Paper" in stats.stdout and "CITES" in stats.stdout
    assert "paper_id" in stats.stdout.split("constraints")[1]  # the schema's names follow the counts
    dumped = run_cli("db", "dump", "--out", str(tmp_path / "dump.jsonl"), env_extra=env)
    assert dumped.returncode == 0, dumped.stderr
    lines = (tmp_path / "dump.jsonl").read_text().splitlines()
    assert sorted(lines) == sorted(store.dump_lines()) and any('"node"' in line for line in lines)
    assert sorted(run_cli("db", "dump", env_extra=env).stdout.splitlines()) == sorted(lines)
    refused = run_cli("db", "reset", env_extra=env)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert run_cli("db", "reset", "--yes", env_extra=env).returncode == 0


@pytest.mark.long(reason="starts a server of its own")
def test_managed_server_commands(spare_settings):
    env_clean = managed_env(spare_settings)
    os.environ.pop("SCHOLARGRAPH_NEO4J_URI", None)
    try:
        started = run_cli("neo4j", "start", env_extra=env_clean)
        assert started.returncode == 0, started.stderr
        assert "started at" in started.stdout
        # A command needing the graph reuses the managed server by itself.
        assert run_cli("db", "init", env_extra=env_clean).returncode == 0
        status = run_cli("neo4j", "status", env_extra=env_clean)
        assert "running" in status.stdout and "5.26" in status.stdout and "store:" in status.stdout
        assert "already running" in run_cli("neo4j", "start", env_extra=env_clean).stdout
        assert run_cli("neo4j", "logs", "-n", "5", env_extra=env_clean).returncode == 0
    finally:
        stopped = run_cli("neo4j", "stop", env_extra=env_clean)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
