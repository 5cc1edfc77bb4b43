"""The Neo4j Browser and the HTTP API of the managed server: served on 127.0.0.1 only, with the query
library's guide; auth as for Bolt; HTTP port 0 turns it off; a busy HTTP port is one clear error."""

from __future__ import annotations

import base64
import ipaddress
import json
import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from scholargraph.errors import ServerError
from scholargraph.graph.query_library import list_queries
from scholargraph.server import local_server
from scholargraph.server.browser_guide import GUIDE_PATH, guide_url
from tests.conftest import REPO, managed_env

LOOPBACK = {"127.0.0.1", "::ffff:127.0.0.1"}


def _request(url: str, body: dict | None = None, auth: tuple[str, str] | None = None) -> tuple[int, str]:
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if auth is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode("utf-8", "replace")


def _cypher(http_port: int, statement: str, auth: tuple[str, str] | None = None) -> tuple[int, dict | str]:
    code, text = _request(f"http://127.0.0.1:{http_port}/db/neo4j/tx/commit",
                          {"statements": [{"statement": statement}]}, auth)
    return code, (json.loads(text) if code == 200 else text)


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw[::-1]))
    # /proc/net/tcp6: four 32-bit words, each in host (little-endian) byte order.
    address = ipaddress.IPv6Address(b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4)))
    return f"::ffff:{address.ipv4_mapped}" if address.ipv4_mapped else str(address)


