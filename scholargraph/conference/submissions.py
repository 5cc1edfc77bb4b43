"""What a reviewer recommendation is asked about: the submission (Query), who can review it (ReviewerPool),
and the candidate lists a file may give per submission."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypedDict

import numpy as np
import scipy.sparse as sp

from scholargraph.graph.ids import output_id
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot
from scholargraph.user_files import Repeats, Warn, bad_line, id_field, no_warning, table_lines

# --- the submission ---------------------------------------------------------------------------------


@dataclass
class Query:
    """A submission as evidence sees it. `references` are snapshot paper indices (unknown ids dropped);
    `paper_index` is set when the submission is itself a paper of the snapshot (a held-out paper), so that
    it never counts as its own evidence. Vectors are None when the submission has no text / no references."""

    id: str
    text_vector: np.ndarray | None
    topic_vector: np.ndarray | None
    references: np.ndarray
    # The year the submission is judged as of: reviewers' papers (and citing papers) after it are not
    # evidence, and the co-author conflict window ends there. None: every paper counts (evidence_as_of).
    year: int | None = None
    author_names: tuple[str, ...] = ()
    author_ids: tuple[str, ...] = ()
    paper_index: int | None = None
    citation_vector: np.ndarray | None = None
    title: str = ""
    lexical_vector: sp.csr_matrix | None = None  # 1 x V TF-IDF row, when the index has lexical vectors
    # The year the submission carries, kept when the evidence is not cut: the co-author conflict window
    # ends there (conference/conflicts.py), as a chair's conference tool counts it.
    submission_year: int | None = None
    # What the submission itself says of its authors (HotCRP's paper JSON, a --queries file): lower-cased
    # emails and affiliation names, for the institution and email-domain conflicts of authors the graph
    # does not know (conference/conflicts.py). Emails are personal data: never printed.
    author_emails: tuple[str, ...] = ()
    author_affiliations: tuple[str, ...] = ()

    @property
    def has_text(self) -> bool:
        return self.text_vector is not None and float(np.linalg.norm(self.text_vector)) > 0

    @property
    def has_topic(self) -> bool:
        return self.topic_vector is not None and float(np.sum(self.topic_vector)) > 0

    @property
    def has_refs(self) -> bool:
        return len(self.references) > 0


class SubmissionAuthors(TypedDict):
    """The Query fields a submission's authors give."""

    author_names: tuple[str, ...]
    author_ids: tuple[str, ...]
    author_emails: tuple[str, ...]
    author_affiliations: tuple[str, ...]


def submission_authors(record: Mapping) -> SubmissionAuthors:
    """The authors of a --queries record as Query fields: `authors` are names or {name, id?, email?,
    affiliation?} objects, `author_ids` (when given) override the objects' ids."""
    authors = [a for a in record.get("authors") or () if isinstance(a, (str, Mapping))]
    objects = [a for a in authors if isinstance(a, Mapping)]

    def texts(key: str) -> tuple[str, ...]:
        values = (a.get(key) for a in objects)
        return tuple(dict.fromkeys(v.strip() for v in values if isinstance(v, str) and v.strip()))

    return {"author_names": tuple(a if isinstance(a, str) else str(a.get("name") or "") for a in authors),
            "author_ids": tuple(record.get("author_ids") or texts("id")),
            "author_emails": tuple(e.lower() for e in texts("email") if "@" in e),
            "author_affiliations": texts("affiliation")}


SUBMISSION_YEAR = "submission"  # evidence_as_of: each submission as of its own year


def evidence_as_of(queries: Sequence[Query], until: int | str | None) -> list[Query]:
    """The submissions with the evidence cut a command was given. None (recommend's and assign's default)
    judges every reviewer on all their papers, as a chair expects: a reviewer's expertise is what they know
    now, whatever year a submission carries. SUBMISSION_YEAR keeps each submission's own year as the cut (a
    historical evaluation: nothing after the paper was known when it was written); a year cuts them all
    there."""
    if until == SUBMISSION_YEAR:
        return list(queries)
    if until is not None and not isinstance(until, int):
        raise ValueError(f"evidence cut {until!r}: a year or {SUBMISSION_YEAR!r}")
    return [replace(q, year=until) for q in queries]


