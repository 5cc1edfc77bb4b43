"""Authentication on by default: a generated password kept private, asked for on Bolt and HTTP, never shown;
`--no-auth` only when asked; a graph made before the change keeps working."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from scholargraph.errors import StoreUnavailable
from scholargraph.graph.neo4j_store import Neo4jStore
from scholargraph.graph.records import Paper, PaperBundle
from scholargraph.server import local_server
from tests.integration.server.test_browser import LOOPBACK, _cli, _cypher, listening


def _every_command_line() -> bytes:
    lines = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                lines.append(Path(f"/proc/{pid}/cmdline").read_bytes())
            except OSError:
                pass  # a process that ended meanwhile
    return b"\n".join(lines)


def _files_under(root: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


@pytest.mark.long(reason="starts a server of its own")
def test_default_start_generates_a_private_password_that_bolt_and_http_ask_for(spare_settings):
    settings = spare_settings
    assert settings.neo4j_auth and settings.neo4j_password is None
    started = _cli(settings, "neo4j", "start")
    try:
        assert started.returncode == 0, started.stderr
        path = settings.home / "neo4j-password"
        password = settings.password
        assert password and len(password) >= 32
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(settings.home.stat().st_mode) == 0o700
        # The start line says where the password is, not what it is.
        assert f"the password in {path}" in started.stdout
        # Bolt: no password, or a wrong one, is refused; the file's is accepted.
        with pytest.raises(StoreUnavailable, match="authentication failed"):
            Neo4jStore(settings.uri)
        with pytest.raises(StoreUnavailable, match="authentication failed"):
            Neo4jStore(settings.uri, password="not-the-password")
        with Neo4jStore(settings.uri, password=password) as store:
            store.apply_schema()
            store.write_bundles([PaperBundle(paper=Paper("t:1", "a title", sources=("t:1",)))])
        # HTTP: the same.
        port = settings.neo4j_http_port
        assert _cypher(port, "RETURN 1 AS x")[0] == 401
        code, result = _cypher(port, "RETURN 1 AS x", ("neo4j", password))
        assert code == 200 and result["results"][0]["data"][0]["row"] == [1]
        # Every command finds the password by itself, with a progress bar on.
        stats = _cli(settings, "db", "stats")
        assert stats.returncode == 0, stats.stderr
        status = _cli(settings, "neo4j", "status")
        assert "auth:    user neo4j, the password in" in status.stdout
        outputs = "".join(p.stdout + p.stderr for p in (started, stats, status))
        assert password not in outputs
        # Nowhere to be seen: the server's logs, any process's command line.
        assert password.encode() not in _files_under(settings.home / "logs")
        assert password.encode() not in _every_command_line()
        assert {a for a, _p in listening(local_server.running_pid(settings))} <= LOOPBACK
    finally:
        _cli(settings, "neo4j", "stop")


def test_no_auth_is_explicit(spare_settings):
    settings = spare_settings
    started = _cli(settings, "neo4j", "start", "--no-auth")
    try:
        assert started.returncode == 0, started.stderr
        assert "auth:    off" in started.stdout
        assert not (settings.home / "neo4j-password").exists()
        with Neo4jStore(settings.uri) as store:
            assert store.stats()["nodes"].get("Paper", 0) == 0
        assert _cypher(settings.neo4j_http_port, "RETURN 1 AS x")[0] == 200
        # A start that expects auth, finding this server, says it runs without.
        again = _cli(settings, "neo4j", "start")
        assert "already running" in again.stdout and "runs without authentication" in again.stderr
    finally:
        _cli(settings, "neo4j", "stop")


@pytest.mark.long(reason="starts a server of its own twice")
def test_a_graph_from_before_authentication_keeps_its_data_and_gets_a_password(spare_settings):
    # Before this change the managed server ran with authentication off: that is `neo4j_auth=False` here.
    before = replace(spare_settings, neo4j_auth=False, neo4j_http_port=0)
    local_server.start(before, quiet=True)
    try:
        with Neo4jStore(before.uri) as store:
            store.apply_schema()
            store.write_bundles([PaperBundle(paper=Paper(f"t:{i}", f"title {i}", sources=(f"t:{i}",)))
                                 for i in range(7)])
        # A server started by an earlier version has no auth file: status says so, commands still connect.
        (before.home / "run" / "auth").unlink()
        status = _cli(spare_settings, "neo4j", "status")
        assert "auth:    unknown" in status.stdout
    finally:
        local_server.stop(before)
    after = replace(spare_settings, neo4j_http_port=0)
    local_server.start(after, quiet=True)
    try:
        assert after.password
        with pytest.raises(StoreUnavailable, match="authentication failed"):
            Neo4jStore(after.uri)
        with Neo4jStore(after.uri, password=after.password) as store:
            assert store.stats()["nodes"]["Paper"] == 7
    finally:
        local_server.stop(after)
