"""The graph's watermark and the per-state cache of interactive commands, on InMemoryStore."""

from __future__ import annotations

import numpy as np
import pytest

from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.snapshot_cache import StateCache, cache_root, cached_snapshot, graph_watermark
from tests.store_contract import bundle, small_graph


@pytest.fixture
def pulls(monkeypatch):
    calls = []
    real = GraphSnapshot.from_store.__func__
    monkeypatch.setattr(GraphSnapshot, "from_store",
                        classmethod(lambda cls, *a, **kw: calls.append(kw) or real(cls, *a, **kw)))
    return calls


def test_a_snapshot_is_pulled_once_per_graph_state(tmp_path, pulls):
    store = InMemoryStore()
    small_graph(store)
    first = cached_snapshot(store, tmp_path, with_text=True)
    again = cached_snapshot(store, tmp_path, with_text=True)
    assert len(pulls) == 1 and again.paper_ids == first.paper_ids and again.titles == first.titles
    assert (again.citations != first.citations).nnz == 0
    cached_snapshot(store, tmp_path, with_text=False)  # other options: an entry of their own
    assert len(pulls) == 2

    # Score edges and runs written by the commands themselves leave the graph's state as it was.
    store.record_run("r1", {"job": "reviewers", "status": "running"})
    store.write_scores("SUGGESTED_REVIEWER", [{"source": "a:1", "target": "p1", "props": {"score": 1.0}}], "r1")
    cached_snapshot(store, tmp_path, with_text=True)
    assert len(pulls) == 2

    store.write_bundles([bundle("p3", "s:3", year=2002, title="Third, revised")])  # a paper really changed
    changed = cached_snapshot(store, tmp_path, with_text=True)
    assert len(pulls) == 3 and changed.titles[changed.paper_index["p3"]] == "Third, revised"
    assert cached_snapshot(store, None, with_text=True).paper_ids == changed.paper_ids and len(pulls) == 4


def test_the_watermark_moves_with_the_graph_and_the_features_run():
    store = InMemoryStore()
    small_graph(store)
    before = graph_watermark(store)
    assert graph_watermark(store) == before
    store.record_run("features-1", {"job": "features", "status": "succeeded"})
    after = graph_watermark(store)
    assert after != before and after["features"] == "features-1"


def test_only_the_newest_entries_stay_and_a_broken_one_is_rebuilt(tmp_path):
    cache = StateCache(tmp_path / "c", keep=2)

    def save(value, path):
        np.save(path / "v.npy", value)

    def load(path):
        try:
            return np.load(path / "v.npy")
        except (OSError, ValueError) as exc:
            raise ValueError(str(exc)) from None

    built = []
    for k in range(3):
        cache.get({"k": k}, lambda k=k: built.append(k) or np.array([k]), save, load)
    assert built == [0, 1, 2] and len([p for p in (tmp_path / "c").iterdir()]) == 2
    assert cache.get({"k": 2}, lambda: built.append("again") or np.array([9]), save, load).tolist() == [2]
    (cache.entry({"k": 2}) / "v.npy").write_bytes(b"broken")
    assert cache.get({"k": 2}, lambda: np.array([7]), save, load).tolist() == [7]  # rebuilt, not crashed
    assert cache.get({"k": 2}, lambda: np.array([8]), save, load).tolist() == [7]  # and kept
    assert cache_root(tmp_path) == tmp_path / "cache"
