"""Reviewer assignment as a use case: the reviewer model's affinities for the chair's submissions and pool,
conflicts from the graph, then the conference's side (conference/assignment/plan.py: the chair's files, the
AssignmentProblem, the solvers, the stored run).

This is the one place where the affinity model meets the assignment; nothing here imports click."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from scholargraph.conference import profiles
from scholargraph.conference.assignment.plan import (
    NO_EVIDENCE,
    SENIOR,
    AffinityTable,
    AssignmentOutcome,
    AssignmentRequest,
    ChairFiles,
    build_problem,
    by_email,
    declared_notes,
    pairs_to_queries,
    senior_flags,
)
from scholargraph.conference.assignment.problem import Requirement
from scholargraph.conference.conflicts import AuthorDetails, ConflictChecker, conflict_kind, conflicts_note
from scholargraph.conference.declared import match_declared, require_applied
from scholargraph.conference.exchange import EmailBook
from scholargraph.conference.submissions import Query, ReviewerPool, evidence_as_of
from scholargraph.errors import UsageError
from scholargraph.graph.ids import output_id
from scholargraph.progress import progress
from scholargraph.ranking.reviewers.evidence import EvidenceIndex
from scholargraph.ranking.reviewers.reco_rank_net import NO_HISTORY_SCORE
from scholargraph.user_files import require_effect


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
    the authors' institutions and email domains for those conflicts (conflicts.AuthorDetails); a note counts the
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


def plan_assignment(store, models_dir: Path, request: AssignmentRequest, *, quiet: bool = True,
                    warn: Callable[[str], None] = lambda message: None, index: EvidenceIndex | None = None,
                    model_and_meta=None, files: ChairFiles | None = None) -> AssignmentOutcome:
    """Affinities, constraints, feasibility, the solve and the greedy baseline on the same input."""
    from scholargraph.conference import assignment as solver
    from scholargraph.graph.ids import IdResolver
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
    forbid = pairs_to_queries(by_email(files.forbid, emails), queries, pool, resolve, forms, "--forbid")
    force = pairs_to_queries(by_email(files.force, emails), queries, pool, resolve, forms, "--force")
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
        flags, senior_rule = senior_flags(request.senior, pool, index.snapshot,
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
