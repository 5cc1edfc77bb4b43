"""Open the store a command should use: the configured server, or the managed local one."""

from __future__ import annotations

from scholargraph.config import Settings
from scholargraph.graph.neo4j_store import Neo4jStore
from scholargraph.server import local_server


def open_store(settings: Settings, quiet: bool = True) -> Neo4jStore:
    """SCHOLARGRAPH_NEO4J_URI when set; otherwise start (or reuse) the managed server first."""
    uri = local_server.ensure_running(settings, quiet=quiet)
    return Neo4jStore(uri, user=settings.neo4j_user, password=settings.password,
                      database=settings.neo4j_database)
