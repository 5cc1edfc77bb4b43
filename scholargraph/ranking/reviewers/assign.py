"""Reviewer assignment as a use case: affinities from the reviewer model, conflicts from the graph, the
chair's files (loads, forbidden and forced pairs, reviewer attributes) turned into one AssignmentProblem,
solved (assignment/), and the result as rows and as a scoring run in the graph.

Pure parsing and problem building live here beside the orchestration; the solvers know nothing of the
graph, and nothing here imports click (the CLI prints)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scholargraph.errors import UsageError
from scholargraph.graph.ids import output_id
from scholargraph.graph.snapshot import NO_YEAR
from scholargraph.progress import progress
from scholargraph.ranking.reviewers import profiles
from scholargraph.ranking.reviewers.assignment import Assignment, AssignmentProblem, Requirement
from scholargraph.ranking.reviewers.coi import AuthorDetails, ConflictChecker, conflict_kind, conflicts_note
from scholargraph.ranking.reviewers.declared import (
    LAYOUTS,
    DeclaredFile,
    match_declared,
    read_declared,
    require_applied,
)
from scholargraph.ranking.reviewers.evidence import EvidenceIndex
from scholargraph.ranking.reviewers.exchange import EmailBook, read_email_file
from scholargraph.ranking.reviewers.query import Query, ReviewerPool, evidence_as_of
from scholargraph.ranking.reviewers.reco_rank_net import NO_HISTORY_SCORE
from scholargraph.user_files import (
    INTEGER,
    Repeats,
    Warn,
    bad_line,
    no_warning,
    parse_int,
    read_jsonl,
    require_effect,
    table_lines,
)

SENIOR = "senior"
_RULE = re.compile(r"^\s*(papers|years)\s*>=\s*(\d+)\s*$")
_REQUIRE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*>=\s*(\d+)\s*$")


# --- the chair's files --------------------------------------------------------------------------------------


def read_pairs(path: str | Path, what: str) -> list[tuple[str, str]]:
    """`paper reviewer` pairs (a header line `paper,reviewer` is skipped), ids as the file gives them."""
    pairs = []
    for k, (n, parts) in enumerate(table_lines(path, what)):
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise UsageError(f"{what} {path}:{n}: expected `paper reviewer`, got {' '.join(parts)[:60]!r}")
        if k == 0 and parts[0].lower() in ("paper", "paper_id", "submission"):
            continue
        pairs.append((parts[0], parts[1]))
    if not pairs:
        raise bad_line(what, path, None, "holds no pairs (expected `paper reviewer` lines)")
    return pairs


def read_loads(path: str | Path, warn: Warn = no_warning) -> dict[str, tuple[int, int | None]]:
    """`reviewer max [min]` per line (OpenReview's custom max papers); a header line is skipped; a reviewer
    repeated with the same loads is kept once (`warn` says so), with other loads refused."""
    loads: dict[str, tuple[int, int | None]] = {}
    what = "--loads"
    repeats = Repeats(what, path, "reviewer")
    for k, (n, parts) in enumerate(table_lines(path, what)):
        if len(parts) < 2 or not parts[0] or not INTEGER.match(parts[1]):
            if k == 0:
                continue  # header
            raise UsageError(f"--loads {path}:{n}: expected `reviewer max [min]`, got {' '.join(parts)[:60]!r}")
        high = parse_int(parts[1], what, path, n, "max")
        low = parse_int(parts[2], what, path, n, "min") if len(parts) > 2 and parts[2] else None
        if high < 0 or (low is not None and not 0 <= low <= high):
            raise UsageError(f"--loads {path}:{n}: loads must satisfy 0 <= min <= max, got {parts[1:3]}")
        if repeats.first(parts[0], n, (high, low)):
            loads[parts[0]] = (high, low)
    repeats.report(warn)
    return loads


def read_attributes(path: str | Path, warn: Warn = no_warning) -> dict[str, dict[str, bool]]:
    """Reviewer attributes, a table with a header `reviewer,attr1,attr2...` (attribute names in any case, as
    --require's); a cell is true when it is 1/true/yes/y (any case). A reviewer repeated with the same
    flags is kept once (`warn` says so), with other flags refused. Returns {attribute: {reviewer id as
    given: flag}}."""
    what = "--attributes"
    rows = list(table_lines(path, what))
    if not rows:
        raise UsageError(f"--attributes {path} is empty")
    header = [name.lower() for name in rows[0][1]]
    if len(header) < 2:
        raise UsageError(f"--attributes {path}: the header names the reviewer column then the attributes")
    out: dict[str, dict[str, bool]] = {name: {} for name in header[1:]}
    repeats = Repeats(what, path, "reviewer")
    for n, parts in rows[1:]:
        if len(parts) != len(header):
            raise UsageError(f"--attributes {path}:{n}: {len(parts)} fields, the header has {len(header)}")
        flags = [value.strip().lower() in ("1", "true", "yes", "y") for value in parts[1:]]
        if repeats.first(parts[0], n, flags):
            for name, flag in zip(header[1:], flags):
                out[name][parts[0]] = flag
    repeats.report(warn)
    return out


def parse_requirement(text: str) -> Requirement:
    """`ATTR>=N`: every paper gets at least N reviewers with the attribute."""
    m = _REQUIRE.match(text)
    if not m:
        raise UsageError(f"--require {text!r}: expected ATTRIBUTE>=N, e.g. senior>=1")
    return Requirement(m.group(1).lower(), int(m.group(2)))  # as read_attributes reads the header


# --- seniority --------------------------------------------------------------------------------------------


def read_senior(rule: str, warn: Warn = no_warning) -> list[str] | None:
    """The reviewer ids of a `--senior FILE`, each once (`warn` says what was repeated); None for a papers>=N
    or years>=N rule."""
    if _RULE.match(rule):
        return None
    if not Path(rule).is_file():
        raise UsageError(f"--senior {rule!r}: expected papers>=N, years>=N or a file of reviewer ids")
    repeats = Repeats("--senior", rule, "id")
    given = [parts[0] for n, parts in table_lines(rule, "--senior") if parts[0] and repeats.first(parts[0], n)]
    if not given:
        raise bad_line("--senior", rule, None, "holds no reviewer ids (expected one id per line)")
    repeats.report(warn)
    return given


def senior_flags(rule: str, pool: ReviewerPool, index: EvidenceIndex,
                 resolve: Callable[[list[str]], Mapping[str, str]],
                 listed: list[str] | None = None) -> tuple[np.ndarray, str]:
    """Which pool reviewers are senior, and the rule in words. RULE: `papers>=N` (N papers in the graph),
    `years>=N` (first paper at least N years before the graph's latest year), or a file of reviewer ids
    (one per line, qualified or bare; `resolve` maps given ids to node ids; `listed`: that file's ids, when
    read_senior has read them already)."""
    m = _RULE.match(rule)
    if m:
        kind, n = m.group(1), int(m.group(2))
        if kind == "papers":
            return pool.n_papers >= n, f"at least {n} papers"
        snap = index.snapshot
        first = np.full(len(pool), np.iinfo(np.int64).max, dtype=np.int64)
        csr = snap.authorship.tocsr()
        years = snap.paper_year
        for r, a in enumerate(pool.author_rows):
            if a >= 0:
                py = years[csr.indices[csr.indptr[a]:csr.indptr[a + 1]]]
                py = py[py != NO_YEAR]
                if len(py):
                    first[r] = int(py.min())
        return first <= snap.max_year - n, f"first paper at least {n} years before {snap.max_year}"
    given = listed if listed is not None else read_senior(rule)
    assert given is not None, "a rule that is no papers>=N or years>=N is a file"
    ids = set(resolve(given).values()) | set(given)
    return np.array([rid in ids for rid in pool.author_ids], dtype=bool), f"listed in {rule}"


# --- affinities -------------------------------------------------------------------------------------------


@dataclass
class AffinityTable:
    """The kept candidate arcs: per submission its top affinities (conflicts and forbidden pairs out,
    forced pairs in), with the reviewer's rank for the paper and an evidence line."""

    papers: list[str]
    titles: list[str]
    reviewers: list[str]
    names: list[str | None]
    edge_paper: np.ndarray
    edge_reviewer: np.ndarray
    affinity: np.ndarray
    rank: np.ndarray
    evidence: list[str]
    forced: np.ndarray
    conflicts: np.ndarray  # per paper: pool reviewers ruled out by conflicts of interest
    in_graph: np.ndarray  # per paper: the submission is a paper of the graph (its assignment can be stored)
    notes: list[str] = field(default_factory=list)


NO_EVIDENCE = "no eligible evidence"  # a forced pair's evidence cell when its affinity could not be computed


def evidence_line(suggestion) -> str:
    """The suggestion's best evidence paper in one line, as `recommend` explains it."""
    if not suggestion.papers:
        return NO_EVIDENCE if suggestion.no_history else ""
    p = suggestion.papers[0]
    parts = [f"{name} {v:.2f}" for name, v in (("semantic", p.semantic), ("topic", p.topic),
                                                ("citation", p.citation)) if v is not None]
    cited = "; cited by the submission" if p.direct_link else ""
    return f"{(p.title or p.paper_id)[:60]} ({p.year or 'n.d.'}): {', '.join(parts)}{cited}"


def affinity_table(model, index: EvidenceIndex, queries: Sequence[Query], pool: ReviewerPool, *,
                   per_paper: int = 100, coi_years: int | None = 5, coi: bool = True,
                   forbid: Iterable[tuple[str, str]] = (), force: Iterable[tuple[str, str]] = (),
                   quiet: bool = True, details: AuthorDetails | None = None,
                   institution_years: int | None = 3) -> AffinityTable:
    """Each submission scored against the pool by the reviewer model; its best `per_paper` reviewers kept.
    `forbid`/`force` are (query id, pool reviewer id) pairs: forbidden ones are never candidates, forced
    ones always are (a forced pair overrides a conflict the graph found, which a note reports). `details`:
    the authors' institutions and email domains for those conflicts (coi.AuthorDetails); a note counts the
    conflicts ruled out by reason, with examples."""
    checker = ConflictChecker(index.snapshot, coauthor_years=coi_years, enabled=coi, details=details,
                              institution_years=institution_years)
    ruled_out: dict[str, list[tuple[str, str, str]]] = {}  # kind -> (paper, reviewer, why)
    forbidden: dict[str, set[int]] = {}
    for q, rid in forbid:
        forbidden.setdefault(q, set()).add(pool.row(rid))
    forced: dict[str, set[int]] = {}
    for q, rid in force:
        forced.setdefault(q, set()).add(pool.row(rid))
    e_paper: list[int] = []
    e_rev: list[int] = []
    aff: list[float] = []
    rank: list[int] = []
    evidence: list[str] = []
    is_forced: list[bool] = []
    n_conflicts = np.zeros(len(queries), dtype=np.int64)
    overridden = 0
    unscored: list[tuple[str, str]] = []
    for qi, q in enumerate(progress(queries, desc="affinities", unit="paper", quiet=quiet)):
        found = checker.pool_conflicts(pool, q)
        conflict_rows = np.array(sorted(found), dtype=np.int64)
        for r, why in found.items():
            ruled_out.setdefault(conflict_kind(why), []).append((q.id, pool.author_ids[r], why))
        n_conflicts[qi] = len(conflict_rows)
        must = forced.get(q.id, set())
        overridden += len(must & set(conflict_rows.tolist()))
        exclude = np.union1d(conflict_rows, np.fromiter(forbidden.get(q.id, ()), dtype=np.int64))
        exclude = exclude[~np.isin(exclude, np.fromiter(must, dtype=np.int64))]
        suggestions = model.recommend(index, q, pool, k=per_paper, exclude=exclude, coi=False,
                                      shortlist=max(500, per_paper), papers_per_reviewer=1)
        seen = set()
        for s in suggestions:
            r = pool.row(s.reviewer_id)
            if s.no_history and r not in must:
                # No eligible evidence, so no affinity: never a candidate on a placeholder score.
                unscored.append((q.id, s.reviewer_id))
                continue
            seen.add(r)
            e_paper.append(qi)
            e_rev.append(r)
            aff.append(s.score)
            rank.append(s.rank)
            evidence.append(evidence_line(s))
            is_forced.append(r in must)
        missing = sorted(must - seen)
        if missing:  # a forced reviewer outside the top affinities: scored on their own
            scores = model.score(index, q, pool, rows=np.array(missing, dtype=np.int64))
            for r, score in zip(missing, scores):
                e_paper.append(qi)
                e_rev.append(r)
                aff.append(float(score))
                rank.append(0)  # not among the kept candidates
                evidence.append("forced" if score > NO_HISTORY_SCORE else f"forced; {NO_EVIDENCE}")
                is_forced.append(True)
    notes = [conflicts_note(ruled_out)] if ruled_out else []
    if overridden:
        notes.append(f"{overridden} forced pair(s) override a conflict of interest found in the graph")
    if unscored:
        shown = ", ".join(f"{output_id(p)} {output_id(r)}" for p, r in unscored[:5])
        notes.append(f"{len(unscored):,} (submission, reviewer) pair(s) have no eligible evidence and are no "
                     f"candidates (e.g. {shown})")
    return AffinityTable(papers=[q.id for q in queries], titles=[q.title or "" for q in queries],
                         reviewers=list(pool.author_ids), names=list(pool.names),
                         edge_paper=np.array(e_paper, dtype=np.int64), edge_reviewer=np.array(e_rev, dtype=np.int64),
                         affinity=np.array(aff, dtype=np.float64), rank=np.array(rank, dtype=np.int64),
                         evidence=evidence, forced=np.array(is_forced, dtype=bool), conflicts=n_conflicts,
                         in_graph=np.array([q.paper_index is not None for q in queries], dtype=bool), notes=notes)


def build_problem(table: AffinityTable, *, demand: Sequence[int], max_load: int, min_load: int = 0,
                  loads: Mapping[str, tuple[int, int | None]] | None = None,
                  attributes: Mapping[str, np.ndarray] | None = None,
                  requirements: Sequence[Requirement] = ()) -> AssignmentProblem:
    """The solver's input: arcs from the table; per-reviewer loads (`loads`, keyed by pool reviewer id,
    override the defaults); attribute flags per pool reviewer."""
    n = len(table.reviewers)
    high = np.full(n, max_load, dtype=np.int64)
    low = np.full(n, min_load, dtype=np.int64)
    row = {rid: i for i, rid in enumerate(table.reviewers)}
    for rid, (hi, lo) in (loads or {}).items():
        i = row[rid]
        high[i] = hi
        low[i] = min(lo if lo is not None else min_load, hi)
    attributes = dict(attributes or {})
    for req in requirements:
        if req.attribute not in attributes:
            raise UsageError(f"requirement {req.attribute}>={req.at_least}: no reviewer attribute "
                             f"{req.attribute!r} (known: {', '.join(sorted(attributes)) or 'none'})")
    return AssignmentProblem(papers=list(table.papers), reviewers=list(table.reviewers),
                             edge_paper=table.edge_paper, edge_reviewer=table.edge_reviewer,
                             affinity=table.affinity, demand=np.asarray(demand, dtype=np.int64),
                             max_load=high, min_load=low, forced=table.forced, attributes=attributes,
                             requirements=list(requirements),
                             scored=np.array([not e.endswith(NO_EVIDENCE) for e in table.evidence], dtype=bool))


# --- the use case -----------------------------------------------------------------------------------------


@dataclass
class AssignmentRequest:
    """What the chair asks for (the CLI's options)."""

    paper_ids: Sequence[str] = ()
    queries_file: str | None = None
    venue: str | None = None
    year: int | None = None
    pool_file: str | None = None
    per_paper: int = 3
    max_load: int = 6
    min_load: int = 0
    loads_file: str | None = None
    coi: bool = True
    coi_years: int | None = 5
    institution_years: int | None = 3  # shared-institution conflicts: this many years up to the submission's
    forbid_file: str | None = None
    force_file: str | None = None
    senior: str | None = None
    attributes_file: str | None = None
    requirements: Sequence[str] = ()
    candidates_per_paper: int = 100
    method: str = "auto"
    max_prob: float | None = None
    seed: int = 0
    time_limit: float | None = None
    evidence_until: int | str | None = None  # query.evidence_as_of: None judges reviewers on all their papers
    conflicts_file: str | None = None  # declared conflicts in a tool's layout (declared.py); unknown ones reported
    emails_file: str | None = None  # `reviewer_id,email` rows: whom an email in a declared file or an export names
    need_emails: bool = False  # the output is keyed by email (HotCRP, CMT): read the reviewers' emails
    allow_empty: bool = False  # a --conflicts, --emails or --loads file that applies to nothing: go on, warned


@dataclass
class AssignmentOutcome:
    table: AffinityTable
    problem: AssignmentProblem
    assignment: Assignment
    baseline: Assignment  # the greedy one on the same input
    senior_rule: str | None
    forms: dict[str, dict[str, str]]  # node id -> the form the caller gave it in, per kind
    emails: EmailBook | None = None  # the reviewers' emails, when a file or the output needed them

    def rows(self) -> list[dict]:
        """One row per assigned pair, papers in input order, each paper's reviewers by affinity."""
        t, chosen = self.table, np.flatnonzero(self.assignment.chosen)
        chosen = chosen[np.lexsort((-t.affinity[chosen], t.edge_paper[chosen]))]
        return [{"paper": t.papers[t.edge_paper[e]], "title": t.titles[t.edge_paper[e]],
                 "reviewer": t.reviewers[t.edge_reviewer[e]], "name": t.names[t.edge_reviewer[e]] or "",
                 "affinity": None if t.evidence[e].endswith(NO_EVIDENCE) else float(t.affinity[e]),
                 "rank": int(t.rank[e]), "forced": bool(t.forced[e]),
                 "evidence": t.evidence[e]} for e in chosen]


@dataclass
class ChairFiles:
    """The chair's files, read before a model is loaded or the graph pulled: a bad one costs nothing."""

    queries: list[dict]
    pool: list[str] | None
    forbid: list[tuple[str, str]]
    force: list[tuple[str, str]]
    loads: dict[str, tuple[int, int | None]] | None
    senior: list[str] | None  # the ids of a --senior FILE
    attributes: dict[str, dict[str, bool]] | None
    requirements: list[Requirement]
    declared: list[DeclaredFile] = field(default_factory=list)  # --conflicts: applied where known, rest reported
    layouts: list[DeclaredFile] = field(default_factory=list)  # every pair file read, to say how (stderr)
    emails: list[tuple[str, str]] = field(default_factory=list)  # --emails rows

    @classmethod
    def read(cls, request: AssignmentRequest, warn: Warn = no_warning) -> ChairFiles:
        """`warn`: what the files repeat, kept once."""
        from scholargraph.ranking.reviewers.service import read_ids

        # --forbid and --force take the tools' layouts too: an OpenReview constraints file gives both kinds.
        forbid = read_declared(request.forbid_file, "--forbid", warn=warn) if request.forbid_file else None
        force = read_declared(request.force_file, "--force", plain="forced", warn=warn) if request.force_file \
            else None
        strict = [f for f in (forbid, force) if f is not None]
        declared = [read_declared(request.conflicts_file, "--conflicts", warn=warn)] if request.conflicts_file else []
        return cls(queries=read_jsonl(request.queries_file, "--queries", warn=warn) if request.queries_file else [],
                   pool=read_ids(request.pool_file, "--pool", warn) if request.pool_file else None,
                   forbid=[(p.paper, p.reviewer) for f in strict for p in f.conflicts],
                   force=[(p.paper, p.reviewer) for f in strict for p in f.forced],
                   loads=read_loads(request.loads_file, warn) if request.loads_file else None,
                   senior=read_senior(request.senior, warn) if request.senior else None,
                   attributes=read_attributes(request.attributes_file, warn) if request.attributes_file else None,
                   requirements=[parse_requirement(text) for text in request.requirements],
                   declared=declared, layouts=strict + declared,
                   emails=read_email_file(request.emails_file, warn=warn) if request.emails_file else [])


def _select_submissions(index: EvidenceIndex, request: AssignmentRequest, files: ChairFiles, resolve,
                        forms: dict[str, dict[str, str]]) -> tuple[list[Query], list[int | None]]:
    """The submissions and their per-paper reviewer counts (a JSONL record's `k`, else the default)."""
    snap = index.snapshot
    queries: list[Query] = []
    wanted: list[int | None] = []
    if request.paper_ids:
        res = resolve("paper", list(request.paper_ids), "--paper")
        forms["paper"].update(res.given_forms())
        queries += [index.query_for_paper(p) for p in res.node_ids()]
        wanted += [None] * len(res.node_ids())
    if request.venue is not None:
        if request.year is None:
            raise UsageError("--venue goes with --year (the submissions are a venue's papers of one year)")
        # A venue id in any form the graph knows (venue:sigir, the source's own id), else its exact name.
        found = resolve("venue", [request.venue], None).ids.values()
        venues = {snap.venue_index[v] for v in found if v in snap.venue_index}
        if not venues:
            key = request.venue.strip().lower()
            names = snap.venue_names or [None] * len(snap.venue_ids)
            venues = {v for v, name in enumerate(names) if (name or "").strip().lower() == key}
        if not venues:
            raise UsageError(f"--venue {request.venue!r}: no venue with this id or name in the graph")
        rows = np.flatnonzero(np.isin(snap.paper_venue, list(venues)) & (snap.paper_year == request.year)
                              & ~snap.paper_stub)
        if not len(rows):
            raise UsageError(f"--venue {request.venue!r} --year {request.year}: no papers in the graph")
        queries += [index.query_for_paper(int(p)) for p in rows]
        wanted += [None] * len(rows)
    if files.queries:
        queries += index.queries_from_records(files.queries)
        wanted += [r.get("k") for r in files.queries]  # read_jsonl checked: a positive integer or absent
    if not queries:
        raise UsageError("no submissions: give --paper, --venue with --year, or --queries")
    queries = evidence_as_of(queries, request.evidence_until)
    seen: set[str] = set()
    for q in queries:
        if q.id in seen:
            raise UsageError(f"submission {q.id} is given twice")
        seen.add(q.id)
    return queries, wanted


def _pairs_to_queries(pairs: list[tuple[str, str]], queries: Sequence[Query], pool: ReviewerPool, resolve,
                      forms: dict[str, dict[str, str]], what: str) -> list[tuple[str, str]]:
    """File pairs (ids as given) as (query id, pool reviewer id); a pair naming no submission or no pool
    reviewer is a UsageError: a chair's explicit pair is never dropped silently."""
    if not pairs:
        return []
    by_given = {q.id: q.id for q in queries}
    by_given.update({given: node for node, given in forms["paper"].items()})
    unknown_papers = sorted({p for p, _ in pairs if p not in by_given})
    if unknown_papers:
        res = resolve("paper", unknown_papers, None)
        by_given.update({g: n for g, n in res.ids.items() if n in {q.id for q in queries}})
    reviewers = sorted({r for _, r in pairs})
    rev = {r: r for r in reviewers if pool.row(r) >= 0}
    rest = [r for r in reviewers if r not in rev]
    if rest:
        res = resolve("author", rest, None)
        rev.update({g: n for g, n in res.ids.items() if pool.row(n) >= 0})
    bad = [f"{p} {r}" for p, r in pairs if p not in by_given or r not in rev]
    if bad:
        raise UsageError(f"{what}: {len(bad)} pair(s) name no submission or no pool reviewer: "
                         f"{', '.join(bad[:5])}{', ...' if len(bad) > 5 else ''}")
    return [(by_given[p], rev[r]) for p, r in pairs]


def plan_assignment(store, models_dir: Path, request: AssignmentRequest, *, quiet: bool = True,
                    warn: Callable[[str], None] = lambda message: None, index: EvidenceIndex | None = None,
                    model_and_meta=None, files: ChairFiles | None = None) -> AssignmentOutcome:
    """Affinities, constraints, feasibility, the solve and the greedy baseline on the same input."""
    from scholargraph.graph.ids import IdResolver
    from scholargraph.ranking.reviewers import assignment as solver
    from scholargraph.ranking.reviewers.service import index_for_model, load_model, read_author_details

    if request.max_prob is not None and not 0 < request.max_prob <= 1:
        raise UsageError("--max-prob must be in (0, 1]")
    files = files or ChairFiles.read(request, warn)  # before the model and the graph: a bad file costs nothing
    model, meta = model_and_meta or load_model(models_dir)
    index = index or index_for_model(store, models_dir, meta, quiet)
    resolver = IdResolver.for_snapshot(index.snapshot, lookup=store.lookup_ids if store is not None else None)

    def resolve(kind: str, given: list[str], what: str | None):
        res = resolver.resolve(kind, given)
        if what is not None:
            res = res.require(what)
            message = res.warning(what)
            if message:
                warn(message)
        return res

    forms: dict[str, dict[str, str]] = {"paper": {}, "author": {}}
    queries, wanted = _select_submissions(index, request, files, resolve, forms)
    if files.pool is not None:
        pool_ids = resolve("author", files.pool, "--pool")
        forms["author"].update(pool_ids.given_forms())
        pool = ReviewerPool.from_snapshot(index.snapshot, author_ids=pool_ids.node_ids())
    else:
        pool = ReviewerPool.from_snapshot(index.snapshot, min_papers=meta.get("min_papers", 3))
    emails = None
    if request.need_emails or files.emails or any(f.has_emails for f in files.layouts):
        emails = EmailBook.from_store(store, files.emails, lambda given: resolve("author", given, None).ids)
        unknown_emails = emails.warning()
        if unknown_emails:
            warn(unknown_emails)
        emails.require_listed(request.emails_file or "", len(files.emails), request.allow_empty, warn)
    forbid = _pairs_to_queries(_by_email(files.forbid, emails), queries, pool, resolve, forms, "--forbid")
    force = _pairs_to_queries(_by_email(files.force, emails), queries, pool, resolve, forms, "--force")
    declared = match_declared(files.declared, queries, forms["paper"],
                              lambda kind, given: resolve(kind, given, None).ids, emails)
    for line in declared.warnings("--conflicts"):
        warn(line)
    declared_out = {(q, a): why for q, found in declared.by_query.items() for a, why in found.items()
                    if pool.row(a) >= 0}
    declared_forced = [pair for pair in dict.fromkeys(declared.forced) if pool.row(pair[1]) >= 0]
    require_applied(files.declared, len(declared_out) + len(declared_forced), request.allow_empty, warn)
    forbidden, forced = set(forbid), set(force)  # once: a declared file may hold many thousand pairs
    forbid += [pair for pair in declared_out if pair not in forbidden]
    force += [pair for pair in declared_forced if pair not in forced]
    clash = set(forbid) & set(force)
    if clash:
        p, r = sorted(clash)[0]
        raise UsageError(f"{len(clash)} pair(s) are both forbidden and forced, e.g. {p} {r}")
    loads: dict[str, tuple[int, int | None]] = {}
    if files.loads is not None:
        given = files.loads
        res = resolve("author", list(given), "--loads")
        loads = {res.ids[g]: v for g, v in given.items() if g in res.ids and pool.row(res.ids[g]) >= 0}
        if not loads:
            require_effect("--loads", request.loads_file or "", len(given), "reviewer", request.allow_empty, warn)
    attributes: dict[str, np.ndarray] = {}
    requirements = list(files.requirements)
    senior_rule = None
    if request.senior:
        flags, senior_rule = senior_flags(request.senior, pool, index,
                                          lambda given: resolve("author", given, "--senior").ids, files.senior)
        attributes[SENIOR] = flags
        if not any(r.attribute == SENIOR for r in requirements):
            requirements.insert(0, Requirement(SENIOR, 1))
    if files.attributes is not None:
        for name, flags_given in files.attributes.items():
            res = resolve("author", list(flags_given), "--attributes")
            by_node = {res.ids[g]: f for g, f in flags_given.items() if g in res.ids}
            attributes[name] = np.array([by_node.get(rid, False) for rid in pool.author_ids], dtype=bool)
    # The reviewers' own expertise settings shape their papers (after the senior rule, which counts them all).
    cut = request.evidence_until if isinstance(request.evidence_until, int) else None
    book = profiles.load_book(store, index.snapshot, cut, resolver)
    emptied: set[str] = set()
    pool = profiles.with_profiles(book, pool, emptied)
    details = read_author_details(store) if store is not None and request.coi else None
    table = affinity_table(model, index, queries, pool, per_paper=request.candidates_per_paper,
                           coi_years=request.coi_years, coi=request.coi, forbid=forbid, force=force, quiet=quiet,
                           details=details, institution_years=request.institution_years)
    table.notes += declared_notes(files, declared_out)
    table.notes += profiles.settings_notes(book, pool, emptied)
    demand = [w if w is not None else request.per_paper for w in wanted]
    problem = build_problem(table, demand=demand, max_load=request.max_load, min_load=request.min_load,
                            loads=loads, attributes=attributes, requirements=requirements)
    solver.require_feasible(problem)
    method = request.method
    if request.max_prob is not None:
        method = "random"
    elif method == "auto":
        method = "milp" if len(requirements) > 1 else "flow"
    assignment = solver.solve(problem, method, max_prob=request.max_prob, seed=request.seed,
                              time_limit=request.time_limit)
    baseline = solver.solve(problem, "greedy")
    return AssignmentOutcome(table=table, problem=problem, assignment=assignment, baseline=baseline,
                             senior_rule=senior_rule, forms=forms, emails=emails)


def _by_email(pairs: list[tuple[str, str]], emails: EmailBook | None) -> list[tuple[str, str]]:
    """Pairs whose reviewer is an email (HotCRP's files) with the author node the email names; an email that
    names none stays as given, so that the strict check reports it."""
    if emails is None:
        return pairs
    return [(p, (emails.node_of(r) or r) if "@" in r else r) for p, r in pairs]


def declared_notes(files: ChairFiles, ruled_out: Mapping[tuple[str, str], str]) -> list[str]:
    """The summary's lines on declared conflicts: the explicit files' pair counts, and the --conflicts pairs
    ruled out in this pool, counted per reason (`declared (hotcrp)`, `declared (openreview)`, ...)."""
    lines = []
    for f in files.layouts:
        if f not in files.declared and (f.conflicts or f.forced):
            lines.append(f"{f.what}: {len(f.conflicts):,} declared conflict(s), {len(f.forced):,} forced pair(s) "
                         f"({LAYOUTS[f.layout]})")
    if files.declared:
        reasons: dict[str, int] = {}
        for why in ruled_out.values():
            reasons[why] = reasons.get(why, 0) + 1
        shown = ", ".join(f"{why} {n:,}" for why, n in sorted(reasons.items())) or "none in this pool"
        lines.append(f"declared conflicts ruled out: {len(ruled_out):,} (submission, reviewer) pair(s): {shown}")
    return lines


def publish_assignment(store, outcome: AssignmentOutcome, model_version: str, run_props: dict | None = None) -> str:
    """The assignment of the in-graph submissions as one scoring run of ASSIGNED_TO edges, switched in at
    once; it replaces the previous assignment as a whole."""
    from scholargraph.graph.scoring import publish_paper_scores

    in_graph = {p for p, flag in zip(outcome.table.papers, outcome.table.in_graph) if flag}
    rows = [{"source": row["reviewer"], "target": row["paper"],
             "props": {"affinity": row["affinity"], "rank": row["rank"], "forced": row["forced"],
                       "evidence": row["evidence"], "method": outcome.assignment.method}}
            for row in outcome.rows() if row["paper"] in in_graph]
    scored = [p for p in outcome.table.papers if p in in_graph]
    if not scored:  # an empty run would replace the stored assignment with nothing
        return (f"nothing stored: none of the {len(outcome.table.papers):,} submissions is in the graph "
                f"(ingest them to store their assignment)")
    note = publish_paper_scores(store, "assignment", rows, scored, model_version, queries=len(outcome.table.papers),
                                replace_all=True, run_props={"method": outcome.assignment.method, **(run_props or {})})
    skipped = len(outcome.table.papers) - len(scored)
    if skipped:
        note += f"; {skipped:,} submissions are not in the graph (ingest them to store their assignment)"
    return note