def listening(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket in LISTEN state that process `pid` holds."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            m = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(fd))
        except OSError:
            continue
        if m:
            inodes.add(m.group(1))
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            local, state, inode = cols[1], cols[3], cols[9]
            if state == "0A" and inode in inodes:  # 0A: TCP_LISTEN
                address, port = local.rsplit(":", 1)
                found.add((_address(address), int(port, 16)))
    return found


def _cli(settings, *args: str) -> subprocess.CompletedProcess:
    """A CLI run on the spare server's home, as a user runs it: no password in the environment."""
    return subprocess.run([sys.executable, "-m", "scholargraph.cli", *args], capture_output=True, text=True,
                          env=managed_env(settings), cwd=REPO, timeout=300)


@pytest.fixture
def browser(neo4j_settings):
    """(settings, HTTP port) of the shared test server's Browser."""
    if not neo4j_settings.managed:
        pytest.skip("the Browser is served by the managed server (SCHOLARGRAPH_NEO4J_URI is set)")
    if neo4j_settings.neo4j_http_port <= 0:
        pytest.skip("SCHOLARGRAPH_NEO4J_HTTP_PORT is 0: the test server has no Browser")
    st = local_server.status(neo4j_settings)
    assert st.running and st.browser_url, "the test server runs without HTTP: restart it"
    port = int(st.browser_url.split(":")[2].split("/")[0])
    return neo4j_settings, port


def _auth(settings) -> tuple[str, str] | None:
    return (settings.neo4j_user, settings.password) if settings.password else None


def test_browser_page_is_served(browser):
    _settings, port = browser
    code, page = _request(f"http://127.0.0.1:{port}/browser/")
    assert code == 200 and "Neo4j Browser" in page
    code, discovery = _request(f"http://127.0.0.1:{port}/")
    assert code == 200 and json.loads(discovery)["bolt_direct"] == f"bolt://127.0.0.1:{_settings.neo4j_port}"


def test_guide_is_served_with_every_library_query_and_plays_on_connect(browser):
    settings, port = browser
    code, page = _request(f"http://127.0.0.1:{port}{GUIDE_PATH}")
    assert code == 200 and page.startswith('<article class="guide">')
    names = [q.name for q in list_queries()]
    assert names
    for name in names:
        assert f"<h3>{name}</h3>" in page
    assert page.count('class="pre-scrollable code runnable"') > len(names)
    # The Browser reads its settings from the server: the guide plays once connected, and the guide's
    # host is allowed to serve remote content.
    code, result = _cypher(port, "CALL dbms.clientConfig() YIELD name, value RETURN name, value", _auth(settings))
    assert code == 200 and not result["errors"], result
    config = {row["row"][0]: row["row"][1] for row in result["results"][0]["data"]}
    assert config["browser.post_connect_cmd"] == f"play {guide_url(port)}"
    assert "127.0.0.1" in config["browser.remote_content_hostname_whitelist"].split(",")


def test_http_api_answers_cypher(browser):
    settings, port = browser
    code, result = _cypher(port, "RETURN 1 AS x", _auth(settings))
    assert code == 200 and not result["errors"], result
    assert result["results"][0]["columns"] == ["x"] and result["results"][0]["data"][0]["row"] == [1]


def test_http_api_does_not_answer_other_origins(browser):
    """Neo4j's default CORS header is '*'; ours names the Browser's own origin only."""
    _settings, port = browser
    req = urllib.request.Request(f"http://127.0.0.1:{port}/", headers={"Origin": "http://evil.example"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        allowed = resp.headers.get("Access-Control-Allow-Origin")
    assert allowed == f"http://127.0.0.1:{port}"


def test_server_listens_on_loopback_only(browser):
    settings, port = browser
    sockets = listening(local_server.running_pid(settings))
    assert {p for _a, p in sockets} >= {settings.neo4j_port, port}
    assert {a for a, _p in sockets} <= LOOPBACK, sockets


def test_the_servers_temporary_files_stay_in_its_home(browser):
    """Jetty unpacks the Browser into java.io.tmpdir on every start: the home's run/tmp, not /tmp, where each
    start used to leave a directory behind."""
    settings, port = browser
    scratch = settings.home / "run" / "tmp"
    cmdline = Path(f"/proc/{local_server.running_pid(settings)}/cmdline").read_bytes().split(b"\0")
    assert f"-Djava.io.tmpdir={scratch}".encode() in cmdline
    assert any(p.name.startswith(f"jetty-127_0_0_1-{port}-") for p in scratch.iterdir())


@pytest.mark.long(reason="starts a server of its own")
def test_auth_on_http_api_needs_basic_auth(spare_settings):
    settings = replace(spare_settings, neo4j_password="Sg-browser-pass-1")
    st = local_server.start(settings, quiet=True)
    try:
        port = settings.neo4j_http_port
        assert st.browser_url == f"http://127.0.0.1:{port}/browser/"
        code, _ = _cypher(port, "RETURN 1 AS x")
        assert code == 401
        code, _ = _cypher(port, "RETURN 1 AS x", ("neo4j", "wrong-password"))
        assert code == 401
        code, result = _cypher(port, "RETURN 1 AS x", ("neo4j", settings.password))
        assert code == 200 and result["results"][0]["data"][0]["row"] == [1]
        # The Browser's files and the guide hold no data and load before the login (over Bolt).
        assert _request(f"http://127.0.0.1:{port}/browser/")[0] == 200
        assert _request(guide_url(port))[0] == 200
        sockets = listening(st.pid)
        assert {p for _a, p in sockets} >= {settings.neo4j_port, port}
        assert {a for a, _p in sockets} <= LOOPBACK, sockets
    finally:
        local_server.stop(settings)


def test_http_port_zero_turns_the_browser_off(spare_settings):
    settings = replace(spare_settings, neo4j_http_port=0)
    st = local_server.start(settings, quiet=True)
    try:
        assert st.browser_url is None
        assert {p for _a, p in listening(st.pid)} == {settings.neo4j_port}
        status = _cli(settings, "neo4j", "status")
        assert status.returncode == 0 and "browser: -" in status.stdout, status.stdout + status.stderr
    finally:
        local_server.stop(settings)


def test_http_port_in_use_is_one_clear_error(spare_settings):
    port = spare_settings.neo4j_http_port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the last test's TIME_WAIT
        busy.bind(("127.0.0.1", port))
        busy.listen()
        with pytest.raises(ServerError, match=rf"port {port} on 127\.0\.0\.1 is already in use.*"
                                              r"SCHOLARGRAPH_NEO4J_HTTP_PORT.*or 0 to turn the Neo4j Browser off"):
            local_server.start(spare_settings, quiet=True)
        assert local_server.running_pid(spare_settings) is None
        started = _cli(spare_settings, "neo4j", "start")
    assert started.returncode != 0
    lines = started.stderr.strip().splitlines()
    assert len(lines) == 1 and "SCHOLARGRAPH_NEO4J_HTTP_PORT" in lines[0] and "Traceback" not in started.stderr
