"""Transactional ingest variants on one input: papers/s, deadlock retries, and a per-query profile.

Issue 17 ("the transactional path, faster where it is used"): do two writers deadlock on the cited
papers, and does writing citations differently (a second phase ordered by cited id, CALL {} IN
CONCURRENT TRANSACTIONS, rows sorted inside a batch) help? Each variant runs the real loader
(parse + normalise + batches) against the same throw-away server, emptied before each run.

    .venv/bin/python bench/ingest_tx.py --file /tmp/s100k.jsonl [--variants base:1,base:2,...]

Variants (NAME:WRITERS):
  base       Neo4jStore.write_rows as shipped (one transaction per batch, all queries).
  sorted     as base, but citation rows flattened to (citing, cited) pairs sorted by cited id, and
             stub ids sorted, so that concurrent batches take their locks in one order.
  twophase   phase 1: papers, aliases, venues, authors, authorships, published_in per batch;
             phase 2 after the whole input: citation pairs sorted by cited id, cut into chunks of
             --chunk pairs, the cited-id range split between the writers (each writer its own range).
  concurrent phase 1 as twophase plus the stubs in the batch's transaction; the batch's citations in
             one auto-commit `CALL (row) {...} IN CONCURRENT TRANSACTIONS OF --chunk ROWS`.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _server import bench_server  # noqa: E402

from scholargraph import cypher  # noqa: E402
from scholargraph.graph.neo4j_store import Neo4jStore  # noqa: E402
from scholargraph.graph.store import BatchRows, WriteCounts  # noqa: E402
from scholargraph.ingest.loader import ingest  # noqa: E402


class RetryCounter(logging.Handler):
    """Counts the driver's 'will be retried' warnings, by the error's code."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.counts: Counter = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if "retried" in msg:
            kind = "deadlock" if "Deadlock" in msg else ("lock" if "Lock" in msg else "other")
            self.counts[kind] += 1

    def reset(self) -> None:
        self.counts = Counter()


NODE_QUERIES = ("upsert_papers", "upsert_aliases", "upsert_venues", "upsert_authors", "upsert_authorships",
                "upsert_published_in")

PAIRS_STUBS = """
UNWIND $ids AS id
OPTIONAL MATCH (al:PaperAlias {id: id})
WITH coalesce(al.paperId, id) AS target
MERGE (b:Paper {id: target})
ON CREATE SET b.stub = true, b.sgNew = true
WITH b WHERE b.sgNew
REMOVE b.sgNew
RETURN count(b) AS stubsCreated
"""

PAIRS_CITES = """
UNWIND $pairs AS pair
MATCH (a:Paper {id: pair[0]})
OPTIONAL MATCH (al:PaperAlias {id: pair[1]})
MATCH (b:Paper {id: coalesce(al.paperId, pair[1])})
WITH a, b WHERE a <> b
MERGE (a)-[:CITES]->(b)
"""

CONCURRENT_CITES = """
UNWIND $pairs AS pair
CALL (pair) {
  MATCH (a:Paper {id: pair[0]})
  OPTIONAL MATCH (al:PaperAlias {id: pair[1]})
  MATCH (b:Paper {id: coalesce(al.paperId, pair[1])})
  WITH a, b WHERE a <> b
  MERGE (a)-[:CITES]->(b)
} IN CONCURRENT TRANSACTIONS OF $chunk ROWS ON ERROR CONTINUE REPORT STATUS AS s
WITH pair, s WHERE NOT s.committed
RETURN pair
"""


class Profile:
    def __init__(self):
        self.lock = threading.Lock()
        self.seconds: Counter = Counter()

    def add(self, name: str, s: float) -> None:
        with self.lock:
            self.seconds[name] += s


