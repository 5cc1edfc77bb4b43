"""The managed local Neo4j: start/stop/restart, idempotent start, kill -9 recovery, auth."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace
from pathlib import Path

import pytest

from scholargraph.errors import StoreUnavailable
from scholargraph.graph.neo4j_store import Neo4jStore
from scholargraph.graph.records import Paper, PaperBundle
from scholargraph.server import local_server
from scholargraph.server.jar_signatures import DONE_MARKER, is_signed


def _write_papers(settings, n: int) -> None:
    with Neo4jStore(settings.uri, password=settings.password) as s:
        s.apply_schema()
        s.write_bundles([PaperBundle(paper=Paper(f"t:{i}", f"title {i}", sources=(f"t:{i}",))) for i in range(n)])


def _paper_count(settings) -> int:
    with Neo4jStore(settings.uri, password=settings.password) as s:
        return s.stats()["nodes"]["Paper"]


@pytest.mark.long(reason="starts a server of its own twice")
def test_start_is_idempotent_status_and_stop(spare_settings):
    st = local_server.start(spare_settings, quiet=True)
    try:
        assert st.running and st.pid and st.uri == f"bolt://127.0.0.1:{spare_settings.neo4j_port}"
        assert st.browser_url == f"http://127.0.0.1:{spare_settings.neo4j_http_port}/browser/"
        assert st.version.startswith("5.26")
        again = local_server.start(spare_settings, quiet=True)
        assert again.pid == st.pid  # reused, not a second server
        assert local_server.status(spare_settings).store_bytes > 0
        _write_papers(spare_settings, 5)
    finally:
        assert local_server.stop(spare_settings) is True
    assert not local_server.status(spare_settings).running
    assert local_server.stop(spare_settings) is False  # stopping a stopped server is fine
    # A clean stop leaves the runtime's class-data archive (written by this server, or by one before it)...
    archive = local_server.class_archive_file(spare_settings)
    assert archive.is_file()
    # Restart: the data survived the clean shutdown, and the server maps the archive.
    restarted = local_server.start(spare_settings, quiet=True)
    try:
        assert f"-XX:SharedArchiveFile={archive}".encode() in Path(f"/proc/{restarted.pid}/cmdline").read_bytes()
        assert _paper_count(spare_settings) == 5
    finally:
        local_server.stop(spare_settings)


def test_the_provisioned_runtime_has_no_signed_jar(neo4j_settings):
    """Neo4j's signed eclipse-collections jars, rewritten unsigned once: checked at every start otherwise, and
    never in the class-data archive (README, the managed server)."""
    runtime = local_server.provision(neo4j_settings, quiet=True)
    for folder in local_server.jar_folders(neo4j_settings, runtime):
        assert (folder / DONE_MARKER).exists()
        assert not [jar.name for jar in folder.glob("*.jar") if is_signed(jar)]
    assert "eclipse-collections-11.1.0.jar" in (runtime / "lib" / DONE_MARKER).read_text().split()


@pytest.mark.long(reason="starts a server of its own twice")
def test_recovers_after_kill_minus_9(spare_settings):
    st = local_server.start(spare_settings, quiet=True)
    _write_papers(spare_settings, 50)
    os.kill(st.pid, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while local_server.running_pid(spare_settings) is not None and time.monotonic() < deadline:
        try:
            os.waitpid(st.pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    assert local_server.running_pid(spare_settings) is None
    restarted = local_server.start(spare_settings, quiet=True)  # stale pid file is not a running server
    try:
        assert restarted.pid != st.pid
        assert _paper_count(spare_settings) == 50  # committed data intact after recovery
    finally:
        local_server.stop(spare_settings)


@pytest.mark.long(reason="starts a server of its own")
def test_password_turns_auth_on_and_is_never_logged(spare_settings):
    secret = "Sg-test-pass-1"
    settings = replace(spare_settings, neo4j_password=secret)
    local_server.start(settings, quiet=True)
    try:
        _write_papers(settings, 1)
        with pytest.raises(StoreUnavailable, match="authentication failed"):
            Neo4jStore(settings.uri, password="wrong-password")
        logs = "\n".join(local_server.tail_logs(settings, 10_000))
        assert secret not in logs
        with open(f"/proc/{local_server.running_pid(settings)}/cmdline", "rb") as f:
            cmdline = f.read()
        assert secret.encode() not in cmdline
    finally:
        local_server.stop(settings)
