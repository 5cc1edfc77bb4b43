"""InMemoryStore: the GraphStore over Python dicts, with the Neo4j queries' semantics (tests, small graphs)."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from scholargraph.errors import StoreError
from scholargraph.graph.records import PaperBundle
from scholargraph.graph.store import (
    DERIVED_EDGE_TYPES,
    EDGE_TYPES,
    EXPERTISE_PROPERTIES,
    ID_KINDS,
    NODE_LABELS,
    PAGED_READS,
    SCORE_EDGE_TYPES,
    STATS_LABELS,
    STATS_RELATIONSHIPS,
    STREAMED_READS,
    BatchRows,
    WriteCounts,
    check_name,
    plain_value,
    to_camel,
)

# The labels at each end of a written relationship type (the write queries MATCH both ends by them).
ENDS = {"COAUTHOR": ("Author", "Author"), "CITES_AUTHOR": ("Author", "Author"), "CITES_VENUE": ("Venue", "Venue"),
        "HAS_TOPIC": ("Paper", "Topic"), "SUGGESTED_REVIEWER": ("Author", "Paper"),
        "RISING_STAR_IN": ("Author", "Topic"), "RECOMMENDED_CITATION": ("Paper", "Paper"),
        "ASSIGNED_TO": ("Author", "Paper")}
# carry_forward_scores: the job whose current run is carried, and which end of an edge is the paper.
CARRIED = {"SUGGESTED_REVIEWER": ("reviewers", 1), "RECOMMENDED_CITATION": ("citations", 0)}


def _locked(method):
    """One writer at a time, as in a transaction: the lease thread of a job renews the lock meanwhile."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self._mutex:
            return method(self, *args, **kwargs)
    return wrapper


def _stored(value: Any) -> Any:
    value = plain_value(value)
    return list(value) if isinstance(value, (list, tuple)) else value


def _set(node: dict, props: dict[str, Any]) -> None:
    """`SET n += props`: None removes a property, as in Neo4j."""
    for key, value in props.items():
        if value is None:
            node.pop(key, None)
        else:
            node[key] = _stored(value)


