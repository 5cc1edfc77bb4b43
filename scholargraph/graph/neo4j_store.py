"""The only module that imports `neo4j`: batched idempotent writes, streaming reads, write-back."""

from __future__ import annotations

import itertools
import json
import logging
import random
import socket
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

import neo4j
import numpy as np
from neo4j import GraphDatabase
from neo4j import exceptions as neo4j_errors

from scholargraph import cypher
from scholargraph.errors import StoreError, StoreUnavailable
from scholargraph.graph.records import PaperBundle, fold_id
from scholargraph.graph.store import (
    DERIVED_EDGE_TYPES,
    EDGE_TYPES,
    ID_CEILING,
    ID_KINDS,
    NODE_LABELS,
    SCORE_EDGE_TYPES,
    BatchRows,
    WriteCounts,
    check_name,
    plain_value,
    to_camel,
)

# Ids with whitespace (graphs ingested before ids were made whitespace-free), as a Java regex: `(?U)` makes
# \s Unicode's White_Space; \x1c-\x1f are the separators Python's str.isspace() also counts, so that
# the store finds exactly the ids records.fold_id changes.
WHITESPACE_ID_PATTERN = r"(?sU).*[\s\x1c-\x1f].*"
WHITESPACE_ID_MIGRATION = "whitespace-free-ids"

# The driver logs each retried transient error (a deadlock between two writers, say) as a warning;
# retries are expected here, and a failure after the retries still raises.
logging.getLogger("neo4j").addHandler(logging.NullHandler())


# A managed transaction is tried again on a transient error (a deadlock between two writers, a lost connection)
# for this long, as the driver would; a server that refuses connections is not waited for (see _transaction).
RETRY_SECONDS = 30.0
FIRST_RETRY_DELAY = 1.0


def _refuses_connections(uri: str) -> bool:
    """True when the server of a direct (bolt://) URI refuses a TCP connection: it is not running, and no retry
    will reach it. A routing URI (neo4j://) has other members to try, and a timeout may be a slow network:
    neither counts."""
    parts = urlsplit(uri)
    if not parts.scheme.startswith("bolt") or not parts.hostname:
        return False
    try:
        with socket.create_connection((parts.hostname, parts.port or 7687), timeout=2.0):
            return False
    except ConnectionRefusedError:
        return True
    except (OSError, ValueError):
        return False


def _describe(exc: BaseException) -> str:
    if isinstance(exc, neo4j_errors.AuthError):
        return "authentication failed (check SCHOLARGRAPH_NEO4J_USER / SCHOLARGRAPH_NEO4J_PASSWORD)"
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return " ".join(str(message).split())[:300]


