"""Conflicts of interest: a submission's own authors and their recent co-authors cannot review it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scholargraph.graph.records import fold_name
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot
from scholargraph.ranking.reviewers.query import Query, ReviewerPool

AUTHOR = "author"
COAUTHOR = "coauthor"


@dataclass
class ConflictChecker:
    """Finds the submission's authors in the snapshot by id, or by folded name (so 'José Pérez' and
    'jose perez' meet; two people with one name also meet, which errs on the safe side), then everyone who
    co-authored a paper with them in the `coauthor_years` years up to the submission year (None: ever;
    0: only the authors themselves). Papers without a year count as recent. `enabled=False` finds nothing."""

    snapshot: GraphSnapshot
    coauthor_years: int | None = 5
    enabled: bool = True

    def __post_init__(self) -> None:
        self._csr = self.snapshot.authorship.tocsr()
        self._csc = self.snapshot.authorship.tocsc()
        self._by_name: dict[str, list[int]] | None = None

    def _name_index(self) -> dict[str, list[int]]:
        if self._by_name is None:
            index: dict[str, list[int]] = {}
            for a, name in enumerate(self.snapshot.author_names or ()):
                if name:
                    index.setdefault(fold_name(name), []).append(a)
            for a, aid in enumerate(self.snapshot.author_ids):
                # Name-keyed ids (sources without author ids) carry the folded name after 'name:', its
                # words joined by '_' ('name:ann_lee'; 'name:ann lee' in a graph not migrated yet).
                if aid.startswith("name:"):
                    rows = index.setdefault(aid[5:].replace("_", " "), [])
                    if a not in rows:
                        rows.append(a)
            self._by_name = index
        return self._by_name

    def authors(self, query: Query) -> np.ndarray:
        """Snapshot author rows of the submission's authors."""
        rows: set[int] = set()
        index = self.snapshot.author_index
        for aid in query.author_ids:
            if aid in index:
                rows.add(index[aid])
        names = self._name_index()
        for name in query.author_names:
            key = fold_name(name) if name else ""
            if key:
                rows.update(names.get(key, ()))
        if query.paper_index is not None:
            p = query.paper_index
            rows.update(self._csc.indices[self._csc.indptr[p]:self._csc.indptr[p + 1]].tolist())
        return np.array(sorted(rows), dtype=np.int64)

    def conflicts(self, query: Query) -> dict[str, str]:
        """{author id: 'author' | 'coauthor'} of everyone in conflict with the submission."""
        if not self.enabled:
            return {}
        own = self.authors(query)
        out = {self.snapshot.author_ids[a]: AUTHOR for a in own}
        if len(own) == 0 or self.coauthor_years == 0:
            return out
        papers = np.unique(self._csr[own].indices)
        if self.coauthor_years is not None:
            year = query.year if query.year is not None else self.snapshot.max_year + 1
            py = self.snapshot.paper_year[papers]
            papers = papers[(py == NO_YEAR) | ((py >= year - self.coauthor_years) & (py <= year))]
        if query.paper_index is not None:
            papers = papers[papers != query.paper_index]
        if len(papers):
            co = np.unique(self._csc[:, papers].indices)
            for a in co:
                out.setdefault(self.snapshot.author_ids[a], COAUTHOR)
        return out

    def pool_rows(self, pool: ReviewerPool, query: Query) -> np.ndarray:
        """Pool rows in conflict (to pass as `exclude`); reviewers unknown to the snapshot match by name."""
        found = self.conflicts(query)
        rows = {pool.row(a) for a in found}
        if self.enabled and query.author_names:
            keys = {fold_name(n) for n in query.author_names if n}
            for r in np.flatnonzero(pool.author_rows < 0):
                name = pool.names[r]
                if name and fold_name(name) in keys:
                    rows.add(int(r))
        rows.discard(-1)
        return np.array(sorted(rows), dtype=np.int64)