class VariantWriter:
    """A BundleWriter for the loader that writes one batch the way a variant says."""

    def __init__(self, store: Neo4jStore, variant: str, chunk: int, profile: Profile):
        self.store = store
        self.variant = variant
        self.chunk = chunk
        self.profile = profile
        self.q = {name: cypher.load(f"store/{name}") for name in NODE_QUERIES + ("upsert_cited_stubs",
                                                                               "upsert_citations")}
        self.pairs: list[tuple[str, str]] = []  # twophase: the citation pairs of phase 2
        self.pairs_lock = threading.Lock()
        self.failed_inner = 0  # concurrent: rows of inner transactions that failed (written again)

    def _run(self, tx, name: str, query: str, **params):
        t = time.perf_counter()
        result = list(tx.run(query, **params))
        self.profile.add(name, time.perf_counter() - t)
        return result

    def write_rows(self, rows: BatchRows) -> WriteCounts:
        t0 = time.perf_counter()
        pairs = [(r["citing"], c) for r in rows.citations for c in r["cited"]]
        self.profile.add("python rows", time.perf_counter() - t0)
        v = self.variant

        def work(tx) -> WriteCounts:
            counts = WriteCounts(papers=len(rows.papers), citations=len(pairs))
            for name, param in (("upsert_papers", rows.papers), ("upsert_aliases", rows.aliases),
                                ("upsert_venues", rows.venues), ("upsert_authors", rows.authors),
                                ("upsert_authorships", rows.authorships),
                                ("upsert_published_in", rows.published_in)):
                if param:
                    self._run(tx, name, self.q[name], rows=param)
            if v == "base" and rows.cited_ids:
                self._run(tx, "upsert_cited_stubs", self.q["upsert_cited_stubs"], ids=rows.cited_ids)
                self._run(tx, "upsert_citations", self.q["upsert_citations"], rows=rows.citations)
            elif v == "sorted" and pairs:
                self._run(tx, "upsert_cited_stubs", PAIRS_STUBS, ids=sorted(rows.cited_ids))
                self._run(tx, "upsert_citations", PAIRS_CITES, pairs=sorted(pairs, key=lambda p: (p[1], p[0])))
            elif v == "concurrent" and pairs:
                self._run(tx, "upsert_cited_stubs", PAIRS_STUBS, ids=sorted(rows.cited_ids))
            return counts

        def call():
            with self.store._session() as session:
                t = time.perf_counter()
                counts = session.execute_write(work)
                self.profile.add("batch tx total", time.perf_counter() - t)
                if v == "concurrent" and pairs:
                    t = time.perf_counter()
                    failed = [r["pair"] for r in session.run(
                        CONCURRENT_CITES, pairs=sorted(pairs, key=lambda p: (p[1], p[0])), chunk=self.chunk)]
                    self.profile.add("concurrent citations", time.perf_counter() - t)
                    if failed:  # 5.26 has no ON ERROR RETRY: an inner transaction that deadlocked, again
                        self.failed_inner += len(failed)
                        t = time.perf_counter()
                        session.execute_write(lambda tx: list(tx.run(PAIRS_CITES, pairs=failed)))
                        self.profile.add("concurrent failed rows again", time.perf_counter() - t)
                return counts

        counts = self.store._guard(call)
        if v == "twophase":
            with self.pairs_lock:
                self.pairs.extend(pairs)
        return counts

    def phase2(self, writers: int) -> None:
        """Citation pairs sorted by cited id; each writer owns a contiguous cited-id range."""
        pairs = sorted(self.pairs, key=lambda p: (p[1], p[0]))
        by_cited: dict[str, list] = defaultdict(list)
        for citing, cited in pairs:
            by_cited[cited].append(citing)
        cited_ids = list(by_cited)
        # Ranges of about equal pair counts, never splitting one cited id.
        bounds, acc, target = [0], 0, len(pairs) / writers
        for i, c in enumerate(cited_ids):
            acc += len(by_cited[c])
            if acc >= target * len(bounds) and len(bounds) < writers:
                bounds.append(i + 1)
        bounds.append(len(cited_ids))

        def run_range(lo: int, hi: int) -> None:
            ids = cited_ids[lo:hi]
            chunk: list[tuple[str, str]] = []
            chunk_ids: list[str] = []
            for c in ids:
                chunk_ids.append(c)
                chunk.extend((a, c) for a in by_cited[c])
                if len(chunk) >= self.chunk:
                    self._phase2_tx(chunk_ids, chunk)
                    chunk, chunk_ids = [], []
            if chunk:
                self._phase2_tx(chunk_ids, chunk)

        threads = [threading.Thread(target=run_range, args=(bounds[i], bounds[i + 1]))
                   for i in range(len(bounds) - 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _phase2_tx(self, ids: list[str], pairs: list) -> None:
        def work(tx):
            self._run(tx, "upsert_cited_stubs", PAIRS_STUBS, ids=ids)
            self._run(tx, "upsert_citations", PAIRS_CITES, pairs=pairs)

        def call():
            with self.store._session() as session:
                session.execute_write(work)
        self.store._guard(call)


def run_variant(store: Neo4jStore, path: str, variant: str, writers: int, batch_size: int, chunk: int,
                retries: RetryCounter, tmp: Path) -> dict:
    store.reset()
    retries.reset()
    profile = Profile()
    t0 = time.perf_counter()
    if variant == "shipped":
        summary = ingest(store, "aminer", [path], quarantine_path=tmp / "q.jsonl", checkpoint_dir=tmp / "ckpt",
                         batch_size=batch_size, restart=True, quiet=True, writers=writers)
        papers = summary.written
    else:
        writer = VariantWriter(store, variant, chunk, profile)
        summary = ingest(writer, "aminer", [path], quarantine_path=tmp / "q.jsonl", checkpoint_dir=tmp / "ckpt",
                         batch_size=batch_size, restart=True, quiet=True, writers=writers)
        papers = summary.written
        t1 = time.perf_counter()
        if variant == "twophase":
            writer.phase2(writers)
            profile.add("phase 2 wall", time.perf_counter() - t1)
            profile.add("phase 1 wall", t1 - t0)
    wall = time.perf_counter() - t0
    failed = writer.failed_inner if variant == "concurrent" else 0
    stats = store.stats()
    return {"variant": variant, "writers": writers, "wall": wall, "papers_s": papers / wall, "failed": failed,
            "retries": dict(retries.counts), "profile": dict(profile.seconds),
            "cites": stats["relationships"].get("CITES", 0), "papers": stats["nodes"].get("Paper", 0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default="/tmp/s100k.jsonl")
    ap.add_argument("--variants", default="base:1,base:2")
    ap.add_argument("--batch-size", type=int, default=2000)
    ap.add_argument("--chunk", type=int, default=10000, help="pairs per phase-2 / concurrent inner transaction")
    ap.add_argument("--port", type=int, default=17850)
    ap.add_argument("--warmup", default="", help="a small file ingested once first (JIT, page cache), not reported")
    args = ap.parse_args()

    retries = RetryCounter()
    logging.getLogger("neo4j").addHandler(retries)
    tmp = Path(tempfile.mkdtemp(prefix="sg-bench-tx-"))
    results = []
    with bench_server(args.port) as settings:
        with Neo4jStore(settings.uri, settings.neo4j_user, settings.password,
                        settings.neo4j_database) as store:
            store.apply_schema()
            if args.warmup:
                run_variant(store, args.warmup, "base", 1, args.batch_size, args.chunk, retries, tmp)
            for spec in args.variants.split(","):
                name, w = spec.split(":")
                r = run_variant(store, args.file, name, int(w), args.batch_size, args.chunk, retries, tmp)
                results.append(r)
                base = results[0]["papers_s"]
                prof = ", ".join(f"{k} {v:.1f}s" for k, v in sorted(r["profile"].items(), key=lambda kv: -kv[1]))
                print(f"{name:10s} writers={w}: {r['wall']:6.1f}s {r['papers_s']:7,.0f} papers/s "
                      f"ratio {r['papers_s'] / base:.2f} retries {r['retries']} "
                      f"[{r['papers']:,} papers, {r['cites']:,} CITES]"
                      + (f" inner rows that failed and were written again: {r['failed']:,}" if r["failed"] else "")
                      + f"\n    {prof}", flush=True)
            store.reset()


if __name__ == "__main__":
    main()