class InMemoryStore:
    """Nodes by label and id (camelCase properties), relationships by type and ends (score edges also by run
    id), scoring runs and the jobs lock as nodes; the same answers as Neo4jStore for the GraphStore protocol.

    The clock (`server_time`) is wall time in ms made strictly increasing, so that a paper written after a
    watermark was read always has a later change time. Reads are taken whole under the lock, so a paged read
    sees one state of the graph."""

    def __init__(self) -> None:
        self._mutex = threading.RLock()
        self._nodes: dict[str, dict[str, dict[str, Any]]] = {
            label: {} for label in (*STATS_LABELS, "PaperAlias", "JobLock")}
        # type -> (source id, target id) -> properties; score edges: (source id, target id, run id) -> properties
        self._edges: dict[str, dict[tuple, dict[str, Any]]] = {t: {} for t in STATS_RELATIONSHIPS}
        self._last_ms = 0

    # --- clock ---------------------------------------------------------------------------------------

    def _tick(self) -> int:
        self._last_ms = max(self._last_ms + 1, int(time.time() * 1000))
        return self._last_ms

    @_locked
    def server_time(self) -> int:
        return self._tick()

    # --- ingest --------------------------------------------------------------------------------------

    def write_bundles(self, bundles: Sequence[PaperBundle]) -> WriteCounts:
        return self.write_rows(BatchRows.from_bundles(bundles))

    @_locked
    def write_rows(self, rows: BatchRows) -> WriteCounts:
        """The upsert queries of cypher/store/, in their order within Neo4jStore's one transaction."""
        counts = rows.counts()
        now = self._tick()  # one transaction, one timestamp()
        papers, authors, venues = self._nodes["Paper"], self._nodes["Author"], self._nodes["Venue"]
        aliases = self._nodes["PaperAlias"]
        for row in rows.papers:
            self._upsert_paper(row, now, counts)
        for row in rows.aliases:
            aliases[row["alias"]] = {"id": row["alias"], "paperId": row["id"]}
            if row["alias"] in papers and row["id"] in papers:
                self._fold_paper(row["alias"], row["id"])
        for row in rows.venues:
            venue = venues.setdefault(row["id"], {"id": row["id"]})
            if venue.get("name") is None and row["name"] is not None:
                venue["name"] = row["name"]
        for row in rows.authors:
            author = authors.setdefault(row["id"], {"id": row["id"]})
            if author.get("name") is None and row["name"] is not None:
                author["name"] = row["name"]
            if row["orcid"] is not None:
                author["orcid"] = row["orcid"]
            old = author.get("sources", [])
            author["sources"] = old + [s for s in row["sources"] if s not in old]
            if row.get("affiliations"):
                old = author.get("affiliations", [])
                author["affiliations"] = old + [s for s in row["affiliations"] if s not in old]
        authored = self._edges["AUTHORED"]
        for row in rows.authorships:
            if row["paperId"] in papers:
                for au in row["authors"]:
                    if au["id"] in authors:
                        _set(authored.setdefault((au["id"], row["paperId"]), {}), {"position": au["position"]})
        for row in rows.published_in:
            if row["paperId"] in papers and row["venueId"] in venues:
                self._edges["PUBLISHED_IN"].setdefault((row["paperId"], row["venueId"]), {})
        for cited in rows.cited_ids:
            target = aliases.get(cited, {}).get("paperId", cited)
            if target not in papers:
                papers[target] = {"id": target, "stub": True}
                counts.stubs_created += 1
        for row in rows.citations:
            if row["citing"] not in papers:
                continue
            for cited in row["cited"]:
                target = aliases.get(cited, {}).get("paperId", cited)
                if target != row["citing"]:
                    self._edges["CITES"].setdefault((row["citing"], target), {})
        return counts

    def _upsert_paper(self, row: dict, now: int, counts: WriteCounts) -> None:
        papers = self._nodes["Paper"]
        created = row["id"] not in papers
        p = papers.setdefault(row["id"], {"id": row["id"]})
        was_stub = bool(p.get("stub", False))
        old_sources = p.get("sources", [])
        partial = row["partial"]
        changed = (created or (was_stub and not partial) or any(s not in old_sources for s in row["sources"])
                   or (row["title"] is not None and row["title"] != p.get("title", ""))
                   or (row["abstract"] is not None and row["abstract"] != p.get("abstract", ""))
                   or (row["year"] is not None and row["year"] != p.get("year", -1)))
        if created:
            counts.papers_created += 1
        elif was_stub and not partial:
            counts.stubs_filled += 1
        elif not was_stub and not partial and old_sources and not any(s in old_sources for s in row["sources"]):
            counts.merged += 1
        if changed:
            p["ingestedAt"] = now
        for key in ("title", "abstract", "year", "doi", "venueId"):
            if row[key] is not None:
                p[key] = row[key]
        p["sources"] = old_sources + [s for s in row["sources"] if s not in old_sources]
        p["stub"] = p.get("stub", True) if partial else False

    def _fold_paper(self, old_id: str, paper_id: str) -> None:
        """upsert_aliases: the node created under an alias moves its citations and authorships to the paper
        and is deleted."""
        papers, cites, authored = self._nodes["Paper"], self._edges["CITES"], self._edges["AUTHORED"]
        old, p = papers[old_id], papers[paper_id]
        for citing, cited in list(cites):
            if cited == old_id and citing != paper_id:
                cites.setdefault((citing, paper_id), {})
            if citing == old_id and cited != paper_id:
                cites.setdefault((paper_id, cited), {})
        for (author, written), props in list(authored.items()):
            if written == old_id:
                edge = authored.setdefault((author, paper_id), {})
                if edge.get("position") is None and props.get("position") is not None:
                    edge["position"] = props["position"]
        for key in ("title", "abstract", "year"):
            if p.get(key) is None and old.get(key) is not None:
                p[key] = old[key]
        p["sources"] = p["sources"] + [s for s in old.get("sources", []) if s not in p["sources"]]
        self._detach_delete(old_id)

    def _detach_delete(self, node_id: str) -> None:
        del self._nodes["Paper"][node_id]
        for edges in self._edges.values():
            for key in [k for k in edges if node_id in (k[0], k[1])]:
                del edges[key]

    # --- reads ---------------------------------------------------------------------------------------

    @_locked
    def stats(self) -> dict[str, dict[str, int]]:
        return {"nodes": {label: len(self._nodes[label]) for label in STATS_LABELS},
                "relationships": {t: len(self._edges[t]) for t in STATS_RELATIONSHIPS},
                "stubs": {"Paper": sum(1 for p in self._nodes["Paper"].values() if p.get("stub") is True)}}

    def pages(self, query_name: str, /, page_size: int = 20_000, start: str = "", until: str | None = None,
              **params) -> Iterator[list]:
        check_name(query_name, PAGED_READS)
        with self._mutex:
            nodes = self._nodes["Author" if query_name == "store/snapshot_authorships" else "Paper"]
            ids = [i for i in sorted(nodes) if i > start and (until is None or i <= until)]
            ends: dict[str, list] = {}  # the relationship a row collects, by its start node
            if query_name == "store/snapshot_authorships":
                for (author, paper), props in self._edges["AUTHORED"].items():
                    ends.setdefault(author, []).append([paper, props.get("position", 0)])
            elif query_name == "store/snapshot_citations":
                for citing, cited in self._edges["CITES"]:
                    ends.setdefault(citing, []).append(cited)
            # Keyset pages of ids, as Neo4jStore reads them; a page keeps the rows its ids give (maybe none).
            pages = [[row for key in ids[start:start + page_size]
                      if (row := self._page_row(query_name, key, nodes[key], ends, params)) is not None]
                     for start in range(0, len(ids), page_size)]
        yield from pages

    @_locked
    def id_boundaries(self, label: str, parts: int) -> list[str]:
        check_name(label, ("Paper", "Author"))
        ids = sorted(self._nodes[label])
        step = -(-len(ids) // max(1, parts))
        return [ids[k] for k in range(step - 1, len(ids) - 1, step)] if parts > 1 and len(ids) > 1 else []

    @staticmethod
    def _page_row(query_name: str, key: str, node: dict, ends: dict[str, list], params: dict) -> list | None:
        """One row of a paged read (the query files' rows), None where the query collects nothing."""
        if query_name == "store/snapshot_papers":
            text = bool(params.get("withText"))
            return [key, node.get("year"), bool(node.get("stub", False)), node.get("venueId"),
                    node.get("title") if text else None, node.get("abstract") if text else None]
        if query_name == "store/snapshot_authorships":
            return [key, node.get("name"), ends.get(key, [])]
        if query_name == "store/snapshot_citations":
            return [key, ends[key]] if key in ends else None
        if query_name == "store/snapshot_paper_vectors":
            fields = ("semanticEncoder", "semanticTextHash", "semanticVector", "topicVector", "citationVector")
            present = any(node.get(f) is not None for f in fields if f != "semanticTextHash")
            return [key, *(node.get(f) for f in fields)] if present else None
        # store/paper_semantic_stamps
        encoder = node.get("semanticEncoder")
        return None if encoder is None else [key, encoder, node.get("semanticTextHash")]

    def stream(self, query_name: str, /, fetch_size: int = 10_000, **params) -> Iterator[dict]:
        check_name(query_name, STREAMED_READS)
        with self._mutex:
            if query_name == "store/expertise_settings":
                records = [{"id": aid, **{k: a.get(k) for k in EXPERTISE_PROPERTIES}}
                           for aid, a in self._nodes["Author"].items()
                           if any(a.get(k) is not None for k in EXPERTISE_PROPERTIES)]
            else:
                records = [{"id": vid, "name": v.get("name")} for vid, v in self._nodes["Venue"].items()]
        yield from records

    @_locked
    def lookup_ids(self, kind: str, forms: dict[str, list[str]]) -> dict[str, list[str]]:
        """store/lookup_ids_<kind>.cypher (and lookup_author_sources for authors no own id names)."""
        check_name(kind, ID_KINDS)
        nodes = self._nodes[kind.capitalize()]
        aliases = self._nodes["PaperAlias"]
        found: dict[str, list[str]] = {}
        for given, names in forms.items():
            ids = {f for f in names if f in nodes}
            if kind == "paper":
                ids |= {aliases[f]["paperId"] for f in names if f in aliases and aliases[f]["paperId"] in nodes}
            if kind == "venue" or (kind == "author" and not ids):
                ids |= {nid for nid, node in nodes.items() if any(s in names for s in node.get("sources") or ())}
            if ids:
                found[given] = sorted(ids)
        return found

    @_locked
    def read_nodes(self, label: str, props: Sequence[str] = ()) -> tuple[list[str], dict[str, list[Any]]]:
        check_name(label, NODE_LABELS)
        nodes = self._nodes[label]
        return list(nodes), {p: [n.get(to_camel(p)) for n in nodes.values()] for p in props}

    @_locked
    def read_edges(self, rel_type: str, weight: str | None = None) -> tuple[list[str], list[str], np.ndarray]:
        check_name(rel_type, EDGE_TYPES)
        edges = self._edges[rel_type]
        name = to_camel(weight or "weight")
        weights = [1.0 if props.get(name) is None else float(props[name]) for props in edges.values()]
        return ([k[0] for k in edges], [k[1] for k in edges], np.asarray(weights, dtype=np.float64))

    # --- feature write-back --------------------------------------------------------------------------

    @_locked
    def write_node_properties(self, label: str, ids: Sequence[str], props: dict[str, Sequence[Any] | np.ndarray],
                              batch_size: int = 10_000) -> int:
        check_name(label, NODE_LABELS)
        for name in props:
            if len(props[name]) != len(ids):
                raise ValueError(f"property {name!r} has {len(props[name])} values for {len(ids)} ids")
        nodes = self._nodes[label]
        for i, node_id in enumerate(ids):
            if node_id in nodes:
                _set(nodes[node_id], {to_camel(n): values[i] for n, values in props.items()})
        return len(ids)

    def _write_rel(self, rel_type: str, key: tuple, props: dict[str, Any]) -> None:
        source_label, target_label = ENDS[rel_type]
        if key[0] in self._nodes[source_label] and key[1] in self._nodes[target_label]:
            _set(self._edges[rel_type].setdefault(key, {}), props)

    @_locked
    def write_edges(self, rel_type: str, rows: Iterable[dict], version: str, batch_size: int = 20_000) -> int:
        check_name(rel_type, DERIVED_EDGE_TYPES)
        written = 0
        for row in rows:
            self._write_rel(rel_type, (row["source"], row["target"]), {"weight": row["weight"], "version": version})
            written += 1
        return written

    @_locked
    def delete_stale_edges(self, rel_type: str, version: str) -> None:
        check_name(rel_type, DERIVED_EDGE_TYPES)
        edges = self._edges[rel_type]
        for key in [k for k, props in edges.items() if props.get("version") != version]:
            del edges[key]

    @_locked
    def upsert_topics(self, rows: list[dict]) -> None:
        for row in rows:
            topic = self._nodes["Topic"].setdefault(row["id"], {"id": row["id"]})
            _set(topic, {k: row[k] for k in ("words", "weights", "modelVersion")})

    def apply_vector_indexes(self) -> None:
        """Nothing to build: vectors are read where they are kept."""

    def has_gds(self) -> bool:
        return False

    def gds_pagerank(self, network: str, damping: float, max_iter: int, tol: float) -> dict[str, float]:
        raise StoreError("the in-memory store has no Graph Data Science: use the networkx PageRank backend")

    # --- scoring runs ----------------------------------------------------------------------------------

    @_locked
    def record_run(self, run_id: str, props: dict[str, Any]) -> None:
        run = self._nodes["ScoringRun"].setdefault(run_id, {"id": run_id})
        _set(run, {to_camel(k): v for k, v in props.items()})

    def _runs(self, job: str) -> list[dict]:
        return [r for r in self._nodes["ScoringRun"].values() if r.get("job") == job]

    @_locked
    def last_run(self, job: str) -> dict | None:
        done = [r for r in self._runs(job) if r.get("status") == "succeeded"]
        # ORDER BY finishedAt DESC: Neo4j puts a run without finishedAt first.
        done.sort(key=lambda r: (r.get("finishedAt") is None, r.get("finishedAt") or datetime.min.replace(tzinfo=UTC)),
                  reverse=True)
        return dict(done[0]) if done else None

    @_locked
    def current_run(self, job: str) -> dict | None:
        current = [r for r in self._runs(job) if r.get("current") is True]
        return dict(current[0]) if current else None

    @_locked
    def write_scores(self, rel_type: str, rows: Iterable[dict], run_id: str, batch_size: int = 10_000) -> int:
        check_name(rel_type, SCORE_EDGE_TYPES)
        written = 0
        for row in rows:
            props = {to_camel(k): v for k, v in row["props"].items()}
            self._write_rel(rel_type, (row["source"], row["target"], run_id), {**props, "runId": run_id})
            written += 1
        return written

    @_locked
    def switch_run(self, run_id: str) -> None:
        new = self._nodes["ScoringRun"].get(run_id)
        if new is None:
            return
        job = new.get("job")
        for old in self._runs(job) if job is not None else ():
            if old is not new and old.get("current") is True:
                old["current"] = False
        new.update(current=True, status="succeeded", finishedAt=datetime.now(UTC))

    @_locked
    def delete_old_scores(self, rel_type: str, run_id: str) -> None:
        check_name(rel_type, SCORE_EDGE_TYPES)
        edges = self._edges[rel_type]
        for key in [k for k in edges if k[2] != run_id]:
            del edges[key]

    @_locked
    def carry_forward_scores(self, rel_type: str, run_id: str, rescored: Sequence[str]) -> tuple[int, int]:
        check_name(rel_type, tuple(CARRIED))
        job, paper_end = CARRIED[rel_type]
        current = [r["id"] for r in self._runs(job) if r.get("current") is True]
        skip = set(rescored)
        edges = self._edges[rel_type]
        carried = [(k, props) for k, props in edges.items() if k[2] in current and k[paper_end] not in skip]
        for (source, target, _), props in carried:
            edges[(source, target, run_id)] = {**props, "runId": run_id}
        return len(carried), len({k[paper_end] for k, _ in carried})

    @_locked
    @_locked
    def last_change(self) -> int | None:
        return max((p["ingestedAt"] for p in self._nodes["Paper"].values() if p.get("ingestedAt") is not None),
                   default=None)

    def changed_papers(self, since: int) -> list[str]:
        return sorted(pid for pid, p in self._nodes["Paper"].items()
                      if p.get("ingestedAt") is not None and p["ingestedAt"] > since and not p.get("stub", False))

    @_locked
    def fail_stale_runs(self, lease_seconds: int, lock_owner: str) -> int:
        now = datetime.now(UTC)
        stale = now - timedelta(seconds=lease_seconds)
        failed = 0
        for run in self._nodes["ScoringRun"].values():
            if run.get("status") != "running":
                continue
            owner, beat = run.get("lockOwner"), run.get("heartbeatAt")
            if (owner is not None and owner != lock_owner) or beat is None or beat < stale:
                run["status"] = "failed"
                run.setdefault("error", "abandoned: the process stopped without finishing")
                run.setdefault("finishedAt", now)
                failed += 1
        return failed

    # --- the jobs lock -----------------------------------------------------------------------------------

    @_locked
    def acquire_lock(self, name: str, owner: str, lease_seconds: int) -> tuple[bool, str, str]:
        now = datetime.now(UTC)
        lock = self._nodes["JobLock"].setdefault(name, {"id": name})
        held = lock.get("owner") is not None and lock["owner"] != owner and lock["expiresAt"] > now
        if not held:
            lock.update(owner=owner, expiresAt=now + timedelta(seconds=lease_seconds), acquiredAt=now)
        return not held, lock["owner"], lock["expiresAt"].isoformat()

    @_locked
    def renew_lock(self, name: str, owner: str, lease_seconds: int) -> bool:
        lock = self._nodes["JobLock"].get(name)
        if lock is None or lock.get("owner") != owner:
            return False
        lock["expiresAt"] = datetime.now(UTC) + timedelta(seconds=lease_seconds)
        return True

    @_locked
    def release_lock(self, name: str, owner: str) -> None:
        lock = self._nodes["JobLock"].get(name)
        if lock is not None and lock.get("owner") == owner:
            lock.pop("owner")
            lock.pop("expiresAt", None)
