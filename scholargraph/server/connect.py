"""Open the store a command should use: the configured server, or the managed local one."""

from __future__ import annotations

from scholargraph.config import Settings
from scholargraph.graph.neo4j_store import Neo4jStore
from scholargraph.server import local_server


def open_store(settings: Settings, quiet: bool = True) -> Neo4jStore:
    """SCHOLARGRAPH_NEO4J_URI when set; otherwise start (or reuse) the managed server first, and finish a
    bulk load whose last steps its `ingest --bulk` did not get to (finish_import)."""
    uri = local_server.ensure_running(settings, quiet=quiet)
    store = Neo4jStore(uri, user=settings.neo4j_user, password=settings.password,
                       database=settings.neo4j_database)
    if settings.managed:
        try:
            finish_import(settings, store)
        except BaseException:
            store.close()
            raise
    return store


def finish_import(settings: Settings, store: Neo4jStore) -> bool:
    """The steps after a finished offline import (server/admin_import.py) when they are still to do: empty
    `sources` filled, the schema created (Community refuses it during an import), the id migration recorded.
    Its `ingest --bulk` does them at once; when Neo4j did not come back after the import, or that command was
    killed then, the next command that opens the database does (each step is idempotent). True when done here."""
    state = local_server.import_state(settings)
    if state is None or state.get("phase") != "imported":
        return False
    after = state.get("after") if isinstance(state.get("after"), dict) else {}
    if after.get("fill_empty_sources"):
        store.fill_empty_sources()
    store.apply_schema()
    if not store.ids_migrated():
        store.migrate_ids()  # finds nothing in a fresh import: records that the migration is not needed
    local_server.clear_import_state(settings)
    return True
