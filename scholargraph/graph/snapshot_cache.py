"""Query-independent work kept on disk per graph state: the graph's watermark, and a cache directory of entries
keyed by it, so that interactive commands on an unchanged graph load what they built instead of building it."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.store import GraphStore

T = TypeVar("T")

# What a snapshot reads, in counts (the features fingerprint counts the same).
SNAPSHOT_NODES = ("Paper", "Author", "Venue")
SNAPSHOT_RELATIONSHIPS = ("CITES", "AUTHORED", "PUBLISHED_IN")
COMPLETE = "complete"  # written last in an entry: an entry without it is unfinished and ignored


def cache_root(models_dir: Path) -> Path:
    """`models_dir/cache`: what interactive commands keep per graph state (snapshots/, evidence/, ...)."""
    return Path(models_dir) / "cache"


def snapshot_counts(stats: dict) -> dict:
    """The counts of `store.stats()` that a snapshot reads: score edges and runs written by the commands
    themselves do not change a snapshot, so they do not count."""
    return {"nodes": {k: stats["nodes"].get(k, 0) for k in SNAPSHOT_NODES},
            "relationships": {k: stats["relationships"].get(k, 0) for k in SNAPSHOT_RELATIONSHIPS},
            "stubs": stats["stubs"]}


def graph_watermark(store: GraphStore) -> dict:
    """What tells one state of the graph from the next, read in a few index lookups: the counts a snapshot
    reads, the latest `Paper.ingestedAt` (it moves when a paper is ingested or really changes, which no
    count shows) and the last `features` run (it rewrites the stored vectors and topics)."""
    last = store.last_run("features") or {}
    return {**snapshot_counts(store.stats()), "last_change": store.last_change(), "features": last.get("id")}


def texts_digest(snapshot: GraphSnapshot) -> str:
    """SHA-256 of the snapshot's paper texts in order (`snapshot.text(i)`): the key of what is computed from
    the texts alone (topic mixtures, a lexical index), which no other change of the graph moves. Hashing is
    about 50 ms per 100k papers."""
    digest = hashlib.sha256()
    for i in range(snapshot.n_papers):
        digest.update(snapshot.text(i).encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


class StateCache:
    """Entries under `directory`, one per key (a JSON-able description of the graph state and of what was
    built from it), the newest `keep` of them kept. An entry is written under a temporary name and renamed
    into place, so a crash or a second process never leaves a half-written one; a full disk or a read-only
    home only means the next call builds again."""

    def __init__(self, directory: Path, keep: int = 2):
        self.directory = Path(directory)
        self.keep = keep

    def entry(self, key: dict) -> Path:
        digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:20]
        return self.directory / digest

    def get(self, key: dict, build: Callable[[], T], save: Callable[[T, Path], object],
            load: Callable[[Path], T]) -> T:
        """`load(entry)` when the entry of `key` is complete and loads (ValueError or OSError: broken, rebuilt),
        else `build()`, saved with `save(value, dir)` for the next call."""
        path = self.entry(key)
        if (path / COMPLETE).is_file():
            try:
                return load(path)
            except (ValueError, OSError):
                pass
        value = build()
        self._store(value, path, save)
        return value

    def _store(self, value, path: Path, save) -> None:
        tmp: Path | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=self.directory, prefix=".building-"))
            save(value, tmp)
            (tmp / COMPLETE).write_text("1\n", encoding="utf-8")
            shutil.rmtree(path, ignore_errors=True)  # a broken entry of the same key
            tmp.rename(path)
            tmp = None
            entries = sorted((p for p in self.directory.iterdir() if p.is_dir() and not p.name.startswith(".")),
                             key=lambda p: p.stat().st_mtime, reverse=True)
            for old in entries[self.keep:]:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass  # no room, or another process renamed the same entry first
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)


def cached_snapshot(store: GraphStore, models_dir: Path | None, *, with_text: bool = False, quiet: bool = True,
                    with_vectors: bool = False, semantic_encoder: str | None = None) -> GraphSnapshot:
    """`GraphSnapshot.from_store(...)` of the graph as it is now, loaded from `models_dir/cache/snapshots/`
    when it was pulled at this watermark with these options before (None: always pulled)."""
    def pull() -> GraphSnapshot:
        return GraphSnapshot.from_store(store, with_text=with_text, quiet=quiet, with_vectors=with_vectors,
                                        semantic_encoder=semantic_encoder)

    if models_dir is None:
        return pull()
    key = {"graph": graph_watermark(store), "with_text": with_text, "with_vectors": with_vectors,
           "semantic_encoder": semantic_encoder}
    return StateCache(cache_root(models_dir) / "snapshots").get(key, pull, lambda snap, path: snap.save(path),
                                                              GraphSnapshot.load)
