"""The chair's side of a reviewer assignment: the chair's files (loads, forbidden and forced pairs, seniority,
attributes, declared conflicts, emails), the affinity table a model fills, the AssignmentProblem the solvers
take, the outcome as rows, and the assignment stored as a scoring run.

Nothing here knows the affinity model: ranking/reviewers/assign.py asks the model for the table and hands it
here. Nothing here imports click (the CLI prints)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scholargraph.conference.assignment.problem import Assignment, AssignmentProblem, Requirement
from scholargraph.conference.declared import LAYOUTS, DeclaredFile, read_declared
from scholargraph.conference.exchange import EmailBook, read_email_file
from scholargraph.conference.submissions import Query, ReviewerPool, read_ids
from scholargraph.errors import UsageError
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot
from scholargraph.user_files import (
    INTEGER,
    Repeats,
    Warn,
    bad_line,
    id_field,
    no_warning,
    parse_int,
    read_jsonl,
    table_lines,
)

SENIOR = "senior"
_RULE = re.compile(r"^\s*(papers|years)\s*>=\s*(\d+)\s*$")
_REQUIRE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*>=\s*(\d+)\s*$")


# --- the chair's files --------------------------------------------------------------------------------------


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
    given = [reviewer for n, parts in table_lines(rule, "--senior")
             if (reviewer := id_field(parts[0])) and repeats.first(reviewer, n)]
    if not given:
        raise bad_line("--senior", rule, None, "holds no reviewer ids (expected one id per line)")
    repeats.report(warn)
    return given


def senior_flags(rule: str, pool: ReviewerPool, snapshot: GraphSnapshot,
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
        snap = snapshot
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
    forced pairs in), with the reviewer's rank for the paper and an evidence line. `scored` is False for an
    arc whose affinity could not be computed (a forced pair without eligible evidence): its `affinity` cell is
    a placeholder that no total, mean or file may show."""

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
    scored: np.ndarray  # per arc: the affinity was computed (set by whoever fills the table, never guessed)
    conflicts: np.ndarray  # per paper: pool reviewers ruled out by conflicts of interest
    in_graph: np.ndarray  # per paper: the submission is a paper of the graph (its assignment can be stored)
    notes: list[str] = field(default_factory=list)


NO_EVIDENCE = "no eligible evidence"  # a forced pair's evidence cell when its affinity could not be computed


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
                             scored=table.scored)


# --- the chair's request and its outcome -------------------------------------------------------------


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
    evidence_until: int | str | None = None  # submissions.evidence_as_of: None judges reviewers on all their papers
    conflicts_file: str | None = None  # declared conflicts in a tool's layout (declared.py); unknown ones reported
    emails_file: str | None = None  # `reviewer_id,email` rows: whom an email in a declared file or an export names
    need_emails: bool = False  # the output is keyed by email (HotCRP, CMT): read the reviewers' emails
    allow_empty: bool = False  # a --conflicts, --emails, --loads or --attributes file that applies to nothing: go on


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
                 "affinity": float(t.affinity[e]) if t.scored[e] else None,
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


def pairs_to_queries(pairs: list[tuple[str, str]], queries: Sequence[Query], pool: ReviewerPool, resolve,
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


def by_email(pairs: list[tuple[str, str]], emails: EmailBook | None) -> list[tuple[str, str]]:
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
