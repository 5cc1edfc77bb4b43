"""The GraphStore contract on Neo4jStore (the `store` fixture: an empty database on the test server)."""

from __future__ import annotations

from tests.store_contract import StoreContract


class TestNeo4jStore(StoreContract):
    pass