class Neo4jStore:
    """A connection to one Neo4j database. Use as a context manager, or call close()."""

    def __init__(self, uri: str, user: str = "neo4j", password: str | None = None,
                 database: str | None = None, connection_timeout: float = 5.0):
        self.uri = uri
        self.database = database
        auth = (user, password) if password else None
        driver = None
        try:
            driver = GraphDatabase.driver(uri, auth=auth, connection_timeout=connection_timeout,
                                          # one attempt each: _transaction retries, knowing a stopped server
                                          max_transaction_retry_time=0.0,
                                          # Server notices (unknown labels on an empty graph,
                                          # deprecations) are not the user's concern.
                                          notifications_min_severity="OFF")
            driver.verify_connectivity()
        except (neo4j_errors.DriverError, neo4j_errors.Neo4jError, OSError, ValueError) as exc:
            if driver is not None:
                driver.close()  # one that never connected (wrong password, say) still holds its pool
            raise StoreUnavailable(f"cannot reach Neo4j at {uri}: {_describe(exc)}") from None
        self._driver = driver

    # --- plumbing -------------------------------------------------------------------------

    def close(self) -> None:
        self._driver.close()

    def __enter__(self) -> Neo4jStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _session(self, **kwargs) -> neo4j.Session:
        return self._driver.session(database=self.database, **kwargs)

    def _transaction(self, session: neo4j.Session, write: bool, work, *args):
        """`work` in one managed transaction, tried again on a retryable error with the driver's backoff for up to
        RETRY_SECONDS, except when the server refuses connections: a stopped server is said at once, not after
        half a minute of retries (and each later write of the failing command would wait as long again)."""
        execute = session.execute_write if write else session.execute_read
        deadline = None
        delay = FIRST_RETRY_DELAY
        while True:
            try:
                return execute(work, *args)
            except (neo4j_errors.DriverError, neo4j_errors.Neo4jError) as exc:
                if not exc.is_retryable():
                    raise
                if isinstance(exc, neo4j_errors.ServiceUnavailable | neo4j_errors.SessionExpired) \
                        and _refuses_connections(self.uri):
                    raise
                now = time.monotonic()
                deadline = deadline or now + RETRY_SECONDS
                if now >= deadline:
                    raise
                time.sleep(min(delay * random.uniform(0.8, 1.2), deadline - now))
                delay *= 2

    def _guard(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, neo4j_errors.AuthError,
                neo4j_errors.Forbidden, OSError) as exc:
            raise StoreUnavailable(f"cannot reach Neo4j at {self.uri}: {_describe(exc)}") from None
        except neo4j_errors.Neo4jError as exc:
            raise StoreError(f"Neo4j refused a query: {_describe(exc)}") from None

    def run_write(self, query_name: str, /, **params) -> list[dict]:
        """Run the named query in a managed write transaction (retried on transient errors)."""
        query = cypher.load(query_name)

        def work(tx):
            return [r.data() for r in tx.run(query, **params)]

        def call():
            with self._session() as session:
                return self._transaction(session, True, work)
        return self._guard(call)

    def run_read(self, query_name: str, /, **params) -> list[dict]:
        query = cypher.load(query_name)

        def work(tx):
            return [r.data() for r in tx.run(query, **params)]

        def call():
            with self._session() as session:
                return self._transaction(session, False, work)
        return self._guard(call)

    def run_autocommit(self, query_name: str, /, **params) -> list[dict]:
        """For `CALL { ... } IN TRANSACTIONS`, which needs an implicit transaction."""
        query = cypher.load(query_name)

        def call():
            with self._session() as session:
                return [r.data() for r in session.run(query, **params)]
        return self._guard(call)

    def stream(self, query_name: str, /, fetch_size: int = 10_000, **params) -> Iterator[neo4j.Record]:
        """Records of a read query as they arrive, without holding the whole result."""
        query = cypher.load(query_name)
        try:
            with self._session(fetch_size=fetch_size, default_access_mode=neo4j.READ_ACCESS) as session:
                result = session.run(query, **params)
                yield from result
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, OSError) as exc:
            raise StoreUnavailable(f"cannot reach Neo4j at {self.uri}: {_describe(exc)}") from None

    def pages(self, query_name: str, /, page_size: int = 20_000, start: str = "", until: str | None = None,
              **params) -> Iterator[list]:
        """Rows of a keyset-paged read (`$after`, `$until`, `$limit` in; one record `rows`, `last` out), page
        by page: each page is one query and one Bolt record, so moving 10M rows costs a few hundred
        round trips instead of millions of per-record decodes. Both bounds are index range seeks."""
        query = cypher.load(query_name)
        ceiling = ID_CEILING if until is None else until

        def work(tx, after: str) -> tuple[list, str | None]:
            record = tx.run(query, after=after, until=ceiling, limit=page_size, **params).single()
            return record["rows"], record["last"]  # plain lists: no Record.data() walk over them

        def call(after: str):
            with self._session(default_access_mode=neo4j.READ_ACCESS) as session:
                return self._transaction(session, False, work, after)

        after = start
        while True:
            rows, last = self._guard(call, after)
            if last is None:
                return
            yield rows
            after = last

    def id_boundaries(self, label: str, parts: int) -> list[str]:
        check_name(label, ("Paper", "Author"))
        name = f"store/id_at_rank_{label.lower()}"
        n = self.run_read(f"store/count_{label.lower()}")[0]["n"]
        step = -(-n // max(1, parts))
        out: list[str] = []
        for skip in range(step - 1, n - 1, step) if parts > 1 and n > 1 else ():
            rows = self.run_read(name, skip=skip)
            if rows and (not out or rows[0]["id"] > out[-1]):
                out.append(rows[0]["id"])
        return out

    # --- schema and housekeeping -------------------------------------------------------------

    def apply_schema(self) -> int:
        """Create the constraints and indexes (idempotent); returns the number of statements run."""
        statements = cypher.statements("schema")

        self._guard(self._run_schema, statements)
        return len(statements)

    def _run_schema(self, statements: Sequence[str]) -> None:
        """Schema statements (each CREATE ... IF NOT EXISTS), each in a managed transaction: two commands that
        create the schema at once (two ingests into a new database) deadlock on its label locks, a transient
        error that the driver retries (an auto-commit statement would fail with it), or both pass the existence
        check and the later one finds the other's equivalent index: done, as IF NOT EXISTS means."""
        def run(tx, statement: str) -> None:
            tx.run(statement).consume()

        with self._session() as session:
            for statement in statements:
                try:
                    self._transaction(session, True, run, statement)
                except neo4j_errors.ClientError as exc:
                    if exc.code != "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists":
                        raise
            session.run("CALL db.awaitIndexes(300)").consume()

    def schema_names(self) -> dict[str, list[str]]:
        def call():
            with self._session() as session:
                constraints = [r["name"] for r in session.run("SHOW CONSTRAINTS YIELD name")]
                indexes = [r["name"] for r in session.run("SHOW INDEXES YIELD name")]
                return {"constraints": sorted(constraints), "indexes": sorted(indexes)}
        return self._guard(call)

    def stats(self) -> dict[str, dict[str, int]]:
        labels = {r["label"]: r["n"] for r in self.run_read("store/stats_labels")}
        rels = {r["type"]: r["n"] for r in self.run_read("store/stats_relationships")}
        stubs = self.run_read("store/stats_stubs")[0]["stubs"]
        return {"nodes": labels, "relationships": rels, "stubs": {"Paper": stubs}}

    def has_data(self) -> bool:
        """Whether any node other than a migration marker exists."""
        return bool(self.run_read("store/has_data")[0]["hasData"])

    def fill_empty_sources(self) -> None:
        """Give `sources = []` to the authors and ingested papers a bulk import left without it."""
        self.run_autocommit("store/fill_empty_sources")

    def dump_lines(self, volatile: Sequence[str] = ("ingestedAt", "ranAt")) -> Iterator[str]:
        """The graph as JSON lines, streamed in no particular order: a node is [labels, properties], a
        relationship [type, start labels, start id, end labels, end id, properties], so no internal id shows
        and, once sorted, two loads of the same inputs give the same lines. A `volatile` property (a load or
        migration timestamp) shows only whether it is set."""
        def clean(props: dict) -> dict:
            return {k: ("<set>" if k in volatile else v) for k, v in props.items()}

        for r in self.stream("store/dump_nodes"):
            yield json.dumps(["node", sorted(r["labels"]), clean(r["props"])], sort_keys=True, default=str)
        for r in self.stream("store/dump_relationships"):
            yield json.dumps(["rel", r["type"], sorted(r["startLabels"]), r["startId"], sorted(r["endLabels"]),
                              r["endId"], clean(r["props"])], sort_keys=True, default=str)

    def reset(self) -> None:
        """Delete every relationship, then every node, in bounded transactions."""
        self.run_autocommit("store/reset_relationships")
        self.run_autocommit("store/reset_nodes")

    # --- migrations -----------------------------------------------------------------------------

    def ids_migrated(self) -> bool:
        """Whether the whitespace-free id migration has run on this database."""
        return bool(self.run_read("store/migration_done", id=WHITESPACE_ID_MIGRATION)[0]["done"])

    def migrate_ids(self, batch_size: int = 2000) -> dict[str, int]:
        """Rename every id with whitespace (Author, Venue and Paper ids, a paper's venue and source ids,
        paper aliases) to its whitespace-free form (records.fold_id: 'name:ann lee' -> 'name:ann_lee'), in
        batches. The old id still resolves: an author's or venue's old id joins its `sources`, a paper's
        becomes a (:PaperAlias {legacy: true}). A node whose new id exists already is folded into that node.
        Idempotent: a second run finds nothing and changes nothing. Returns what it changed, per label."""
        counts = {"Author": 0, "Venue": 0, "Paper": 0, "PaperAlias": 0, "folded": 0}
        for label, find in (("Author", "author"), ("Venue", "venue"), ("Paper", "paper"),
                            ("PaperAlias", "paper_alias")):
            after = ""
            while True:
                found = self.run_read(f"store/migrate_find_{find}", after=after, limit=batch_size,
                                      pattern=WHITESPACE_ID_PATTERN)
                if not found:
                    break
                after = found[-1]["id"]
                if label == "Paper":
                    rows = [{"old": r["id"], "new": fold_id(r["id"]),
                             "venueId": fold_id(r["venueId"]) if r["venueId"] else r["venueId"],
                             "sources": list(dict.fromkeys(fold_id(s) for s in r["sources"]))} for r in found]
                else:
                    rows = [{"old": r["id"], "new": fold_id(r["id"])} for r in found]
                counts[label] += len(rows)
                counts["folded"] += self._migrate_rows(label, find, rows)
        if not self.ids_migrated():
            self.run_write("store/migration_record", id=WHITESPACE_ID_MIGRATION,
                           counts=[f"{k}={v}" for k, v in counts.items()])
        return counts

    def _migrate_rows(self, label: str, find: str, rows: list[dict]) -> int:
        """One batch of renames; returns the nodes folded into an existing node. Two old ids with one new id
        (`a b`, `a  b`) go in separate transactions, so that the second sees the first one's rename."""
        folded = 0
        while rows:
            seen: set[str] = set()
            now: list[dict] = []
            later: list[dict] = []
            for row in rows:
                (later if row["new"] in seen else now).append(row)
                seen.add(row["new"])
            result = self.run_write(f"store/migrate_rename_{find}", rows=now)
            if label == "Paper":
                taken = set(result[0]["taken"]) if result else set()
                merge = [{"alias": r["old"], "id": r["new"]} for r in now if r["old"] in taken]
                if merge:  # the old node folds into the one that has its new id (citations, authorships)
                    self.run_write("store/upsert_aliases", rows=merge)
                folded += len(merge)
            elif label in ("Author", "Venue"):
                folded += int(result[0]["folded"]) if result else 0
            rows = later
        return folded

    def lookup_ids(self, kind: str, forms: dict[str, list[str]] | Any) -> dict[str, list[str]]:
        """For each given id, the node ids of `kind` ('paper', 'author', 'topic', 'venue') that one of its
        forms names: a node's own id, a paper alias, an author's or venue's source (or pre-migration) id.
        The store side of graph.ids.IdResolver; givens naming nothing are absent."""
        check_name(kind, ID_KINDS)
        rows = [{"given": g, "forms": list(f)} for g, f in forms.items()]
        if not rows:
            return {}
        found = {r["given"]: list(r["ids"]) for r in self.run_read(f"store/lookup_ids_{kind}", rows=rows) if r["ids"]}
        if kind == "author":
            missing = {r["given"]: r["forms"] for r in rows if r["given"] not in found}
            wanted = sorted({f for fs in missing.values() for f in fs})
            if wanted:
                by_form: dict[str, set[str]] = {}
                for r in self.run_read("store/lookup_author_sources", forms=wanted):
                    for s in r["matched"]:
                        by_form.setdefault(s, set()).add(r["id"])
                for g, fs in missing.items():
                    ids = set().union(*(by_form.get(f, set()) for f in fs))
                    if ids:
                        found[g] = sorted(ids)
        return found

    # --- batched upserts ------------------------------------------------------------------------

    def write_bundles(self, bundles: Sequence[PaperBundle]) -> WriteCounts:
        """Upsert a batch of paper bundles in one transaction; idempotent; returns what changed."""
        return self.write_rows(BatchRows.from_bundles(bundles))

    def write_rows(self, rows: BatchRows) -> WriteCounts:
        """write_bundles for a batch already flattened (the loader's parse workers flatten it)."""
        q = {name: cypher.load(f"store/{name}") for name in (
            "upsert_papers", "upsert_aliases", "upsert_venues", "upsert_authors", "upsert_authorships",
            "upsert_published_in", "upsert_cited_stubs", "upsert_citations")}

        def work(tx) -> WriteCounts:
            counts = rows.counts()
            if rows.papers:
                rec = tx.run(q["upsert_papers"], rows=rows.papers).single()
                counts.papers_created = rec["created"] or 0
                counts.stubs_filled = rec["stubsFilled"] or 0
                counts.merged = rec["merged"] or 0
            if rows.aliases:
                tx.run(q["upsert_aliases"], rows=rows.aliases).consume()
            if rows.venues:
                tx.run(q["upsert_venues"], rows=rows.venues).consume()
            if rows.authors:
                tx.run(q["upsert_authors"], rows=rows.authors).consume()
            if rows.authorships:
                tx.run(q["upsert_authorships"], rows=rows.authorships).consume()
            if rows.published_in:
                tx.run(q["upsert_published_in"], rows=rows.published_in).consume()
            if rows.cited_ids:
                rec = tx.run(q["upsert_cited_stubs"], ids=rows.cited_ids).single()
                counts.stubs_created = (rec["stubsCreated"] if rec else 0) or 0
                tx.run(q["upsert_citations"], rows=rows.citations).consume()
            return counts

        def call():
            with self._session() as session:
                return self._transaction(session, True, work)
        return self._guard(call)

    # --- snapshot reads -------------------------------------------------------------------------

    def read_nodes(self, label: str, props: Sequence[str] = ()) -> tuple[list[str], dict[str, list[Any]]]:
        """All nodes of `label`: their ids (in a stable order) and the requested properties (snake_case)."""
        check_name(label, NODE_LABELS)
        camel = [to_camel(p) for p in props]
        ids: list[str] = []
        values: dict[str, list[Any]] = {p: [] for p in props}
        for record in self.stream(f"store/read_nodes_{label.lower()}", props=camel):
            ids.append(record["id"])
            for p, v in zip(props, record["values"]):
                values[p].append(v)
        return ids, values

    def read_edges(self, rel_type: str, weight: str | None = None
                   ) -> tuple[list[str], list[str], np.ndarray]:
        """All relationships of `rel_type` as parallel (source ids, target ids, weights) arrays."""
        check_name(rel_type, EDGE_TYPES)
        sources: list[str] = []
        targets: list[str] = []
        weights: list[float] = []
        for record in self.stream(f"store/read_edges_{rel_type.lower()}", weight=to_camel(weight or "weight")):
            sources.append(record["source"])
            targets.append(record["target"])
            w = record["weight"]
            weights.append(1.0 if w is None else float(w))
        return sources, targets, np.asarray(weights, dtype=np.float64)

    # --- write-back -------------------------------------------------------------------------------

    def write_node_properties(self, label: str, ids: Sequence[str], props: dict[str, Sequence[Any] | np.ndarray],
                              batch_size: int = 10_000) -> int:
        """Set properties (snake_case names, one sequence per property, aligned with `ids`); idempotent."""
        check_name(label, NODE_LABELS)
        names = list(props)
        for name in names:
            if len(props[name]) != len(ids):
                raise ValueError(f"property {name!r} has {len(props[name])} values for {len(ids)} ids")
        query = f"store/write_properties_{label.lower()}"
        written = 0
        for start in range(0, len(ids), batch_size):
            rows = []
            for i in range(start, min(start + batch_size, len(ids))):
                rows.append({"id": ids[i], "props": {to_camel(n): plain_value(props[n][i]) for n in names}})
            self.run_write(query, rows=rows)
            written += len(rows)
        return written


    def write_edges(self, rel_type: str, rows: Iterable[dict], version: str, batch_size: int = 20_000) -> int:
        """Materialise derived edges {source, target, weight} of one type; idempotent. Returns rows written."""
        check_name(rel_type, DERIVED_EDGE_TYPES)
        plain = ({k: plain_value(v) for k, v in row.items()} for row in rows)
        return self._write_in_batches(f"store/write_{rel_type.lower()}", plain, batch_size, version=version)

    def _write_in_batches(self, query_name: str, rows: Iterable[dict], batch_size: int, **params) -> int:
        """Stream `rows` into `query_name` (an `UNWIND $rows` write), one transaction per batch."""
        written = 0
        iterator = iter(rows)
        while batch := list(itertools.islice(iterator, batch_size)):
            self.run_write(query_name, rows=batch, **params)
            written += len(batch)
        return written

    def delete_stale_edges(self, rel_type: str, version: str) -> None:
        """Drop edges of `rel_type` that the computation `version` did not produce."""
        check_name(rel_type, DERIVED_EDGE_TYPES)
        self.run_autocommit(f"store/delete_stale_{rel_type.lower()}", version=version)

    def upsert_topics(self, rows: list[dict]) -> None:
        self.run_write("store/upsert_topics", rows=rows)

    def record_run(self, run_id: str, props: dict[str, Any]) -> None:
        self.run_write("store/record_run", id=run_id, props={to_camel(k): plain_value(v) for k, v in props.items()})

    def last_run(self, job: str) -> dict | None:
        rows = self.run_read("store/last_run", job=job)
        return rows[0]["props"] if rows else None

    def apply_vector_indexes(self) -> None:
        self._guard(self._run_schema, cypher.statements("store/vector_indexes"))

    def run_library_query(self, name: str, params: dict) -> tuple[list[str], list[list[Any]]]:
        """A query of the Cypher library (cypher/queries/<name>.cypher) in a read transaction."""
        query = cypher.load(f"queries/{name}")

        def work(tx):
            result = tx.run(query, **params)
            return list(result.keys()), [list(r.values()) for r in result]

        def call():
            with self._session() as session:
                return self._transaction(session, False, work)
        return self._guard(call)

    # --- scoring runs: write beside, switch in one step, clean up ------------------------------------

    def write_scores(self, rel_type: str, rows: Iterable[dict], run_id: str, batch_size: int = 10_000) -> int:
        """Score edges {source, target, props} of run `run_id`, invisible to current-run readers until
        `switch_run`."""
        check_name(rel_type, SCORE_EDGE_TYPES)
        converted = ({"source": row["source"], "target": row["target"],
                      "props": {to_camel(k): plain_value(v) for k, v in row["props"].items()}} for row in rows)
        return self._write_in_batches(f"store/write_{rel_type.lower()}", converted, batch_size, runId=run_id)

    def switch_run(self, run_id: str) -> None:
        self.run_write("store/switch_current_run", runId=run_id)

    def delete_old_scores(self, rel_type: str, run_id: str) -> None:
        check_name(rel_type, SCORE_EDGE_TYPES)
        self.run_autocommit(f"store/delete_old_{rel_type.lower()}", runId=run_id)

    def carry_forward_scores(self, rel_type: str, run_id: str, rescored: Sequence[str]) -> tuple[int, int]:
        """Copy the current run's score edges of the papers not in `rescored` to run `run_id` (an
        incremental run keeps what it did not recompute); (edges, papers) carried."""
        check_name(rel_type, ("SUGGESTED_REVIEWER", "RECOMMENDED_CITATION"))
        row = self.run_autocommit(f"store/carry_forward_{rel_type.lower()}", runId=run_id, rescored=list(rescored))
        return (int(row[0]["edges"]), int(row[0]["papers"])) if row else (0, 0)

    def server_time(self) -> int:
        """The server's clock in ms since the epoch (the clock of Paper.ingestedAt), held below every write
        not yet visible: a transaction stamps its papers when it writes them, not when it commits, so a
        watermark read while an ingest is open would pass papers that its snapshot cannot see yet. The clock
        is read first, then the transactions open since before it: one that commits later still has its
        papers after the returned time, and one that committed in between is in any snapshot read after."""
        now = int(self.run_read("store/server_time")[0]["now"])
        rows = self.run_autocommit("store/oldest_open_transaction", before=now)  # SHOW runs outside a transaction
        started = rows[0]["started"] if rows else None
        return min(now, int(started)) - 1 if started is not None else now - 1

    def last_change(self) -> int | None:
        rows = self.run_read("store/last_change")
        return int(rows[0]["t"]) if rows else None

    def changed_papers(self, since: int) -> list[str]:
        """Ids of the non-stub papers ingested or changed after `since` (server ms)."""
        return [r["id"] for r in self.run_read("store/changed_papers", since=int(since))]

    def current_run(self, job: str) -> dict | None:
        rows = self.run_read("store/current_run", job=job)
        return rows[0]["props"] if rows else None

    def run_history(self, limit: int = 20) -> list[dict]:
        return self.run_read("store/run_history", limit=limit)

    def fail_stale_runs(self, lease_seconds: int, lock_owner: str) -> int:
        return self.run_write("store/fail_stale_runs", lease=lease_seconds, owner=lock_owner)[0]["failed"]

    def acquire_lock(self, name: str, owner: str, lease_seconds: int) -> tuple[bool, str, str]:
        row = self.run_write("store/lock_acquire", name=name, owner=owner, lease=lease_seconds)[0]
        return bool(row["acquired"]), row["owner"], row["expiresAt"]

    def renew_lock(self, name: str, owner: str, lease_seconds: int) -> bool:
        return self.run_write("store/lock_renew", name=name, owner=owner, lease=lease_seconds)[0]["renewed"] > 0

    def release_lock(self, name: str, owner: str) -> None:
        self.run_write("store/lock_release", name=name, owner=owner)

    def has_gds(self) -> bool:
        try:
            return bool(self.run_read("store/gds_available")[0]["available"])
        except StoreError:
            return False

    def gds_pagerank(self, network: str, damping: float, max_iter: int, tol: float) -> dict[str, float]:
        """PageRank by Neo4j Graph Data Science on a stored network (CITES, COAUTHOR, CITES_AUTHOR,
        CITES_VENUE), normalised to sum to 1 like the networkx backend. GDS lets the rank mass of
        dangling nodes leak where networkx spreads it uniformly; with a uniform teleport the two
        vectors are proportional, so after normalisation they agree."""
        check_name(network, ("CITES", "COAUTHOR", "CITES_AUTHOR", "CITES_VENUE"))
        name = f"scholargraph-{network.lower()}-{uuid.uuid4().hex[:8]}"
        config: dict[str, Any] = {"dampingFactor": damping, "maxIterations": max_iter, "tolerance": tol}
        if network != "CITES":
            config["relationshipWeightProperty"] = "weight"

        def call():
            with self._session() as session:
                session.run(cypher.load(f"store/gds_project_{network.lower()}"), name=name).consume()
                try:
                    rows = [(r["id"], r["score"]) for r in
                            session.run(cypher.load("store/gds_pagerank_stream"), name=name, config=config)]
                finally:
                    session.run(cypher.load("store/gds_drop"), name=name).consume()
                return rows
        rows = self._guard(call)
        total = sum(score for _, score in rows) or 1.0
        return {node_id: score / total for node_id, score in rows}