def no_evidence_warning(results: Sequence[tuple[Query, Sequence]], cut: int | str | None,
                        examples: int = 5, forms: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """One line on the (submission, reviewer) pairs that could not be scored: the reviewer has no eligible
    paper (none in the graph, or none up to the evidence cut). Empty when every pair has a score. `forms`
    ({"paper"|"author": {node id: given id}}) names the examples as the caller gave them."""
    forms = forms or {}
    missing = [(forms.get("paper", {}).get(q.id, q.id), forms.get("author", {}).get(s.reviewer_id, s.reviewer_id))
               for q, suggestions in results for s in suggestions if s.no_history]
    if not missing:
        return ""
    total = sum(len(s) for _, s in results)
    if cut is None:
        why = "no paper in the graph, or none left by the reviewer's expertise settings"
    else:
        why = "no paper up to the submission's year" if cut == SUBMISSION_YEAR else f"no paper up to {cut}"
    shown = ", ".join(f"{output_id(q)} {output_id(r)}" for q, r in missing[:examples])
    return (f"{len(missing):,} of {total:,} (submission, reviewer) pairs have no eligible evidence ({why}): "
            f"their score is not given (e.g. {shown})")


# --- the reviewers ----------------------------------------------------------------------------------


@dataclass
class ReviewerPool:
    """Who can be suggested. `papers[r]` is the binary row of reviewer r over snapshot papers;
    `author_rows[r]` is the snapshot author index, -1 for a reviewer the snapshot does not know (no history)."""

    author_ids: list[str]
    author_rows: np.ndarray
    names: list[str | None]
    papers: sp.csr_matrix

    def __post_init__(self) -> None:
        if len(self.author_ids) != len(self.author_rows) or self.papers.shape[0] != len(self.author_ids):
            raise ValueError("author_ids, author_rows and papers must have one entry per reviewer")
        self._index = {a: r for r, a in enumerate(self.author_ids)}

    def __len__(self) -> int:
        return len(self.author_ids)

    @property
    def n_papers(self) -> np.ndarray:
        return np.diff(self.papers.indptr)

    def rows(self, author_ids: Iterable[str]) -> np.ndarray:
        """Pool rows of these ids; -1 for ids not in the pool."""
        return np.array([self._index.get(a, -1) for a in author_ids], dtype=np.int64)

    def row(self, author_id: str) -> int:
        return self._index.get(author_id, -1)

    @classmethod
    def from_snapshot(cls, snapshot: GraphSnapshot, min_papers: int = 3, author_ids: Sequence[str] | None = None,
                      until_year: int | None = None) -> ReviewerPool:
        """All authors with at least `min_papers` non-stub papers (published up to `until_year` when given), or
        exactly `author_ids` in that order (ids the snapshot does not know stay in the pool without history)."""
        auth = snapshot.authorship.tocsr().astype(np.float32, copy=True)
        auth.data[:] = 1.0
        keep_paper = ~snapshot.paper_stub
        if until_year is not None:
            keep_paper &= (snapshot.paper_year != NO_YEAR) & (snapshot.paper_year <= until_year)
        auth = (auth @ sp.diags(keep_paper.astype(np.float32))).tocsr()
        auth.eliminate_zeros()
        auth.sort_indices()
        names_all = snapshot.author_names or [None] * snapshot.n_authors
        if author_ids is None:
            rows = np.flatnonzero(np.diff(auth.indptr) >= max(1, min_papers))
            ids = [snapshot.author_ids[a] for a in rows]
            return cls(ids, rows.astype(np.int64), [names_all[a] for a in rows], auth[rows].tocsr())
        index = snapshot.author_index
        rows = np.array([index.get(a, -1) for a in author_ids], dtype=np.int64)
        known = np.where(rows >= 0, rows, 0)
        papers = auth[known].tocsr()
        if (rows < 0).any():
            papers = (sp.diags((rows >= 0).astype(np.float32)) @ papers).tocsr()
            papers.eliminate_zeros()
        names = [names_all[a] if a >= 0 else None for a in rows]
        return cls(list(author_ids), rows, names, papers)


def read_ids(path: str, what: str = "--pool", warn: Warn = no_warning) -> list[str]:
    """Ids as a file gives them, one per line (its first field, the line comma-, tab- or space-separated as
    user_files.table_lines reads it, so that Excel's `id,name` rows work; blank lines, `#` comments and lines
    with an empty first field skipped), each once (a repeat is reported through `warn`). They are user ids:
    resolve them (graph.ids.IdResolver) before looking them up."""
    repeats = Repeats(what, path, "id")
    ids = [given for n, parts in table_lines(path, what) if (given := id_field(parts[0])) and repeats.first(given, n)]
    if not ids:
        raise bad_line(what, path, None, "holds no ids (expected one id per line)")
    repeats.report(warn)
    return ids


def read_candidates(path: str, what: str = "--candidates", warn: Warn = no_warning) -> dict[str, list[str]]:
    """Candidates per query, ids as the file gives them: TREC qrels or run lines (`qid 0 cand rel ...`, four
    fields or more: the third is the candidate) or `qid cand [anything]` (two or three fields: the second),
    comma-, tab- or space-separated (user_files.table_lines); blank lines and `#` comments skipped. A
    candidate listed twice for a query is kept once (`warn` says so)."""
    out: dict[str, list[str]] = {}
    repeats = Repeats(what, path, "candidate")
    for n, parts in table_lines(path, what):
        if len(parts) < 2:
            continue
        query, candidate = id_field(parts[0]), id_field(parts[2] if len(parts) >= 4 else parts[1])
        if query and candidate and repeats.first((query, candidate), n):
            out.setdefault(query, []).append(candidate)
    if not out:
        raise bad_line(what, path, None, "holds no candidates (expected `qid 0 candidate grade` or `qid candidate`)")
    repeats.report(warn)
    return out
