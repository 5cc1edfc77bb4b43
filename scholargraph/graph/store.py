"""The GraphStore protocol (what the orchestration and the snapshot need of a store) and its shared rows."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from scholargraph.graph.records import PaperBundle

# Labels and relationship types that reads and write-back accept. Cypher cannot take a label as a
# parameter and still use its index, so Neo4j has a query file for each, chosen from this whitelist.
NODE_LABELS = ("Paper", "Author", "Venue", "Topic")
EDGE_TYPES = ("CITES", "AUTHORED", "PUBLISHED_IN", "COAUTHOR", "CITES_AUTHOR", "CITES_VENUE", "HAS_TOPIC")
DERIVED_EDGE_TYPES = ("COAUTHOR", "CITES_AUTHOR", "CITES_VENUE", "HAS_TOPIC")
SCORE_EDGE_TYPES = ("SUGGESTED_REVIEWER", "RISING_STAR_IN", "RECOMMENDED_CITATION", "ASSIGNED_TO")
STATS_LABELS = ("Paper", "Author", "Venue", "Topic", "ScoringRun")
ID_KINDS = ("paper", "author", "topic", "venue")  # what lookup_ids resolves
STATS_RELATIONSHIPS = ("AUTHORED", "CITES", "PUBLISHED_IN", *DERIVED_EDGE_TYPES, *SCORE_EDGE_TYPES)

# The named reads that `pages` and `stream` answer for the snapshot and the features pipeline (every
# store answers these; Neo4jStore runs any query file by name).
# The upper bound of a paged read without one: above every id (U+10FFFF is a noncharacter, never in an id).
ID_CEILING = "\U0010ffff" * 8
PAGED_READS = ("store/snapshot_papers", "store/snapshot_authorships", "store/snapshot_citations",
               "store/snapshot_paper_vectors", "store/paper_semantic_stamps")
STREAMED_READS = ("store/snapshot_venues", "store/expertise_settings")
# The reviewers' own expertise settings on Author nodes (conference/profiles.py), camelCase: what
# store/expertise_settings returns beside the id, for the authors that have any of them.
EXPERTISE_PROPERTIES = ("expertiseExcluded", "expertiseSince", "expertiseRecentYears", "expertiseWeights")

_CAMEL_BOUNDARY = re.compile(r"_([a-z0-9])")


def to_camel(name: str) -> str:
    """snake_case (Python) -> camelCase (stored property)."""
    return _CAMEL_BOUNDARY.sub(lambda m: m.group(1).upper(), name)


def check_name(name: str, allowed: tuple[str, ...]) -> None:
    if name not in allowed:
        raise ValueError(f"unknown {name!r}; expected one of {', '.join(allowed)}")


def plain_value(value: Any) -> Any:
    """numpy scalars and arrays -> the Python values a store keeps."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass
class WriteCounts:
    """What one batch of bundles did to the graph (summed over batches by the loader)."""

    papers: int = 0
    papers_created: int = 0
    merged: int = 0
    stubs_created: int = 0
    stubs_filled: int = 0
    authors: int = 0
    authorships: int = 0
    citations: int = 0
    venues: int = 0

    def add(self, other: WriteCounts) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class BatchRows:
    """A batch of bundles flattened into the parameter rows of each upsert query."""

    papers: list[dict] = field(default_factory=list)
    authors: list[dict] = field(default_factory=list)
    venues: list[dict] = field(default_factory=list)
    authorships: list[dict] = field(default_factory=list)
    published_in: list[dict] = field(default_factory=list)
    citations: list[dict] = field(default_factory=list)
    cited_ids: list[str] = field(default_factory=list)
    aliases: list[dict] = field(default_factory=list)

    @classmethod
    def from_bundles(cls, bundles: Iterable[PaperBundle]) -> BatchRows:
        rows = cls()
        papers: dict[str, dict] = {}
        authors: dict[str, dict] = {}
        venues: dict[str, dict] = {}
        cited: dict[str, None] = {}  # insertion-ordered set
        for b in bundles:
            p = b.paper
            if p is not None:
                row = {"id": p.id, "title": p.title, "abstract": p.abstract, "year": p.year, "doi": p.doi,
                       "venueId": p.venue_id, "sources": list(p.sources),
                       "partial": bool(getattr(p, "partial", False))}
                prev = papers.get(p.id)
                # Two records of one batch with the same id (a DOI seen twice) merge like separate batches.
                papers[p.id] = row if prev is None else _merge_paper_rows(prev, row)
                if p.venue_id:
                    rows.published_in.append({"paperId": p.id, "venueId": p.venue_id})
            for a in b.authors:
                prev_a = authors.get(a.id)
                if prev_a is None:
                    authors[a.id] = {"id": a.id, "name": a.name, "orcid": a.orcid, "sources": list(a.sources),
                                     "affiliations": list(a.affiliations)}
                else:
                    prev_a["sources"] = prev_a["sources"] + [s for s in a.sources if s not in prev_a["sources"]]
                    prev_a["orcid"] = prev_a["orcid"] or a.orcid
                    prev_a["affiliations"] = prev_a["affiliations"] + [
                        s for s in a.affiliations if s not in prev_a["affiliations"]]
            if b.venue is not None and b.venue.id not in venues:
                venues[b.venue.id] = {"id": b.venue.id, "name": b.venue.name}
            # Grouped by paper: one index lookup per paper instead of one per edge.
            if b.authorships:
                rows.authorships.append({"paperId": b.authorships[0].paper_id, "authors": [
                    {"id": s.author_id, "position": s.position} for s in b.authorships]})
            if b.citations:
                rows.citations.append({"citing": b.citations[0].citing_id,
                                       "cited": [c.cited_id for c in b.citations]})
                for c in b.citations:
                    cited.setdefault(c.cited_id, None)
        rows.papers = list(papers.values())
        rows.aliases = [{"alias": s, "id": row["id"]} for row in rows.papers for s in row["sources"]
                        if s != row["id"]]
        rows.authors = list(authors.values())
        rows.venues = list(venues.values())
        rows.cited_ids = list(cited)
        return rows


    def counts(self) -> WriteCounts:
        """What the batch holds; the writer adds what it created, merged and filled."""
        return WriteCounts(papers=len(self.papers), authors=len(self.authors),
                           authorships=sum(len(r["authors"]) for r in self.authorships),
                           citations=sum(len(r["cited"]) for r in self.citations), venues=len(self.venues))


