"""GraphSnapshot: the graph as in-memory arrays and sparse matrices, pulled from the store or built in tests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import ClassVar, cast

import numpy as np
import scipy.sparse as sp

from scholargraph.errors import UsageError
from scholargraph.graph.records import paper_text
from scholargraph.graph.store import GraphStore

NO_YEAR = -1
NO_VENUE = -1
VECTOR_FIELDS = ("semantic_vectors", "topic_vectors", "citation_vectors")


@dataclass
class GraphSnapshot:
    """Papers, authors and venues indexed 0..n-1, with the edges between them as sparse matrices.

    - `citations[i, j] = 1` when paper i cites paper j (papers x papers, CSR).
    - `authorship[a, p] = position` (1-based) when author a wrote paper p (authors x papers, CSR).
    - `paper_year[i]` is NO_YEAR when unknown (stubs); `paper_venue[i]` is NO_VENUE when none.
    - Texts are optional (None when the snapshot was pulled without them).
    - Stored vectors are optional (`from_store(..., with_vectors=True)` or `load_stored_vectors`), one row per
      paper, all-zero where a paper has none: `semantic_vectors` (n x d, every row written by the one encoder
      whose key is `semantic_encoder`), `topic_vectors` (n x K) and `citation_vectors` (n x c).
    Ranking code only ever sees this object, never a driver.
    """

    paper_ids: list[str]
    paper_year: np.ndarray
    paper_stub: np.ndarray
    paper_venue: np.ndarray
    author_ids: list[str]
    venue_ids: list[str]
    citations: sp.csr_matrix
    authorship: sp.csr_matrix
    titles: list[str | None] | None = None
    abstracts: list[str | None] | None = None
    author_names: list[str | None] | None = None
    venue_names: list[str | None] | None = None
    extra: dict = field(default_factory=dict)
    semantic_vectors: np.ndarray | None = None
    semantic_encoder: str | None = None
    topic_vectors: np.ndarray | None = None
    citation_vectors: np.ndarray | None = None

    def __post_init__(self) -> None:
        n_p, n_a, n_v = len(self.paper_ids), len(self.author_ids), len(self.venue_ids)
        if self.citations.shape != (n_p, n_p):
            raise ValueError(f"citations has shape {self.citations.shape}, expected {(n_p, n_p)}")
        if self.authorship.shape != (n_a, n_p):
            raise ValueError(f"authorship has shape {self.authorship.shape}, expected {(n_a, n_p)}")
        if len(self.paper_year) != n_p or len(self.paper_stub) != n_p or len(self.paper_venue) != n_p:
            raise ValueError("paper_year, paper_stub and paper_venue must have one entry per paper")
        if n_v and len(self.paper_venue) and self.paper_venue.max(initial=NO_VENUE) >= n_v:
            raise ValueError("paper_venue refers to a venue index out of range")
        for name in VECTOR_FIELDS:
            value = getattr(self, name)
            if value is not None and value.shape[0] != n_p:
                raise ValueError(f"{name} has {value.shape[0]} rows, expected one per paper ({n_p})")

    # --- lookups -----------------------------------------------------------------------------------

    @property
    def n_papers(self) -> int:
        return len(self.paper_ids)

    def require_papers(self, what: str) -> GraphSnapshot:
        """Self, or a UsageError when no paper has been ingested (only cited stubs, or nothing): a model fitted
        on nothing fails deep inside (an empty vocabulary, empty arrays), far from the reason."""
        if not int((~np.asarray(self.paper_stub, dtype=bool)).sum()):
            raise UsageError(f"{what}: the graph holds no papers yet; ingest a dump first "
                             "(scholargraph ingest FORMAT PATH)")
        return self

    @property
    def n_authors(self) -> int:
        return len(self.author_ids)

    @property
    def n_venues(self) -> int:
        return len(self.venue_ids)

    @cached_property
    def paper_index(self) -> dict[str, int]:
        return {pid: i for i, pid in enumerate(self.paper_ids)}

    @cached_property
    def author_index(self) -> dict[str, int]:
        return {aid: i for i, aid in enumerate(self.author_ids)}

    @cached_property
    def venue_index(self) -> dict[str, int]:
        return {vid: i for i, vid in enumerate(self.venue_ids)}

    def text_fields(self) -> tuple[Sequence[str | None], Sequence[str | None]]:
        """Every paper's title and abstract (Nones when the snapshot has no text)."""
        n = self.n_papers
        return (self.titles if self.titles is not None else [None] * n,
                self.abstracts if self.abstracts is not None else [None] * n)

    def text(self, i: int) -> str:
        """Title and abstract of paper i joined ('' when the snapshot has no text)."""
        title = self.titles[i] if self.titles is not None else None
        abstract = self.abstracts[i] if self.abstracts is not None else None
        return paper_text(title, abstract)

    # --- time ---------------------------------------------------------------------------------------

    @property
    def max_year(self) -> int:
        known = self.paper_year[self.paper_year != NO_YEAR]
        return int(known.max()) if len(known) else NO_YEAR

    def as_of(self, year: int) -> GraphSnapshot:
        """The graph as it stood at the end of `year`: papers published after it, and every edge they
        bring (their citations, their authorships), are gone. Papers without a year (stubs) stay
        only when a kept paper cites them. Indexes are renumbered; ids keep their meaning."""
        known = self.paper_year != NO_YEAR
        kept_dated = known & (self.paper_year <= year)
        cited_by_kept = np.asarray(self.citations[kept_dated].sum(axis=0)).ravel() > 0
        keep = kept_dated | (~known & cited_by_kept)
        idx = np.flatnonzero(keep)
        citations = self.citations[idx][:, idx].tocsr()
        # Undated papers cite nothing as of T: their references are unknown in time.
        citations = sp.diags(kept_dated[idx].astype(np.float32)) @ citations
        authorship = self.authorship[:, idx].tocsr()
        active_authors = np.flatnonzero(np.diff(authorship.indptr) > 0)
        authorship = authorship[active_authors]

        def pick(values: list | None, index: np.ndarray) -> list | None:
            return None if values is None else [values[k] for k in index]

        def rows(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[idx]

        return GraphSnapshot(
            paper_ids=[self.paper_ids[k] for k in idx], paper_year=self.paper_year[idx],
            paper_stub=self.paper_stub[idx], paper_venue=self.paper_venue[idx],
            author_ids=[self.author_ids[k] for k in active_authors], venue_ids=list(self.venue_ids),
            citations=sp.csr_matrix(citations), authorship=authorship,
            titles=pick(self.titles, idx), abstracts=pick(self.abstracts, idx),
            author_names=pick(self.author_names, active_authors), venue_names=self.venue_names,
            extra={**self.extra, "as_of": year}, semantic_vectors=rows(self.semantic_vectors),
            semantic_encoder=self.semantic_encoder, topic_vectors=rows(self.topic_vectors),
            citation_vectors=rows(self.citation_vectors))

    # --- on disk (a cache of a pulled snapshot) ------------------------------------------------------

    SAVE_FORMAT: ClassVar[int] = 1

    def save(self, directory: str | Path) -> Path:
        """Write the snapshot to `directory` as `arrays.npz` (numbers, sparse matrices, vectors) and
        `strings.json` (ids, texts, names, `extra`), no pickles: `load` gives an equal snapshot. For caches of a
        pulled graph (the reviewer evidence), not an exchange format (Parquet is: graph/parquet.py)."""
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {"paper_year": self.paper_year, "paper_stub": self.paper_stub,
                                         "paper_venue": self.paper_venue}
        for name in ("citations", "authorship"):
            m = getattr(self, name).tocsr()
            arrays.update({f"{name}_data": m.data, f"{name}_indices": m.indices, f"{name}_indptr": m.indptr,
                           f"{name}_shape": np.asarray(m.shape, dtype=np.int64)})
        for name in VECTOR_FIELDS:
            if getattr(self, name) is not None:
                arrays[name] = getattr(self, name)
        np.savez(path / "arrays.npz", allow_pickle=False, **arrays)
        strings = {"format": self.SAVE_FORMAT, "paper_ids": self.paper_ids, "author_ids": self.author_ids,
                   "venue_ids": self.venue_ids, "titles": self.titles, "abstracts": self.abstracts,
                   "author_names": self.author_names, "venue_names": self.venue_names, "extra": self.extra,
                   "semantic_encoder": self.semantic_encoder}
        with open(path / "strings.json", "w", encoding="utf-8") as fh:
            json.dump(strings, fh, ensure_ascii=False)
        return path

    @classmethod
    def load(cls, directory: str | Path) -> GraphSnapshot:
        """The snapshot `save` wrote; ValueError when the files are missing, broken or of another format."""
        path = Path(directory)
        try:
            with open(path / "strings.json", encoding="utf-8") as fh:
                strings = json.load(fh)
            if strings.get("format") != cls.SAVE_FORMAT:
                raise ValueError(f"format {strings.get('format')!r}, expected {cls.SAVE_FORMAT}")
            with np.load(path / "arrays.npz", allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
        except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: not a saved snapshot ({exc})") from None

        def matrix(name: str) -> sp.csr_matrix:
            return sp.csr_matrix((arrays[f"{name}_data"], arrays[f"{name}_indices"], arrays[f"{name}_indptr"]),
                                 shape=tuple(int(x) for x in arrays[f"{name}_shape"]))

        return cls(paper_ids=strings["paper_ids"], paper_year=arrays["paper_year"], paper_stub=arrays["paper_stub"],
                   paper_venue=arrays["paper_venue"], author_ids=strings["author_ids"],
                   venue_ids=strings["venue_ids"], citations=matrix("citations"), authorship=matrix("authorship"),
                   titles=strings["titles"], abstracts=strings["abstracts"], author_names=strings["author_names"],
                   venue_names=strings["venue_names"], extra=strings["extra"],
                   semantic_encoder=strings["semantic_encoder"],
                   **{name: arrays[name] for name in VECTOR_FIELDS if name in arrays})

    # --- building ----------------------------------------------------------------------------------

    @classmethod
    def from_store(cls, store: GraphStore, with_text: bool = False, quiet: bool = True, with_vectors: bool = False,
                   semantic_encoder: str | None = None) -> GraphSnapshot:
        """Pull the whole graph through the store's streaming reads (no driver code here). With
        `with_vectors`, also the vectors that `features` stored (see `load_stored_vectors`)."""
        from scholargraph.progress import progress

        papers = []
        with progress(desc="snapshot papers", unit="paper", quiet=quiet) as bar:
            for page in store.pages("store/snapshot_papers", withText=with_text):
                for pid, year, stub, venue, title, abstract in page:
                    row = {"id": pid, "year": year, "stub": stub, "venue": venue}
                    if with_text:
                        row["title"] = title
                        row["abstract"] = abstract
                    papers.append(row)
                bar.update(len(page))
        venues = [(rec["id"], rec["name"]) for rec in store.stream("store/snapshot_venues")]
        authors: list[tuple[str, str | None]] = []
        authorships: list[tuple[str, str, int]] = []
        with progress(desc="snapshot authors", unit="author", quiet=quiet) as bar:
            for page in store.pages("store/snapshot_authorships"):
                for aid, name, written in page:
                    authors.append((aid, name))
                    authorships.extend((aid, pid, pos) for pid, pos in written)
                bar.update(len(page))

        def citations():
            # Consumed by build() as it arrives: 10M (citing, cited) pairs are never held at once.
            with progress(desc="snapshot citations", unit="paper", quiet=quiet) as bar:
                for page in store.pages("store/snapshot_citations"):
                    for citing, cited in page:
                        for target in cited:
                            yield citing, target
                    bar.update(len(page))

        snapshot = cls.build(papers, authorships, citations(), venues=venues, authors=authors)
        if with_vectors:
            snapshot.load_stored_vectors(store, semantic_encoder=semantic_encoder, quiet=quiet)
        return snapshot

    def load_stored_vectors(self, store: GraphStore, semantic_encoder: str | None = None, quiet: bool = True,
                            page_size: int = 5_000) -> GraphSnapshot:
        """Read `Paper.semanticVector`, `.topicVector` and `.citationVector` into `semantic_vectors`,
        `topic_vectors` and `citation_vectors` (keyset pages; rows aligned with `paper_ids`, all-zero where a
        paper has none; an array stays None when no paper has that vector). Returns self.

        Semantic rows are kept only for papers encoded by the encoder whose key is `semantic_encoder`
        (`encoder.key`; by default the key most papers carry, which becomes `self.semantic_encoder`), and,
        when the snapshot has texts, only where the text is still the one that was encoded
        (`Paper.semanticTextHash`): a zero row is "not encoded by this encoder", for the caller to encode.
        Topic vectors are those of the topic model current at the last `features` run."""
        from scholargraph.graph.encoders import text_digest
        from scholargraph.progress import progress

        index = self.paper_index
        found: list[tuple[int, str | None, str | None, list | None, list | None, list | None]] = []
        with progress(desc="snapshot vectors", unit="paper", quiet=quiet) as bar:
            for page in store.pages("store/snapshot_paper_vectors", page_size=page_size):
                for pid, key, digest, sem, top, cit in page:
                    i = index.get(pid)
                    if i is not None:
                        found.append((i, key, digest, sem, top, cit))
                bar.update(len(page))
        if semantic_encoder is None:
            keys: dict[str, int] = {}
            for _, key, _, sem, _, _ in found:
                if key is not None and sem is not None:
                    keys[key] = keys.get(key, 0) + 1
            semantic_encoder = max(keys, key=keys.__getitem__) if keys else None
        has_text = self.titles is not None or self.abstracts is not None

        def fresh(i: int, key: str | None, digest: str | None) -> bool:
            return key == semantic_encoder and (not has_text or digest == text_digest(self.text(i)))

        def array(col: int, keep=lambda row: True) -> np.ndarray | None:
            rows = [(row[0], cast(list, row[col])) for row in found if row[col] is not None and keep(row)]
            if not rows:
                return None
            out = np.zeros((self.n_papers, len(rows[0][1])), dtype=np.float32)
            for i, vec in rows:
                if len(vec) == out.shape[1]:
                    out[i] = vec
            return out

        self.semantic_encoder = semantic_encoder
        self.semantic_vectors = array(3, lambda row: fresh(row[0], row[1], row[2]))
        self.topic_vectors = array(4)
        self.citation_vectors = array(5)
        return self

    @classmethod
    def build(cls, papers: Sequence[dict], authorships: Iterable[tuple[str, str, int]] = (),
              citations: Iterable[tuple[str, str]] = (), venues: Sequence[tuple[str, str | None]] = (),
              authors: Sequence[tuple[str, str | None]] = ()) -> GraphSnapshot:
        """From plain records (tests, small graphs, the store reader):
        papers: dicts with id and optional year, stub, venue (venue id), title, abstract;
        authorships: (author id, paper id, position); citations: (citing id, cited id);
        venues / authors: (id, name) pairs (others are added as they are referenced)."""
        paper_ids = [p["id"] for p in papers]
        p_index = {pid: i for i, pid in enumerate(paper_ids)}
        venue_ids = [v for v, _ in venues]
        venue_names: list[str | None] = [n for _, n in venues]
        v_index = {v: i for i, v in enumerate(venue_ids)}
        for p in papers:
            v = p.get("venue")
            if v and v not in v_index:
                v_index[v] = len(venue_ids)
                venue_ids.append(v)
                venue_names.append(None)
        author_ids = [a for a, _ in authors]
        author_names: list[str | None] = [n for _, n in authors]
        a_index = {a: i for i, a in enumerate(author_ids)}
        rows, cols, pos = [], [], []
        for author, paper, position in authorships:
            if paper not in p_index:
                continue
            if author not in a_index:
                a_index[author] = len(author_ids)
                author_ids.append(author)
                author_names.append(None)
            rows.append(a_index[author])
            cols.append(p_index[paper])
            pos.append(position)
        src, dst = [], []
        index_of = p_index.get
        for citing, cited in citations:
            i, j = index_of(citing), index_of(cited)
            if i is not None and j is not None and i != j:
                src.append(i)
                dst.append(j)
        n_p, n_a = len(paper_ids), len(author_ids)
        cit = sp.csr_matrix((np.ones(len(src), dtype=np.float32), (src, dst)), shape=(n_p, n_p))
        cit.sum_duplicates()
        cit.data[:] = 1.0
        auth = sp.csr_matrix((np.asarray(pos, dtype=np.float32), (rows, cols)), shape=(n_a, n_p))
        has_text = any("title" in p or "abstract" in p for p in papers)
        return cls(
            paper_ids=paper_ids,
            paper_year=np.array([p.get("year") if p.get("year") is not None else NO_YEAR for p in papers],
                                dtype=np.int32),
            paper_stub=np.array([bool(p.get("stub", False)) for p in papers], dtype=bool),
            paper_venue=np.array([v_index[p["venue"]] if p.get("venue") else NO_VENUE for p in papers],
                                 dtype=np.int32),
            author_ids=author_ids, venue_ids=venue_ids, citations=cit, authorship=auth,
            titles=[p.get("title") for p in papers] if has_text else None,
            abstracts=[p.get("abstract") for p in papers] if has_text else None,
            author_names=author_names, venue_names=venue_names)
