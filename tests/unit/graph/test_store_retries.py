"""How the store retries a managed transaction: a transient error (a deadlock, a lost connection to a server that
still listens) is tried again, as the driver would; a server that refuses connections is said at once instead of
after 30 seconds of retries. The session stands in for the driver's (which would need a server to fail); the
stopped-server paths end to end are the fault tests' (tests/integration/test_faults_server.py)."""

from __future__ import annotations

import socket

import pytest
from neo4j import exceptions as neo4j_errors

from scholargraph.graph import neo4j_store
from scholargraph.graph.neo4j_store import Neo4jStore


class ScriptedSession:
    """Raises the scripted errors in turn, then returns "done"; counts the attempts."""

    def __init__(self, *errors: Exception):
        self.errors = list(errors)
        self.attempts = 0

    def execute_write(self, work, *args):
        self.attempts += 1
        if self.errors:
            raise self.errors.pop(0)
        return work(None, *args)


def _store(uri: str) -> Neo4jStore:
    store = Neo4jStore.__new__(Neo4jStore)  # no driver: _transaction only reads the URI
    store.uri = uri
    return store


@pytest.fixture
def no_sleep(monkeypatch):
    slept = []
    monkeypatch.setattr(neo4j_store.time, "sleep", slept.append)
    return slept


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: connections to it are refused


@pytest.fixture
def listening_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_a_server_that_refuses_connections_is_said_at_once(closed_port, no_sleep):
    session = ScriptedSession(neo4j_errors.ServiceUnavailable("connection refused"))
    with pytest.raises(neo4j_errors.ServiceUnavailable):
        _store(f"bolt://127.0.0.1:{closed_port}")._transaction(session, True, lambda tx: "done")
    assert session.attempts == 1 and no_sleep == []


def test_a_lost_connection_to_a_listening_server_and_a_deadlock_are_tried_again(listening_port, no_sleep):
    session = ScriptedSession(neo4j_errors.ServiceUnavailable("connection reset"),
                              neo4j_errors.TransientError("deadlock"))
    assert _store(f"bolt://127.0.0.1:{listening_port}")._transaction(session, True, lambda tx: "done") == "done"
    assert session.attempts == 3 and len(no_sleep) == 2 and no_sleep[1] > no_sleep[0]


def test_a_routing_uri_is_tried_again_even_when_one_member_refuses(closed_port, no_sleep):
    session = ScriptedSession(neo4j_errors.ServiceUnavailable("connection refused"))
    assert _store(f"neo4j://127.0.0.1:{closed_port}")._transaction(session, True, lambda tx: "done") == "done"
    assert session.attempts == 2


def test_retries_end_after_their_time_and_other_errors_are_not_retried(listening_port, monkeypatch, no_sleep):
    clock = iter(range(0, 1000, 10))  # each look at the clock is 10 s later
    monkeypatch.setattr(neo4j_store.time, "monotonic", lambda: float(next(clock)))
    session = ScriptedSession(*[neo4j_errors.TransientError("deadlock")] * 10)
    with pytest.raises(neo4j_errors.TransientError):
        _store(f"bolt://127.0.0.1:{listening_port}")._transaction(session, True, lambda tx: "done")
    assert session.attempts == 4  # at 0 s (the deadline set to 30 s), 10 s, 20 s, then 30 s: no more
    session = ScriptedSession(neo4j_errors.ClientError("bad query"))
    with pytest.raises(neo4j_errors.ClientError):
        _store(f"bolt://127.0.0.1:{listening_port}")._transaction(session, True, lambda tx: "done")
    assert session.attempts == 1