def _merge_paper_rows(old: dict, new: dict) -> dict:
    merged = {k: (new[k] if new.get(k) is not None else old.get(k)) for k in new}
    merged["sources"] = old["sources"] + [s for s in new["sources"] if s not in old["sources"]]
    merged["partial"] = old["partial"] and new["partial"]
    return merged


class GraphStore(Protocol):
    """What the features pipeline, scoring runs, scheduled jobs and `GraphSnapshot.from_store` need of a
    store. `Neo4jStore` is the store; `InMemoryStore` (graph/memory_store.py) keeps the same graph in
    Python dicts. tests/store_contract.py checks both against this contract.

    Properties are named in snake_case on the way in and come back camelCase in run and node property
    dicts (`last_run(...)["finishedAt"]`), as Neo4j stores them; a property set to None is removed. Every
    write is idempotent: running it twice with the same arguments changes nothing."""

    # --- ingest ----------------------------------------------------------------------------------

    def write_bundles(self, bundles: Sequence[PaperBundle]) -> WriteCounts:
        """Upsert a batch of paper bundles at once. Non-null fields overwrite, `sources` is a set union, a
        full record clears `stub`; every cited paper not present becomes a stub; a source id of a paper
        whose id differs (a DOI) becomes an alias, and a node created earlier under it folds into that
        paper; a citation of oneself is dropped. A paper's change time (`changed_papers`) moves only when
        the paper really changed. Returns what the batch held and what it created, filled and merged."""
        ...

    def write_rows(self, rows: BatchRows) -> WriteCounts:
        """write_bundles of `BatchRows.from_bundles(bundles)`: what the loader calls."""
        ...

    # --- reads -------------------------------------------------------------------------------------

    def lookup_ids(self, kind: str, forms: dict[str, list[str]]) -> dict[str, list[str]]:
        """For each given id, the node ids of `kind` (ID_KINDS) that one of its forms names: a node's own id,
        a paper alias, an author's or venue's source (or pre-migration) id. The store side of
        graph.ids.IdResolver; givens naming nothing are absent."""
        ...

    def stats(self) -> dict[str, dict[str, int]]:
        """{"nodes": {label: n} for STATS_LABELS, "relationships": {type: n} for STATS_RELATIONSHIPS
        (zeros included), "stubs": {"Paper": n}}."""
        ...

    def pages(self, query_name: str, /, page_size: int = 20_000, start: str = "", until: str | None = None,
              **params) -> Iterator[list]:
        """Rows of a keyset-paged read (one of PAGED_READS), page by page in id order; the rows are those
        the query file documents (e.g. snapshot_papers: [id, year, stub, venue id, title, abstract]). Only ids
        after `start` and up to `until` (inclusive; None: no bound) are read: one range of a parallel read."""
        ...

    def id_boundaries(self, label: str, parts: int) -> list[str]:
        """At most parts - 1 ids of `label` ("Paper" or "Author") cutting its ids into `parts` ranges of about
        equal size: (start, b1], (b1, b2], ..., (bk, end] for `pages(start=..., until=...)`."""
        ...

    def stream(self, query_name: str, /, fetch_size: int = 10_000, **params) -> Iterator[Any]:
        """Records (mappings by column name) of a read query (one of STREAMED_READS) as they arrive."""
        ...

    def read_nodes(self, label: str, props: Sequence[str] = ()) -> tuple[list[str], dict[str, list[Any]]]:
        """All nodes of `label`: their ids (in a stable order) and the requested properties (snake_case),
        None where a node has none."""
        ...

    def read_edges(self, rel_type: str, weight: str | None = None) -> tuple[list[str], list[str], np.ndarray]:
        """All relationships of `rel_type` (EDGE_TYPES) as parallel (source ids, target ids, weights)
        arrays; a missing weight reads 1.0."""
        ...

    # --- feature write-back ------------------------------------------------------------------------

    def write_node_properties(self, label: str, ids: Sequence[str], props: dict[str, Sequence[Any] | np.ndarray],
                              batch_size: int = 10_000) -> int:
        """Set properties (snake_case names, one sequence per property, aligned with `ids`) on the nodes that
        exist (unknown ids are skipped); returns len(ids)."""
        ...

    def write_edges(self, rel_type: str, rows: Iterable[dict], version: str, batch_size: int = 20_000) -> int:
        """Upsert derived edges {source, target, weight} of one DERIVED_EDGE_TYPES type between existing
        nodes, tagged with `version`; returns the rows given."""
        ...

    def delete_stale_edges(self, rel_type: str, version: str) -> None:
        """Drop edges of `rel_type` that the computation `version` did not write."""
        ...

    def upsert_topics(self, rows: list[dict]) -> None:
        """Topic nodes {id, words, weights, modelVersion}."""
        ...

    def apply_vector_indexes(self) -> None:
        """Make the stored vectors searchable (idempotent)."""
        ...

    def has_gds(self) -> bool:
        """Whether the store computes PageRank itself (Neo4j Graph Data Science)."""
        ...

    def gds_pagerank(self, network: str, damping: float, max_iter: int, tol: float) -> dict[str, float]:
        """PageRank of a stored network, normalised to sum to 1; only where `has_gds()`."""
        ...

    # --- scoring runs --------------------------------------------------------------------------------

    def record_run(self, run_id: str, props: dict[str, Any]) -> None:
        """Create or update the ScoringRun `run_id` (its `id` is set) with `props` (snake_case)."""
        ...

    def last_run(self, job: str) -> dict | None:
        """Properties of the job's succeeded run that finished last; None before the first."""
        ...

    def current_run(self, job: str) -> dict | None:
        """Properties of the job's current (switched-in) run; None before the first switch."""
        ...

    def write_scores(self, rel_type: str, rows: Iterable[dict], run_id: str, batch_size: int = 10_000) -> int:
        """Score edges {source, target, props} of run `run_id` (SCORE_EDGE_TYPES), beside those of other
        runs: readers that follow the current run do not see them until `switch_run`. Returns the rows."""
        ...

    def switch_run(self, run_id: str) -> None:
        """Make `run_id` the current run of its job (and mark it succeeded) in one step: the job's previous
        current run stops being current at the same moment, so a reader sees one run's scores or the
        other's, never a mix. A run that is never switched in (it failed) leaves the previous one current."""
        ...

    def delete_old_scores(self, rel_type: str, run_id: str) -> None:
        """Drop the `rel_type` edges of every run other than `run_id` (after its switch)."""
        ...

    def carry_forward_scores(self, rel_type: str, run_id: str, rescored: Sequence[str]) -> tuple[int, int]:
        """Copy the current run's score edges (SUGGESTED_REVIEWER, RECOMMENDED_CITATION) of the papers not
        in `rescored` to run `run_id`; (edges, papers) carried, (0, 0) without a current run."""
        ...

    def server_time(self) -> int:
        """The store's clock in ms since the epoch: the clock of the papers' change times."""
        ...

    def last_change(self) -> int | None:
        """The latest `changed_papers` time of any paper (None on an empty graph): with `stats()`, the
        watermark that query-independent caches (the reviewer evidence) are invalidated by."""
        ...

    def changed_papers(self, since: int) -> list[str]:
        """Ids (sorted) of the non-stub papers ingested or changed after `since` (a `server_time()` read
        before: a watermark), so that a paper written after the watermark was read is always among them."""
        ...

    def fail_stale_runs(self, lease_seconds: int, lock_owner: str) -> int:
        """Mark failed the running runs of another lock owner and those without a heartbeat in the last
        `lease_seconds`; returns how many."""
        ...

    # --- the jobs lock -----------------------------------------------------------------------------

    def acquire_lock(self, name: str, owner: str, lease_seconds: int) -> tuple[bool, str, str]:
        """Take the lock `name` for `owner` for `lease_seconds` unless another owner holds an unexpired
        lease: (acquired, the holder, when its lease ends as an ISO string). Taking it again renews it."""
        ...

    def renew_lock(self, name: str, owner: str, lease_seconds: int) -> bool:
        """Extend `owner`'s lease; False when it no longer holds the lock."""
        ...

    def release_lock(self, name: str, owner: str) -> None:
        """Release the lock if `owner` holds it."""
        ...
