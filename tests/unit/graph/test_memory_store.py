"""The GraphStore contract on InMemoryStore (the same tests run on Neo4j in tests/integration/graph)."""

from __future__ import annotations

import pytest

from scholargraph.graph.memory_store import InMemoryStore
from tests.store_contract import StoreContract


@pytest.fixture
def store():
    return InMemoryStore()


class TestInMemoryStore(StoreContract):
    def test_an_unknown_named_read_is_refused(self, store):
        with pytest.raises(ValueError):
            list(store.pages("store/dump_nodes"))
        with pytest.raises(ValueError):
            store.write_scores("CITES", [], "r1")
