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
from scholargraph.user_files import count, examples, require_effect


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
    is_scored: list[bool] = []  # False: a forced pair without eligible evidence, its score a placeholder
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
            is_scored.append(not s.no_history)
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
                is_scored.append(bool(score > NO_HISTORY_SCORE))
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
                         evidence=evidence, forced=np.array(is_forced, dtype=bool),
                         scored=np.array(is_scored, dtype=bool), conflicts=n_conflicts,
                         in_graph=np.array([q.paper_index is not None for q in queries], dtype=bool), notes=notes)


def _select_submissions(index: EvidenceIndex, request: AssignmentRequest, files: ChairFiles, resolve,
                        forms: dict[str, dict[str, str]],
                        warn: Callable[[str], None]) -> tuple[list[Query], list[int | None]]:
    """The submissions and their per-paper reviewer counts (a JSONL record's `k`, else the default), each
    once. A graph paper named twice (by --paper in two forms, by --paper and by --venue) is one submission:
    kept once, and said, as a user file's repeat is (user_files.Repeats). A --queries record under the id of
    a graph paper named otherwise describes that submission a second way; which one holds is not ours to
    guess: a UsageError naming both (a repeat inside the file read_jsonl kept once or refused already)."""
    snap = index.snapshot
    queries: list[Query] = []
    wanted: list[int | None] = []
    named: dict[str, str] = {}  # a graph submission's node id and given form -> the option that names it
    if request.paper_ids:
        res = resolve("paper", list(request.paper_ids), "--paper")
        forms["paper"].update(res.given_forms())
        nodes = res.node_ids()
        seen: set[str] = set()
        again = []
        for g in (g for g in request.paper_ids if g in res.ids):
            if res.ids[g] in seen:
                again.append(g)
            seen.add(res.ids[g])
        if again:
            warn(f"warning: --paper: {count(len(again), 'submission')} given more than once, kept once: "
                 f"{examples([output_id(g) for g in again], lead='')}")
        queries += [index.query_for_paper(p) for p in nodes]
        wanted += [None] * len(nodes)
        named.update({key: "--paper" for p in nodes for key in (p, forms["paper"].get(p, p))})
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
        option = f"--venue {request.venue} --year {request.year}"
        again = [snap.paper_ids[p] for p in rows if snap.paper_ids[p] in named]
        if again:
            warn(f"warning: {option}: {count(len(again), 'submission')} also given by --paper, kept once: "
                 f"{examples([output_id(forms['paper'].get(p, p)) for p in again], lead='')}")
        rows = np.array([p for p in rows if snap.paper_ids[p] not in named], dtype=np.int64)
        queries += [index.query_for_paper(int(p)) for p in rows]
        wanted += [None] * len(rows)
        named.update({snap.paper_ids[p]: option for p in rows})
    if files.queries:
        both = [str(r["id"]) for r in files.queries if str(r["id"]) in named]
        if both:
            raise UsageError(f"--queries {request.queries_file}: submission {output_id(both[0])} is also given by "
                             f"{named[both[0]]}, as a paper of the graph"
                             f"{f' ({len(both) - 1:,} more likewise)' if len(both) > 1 else ''}: give each "
                             "submission once, as the graph's paper or as the file's record")
        queries += index.queries_from_records(files.queries)
        wanted += [r.get("k") for r in files.queries]  # read_jsonl checked: a positive integer or absent
    if not queries:
        raise UsageError("no submissions: give --paper, --venue with --year, or --queries")
    return evidence_as_of(queries, request.evidence_until), wanted


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

    def resolve(kind: str, given: list[str], what: str | None, required: bool = True):
        """`what`: the option, whose unknown ids are said; `required`: none known is exit 2 at once (a file
        that is not required goes to require_effect, which --allow-empty answers)."""
        res = resolver.resolve(kind, given)
        if what is not None:
            if required:
                res = res.require(what)
            message = res.warning(what)
            if message:
                warn(message)
        return res

    forms: dict[str, dict[str, str]] = {"paper": {}, "author": {}}
    queries, wanted = _select_submissions(index, request, files, resolve, forms, warn)
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
        res = resolve("author", list(given), "--loads", required=False)
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
        listed = list(dict.fromkeys(g for flags_given in files.attributes.values() for g in flags_given))
        res = resolve("author", listed, "--attributes", required=False)
        if not any(g in res.ids and pool.row(res.ids[g]) >= 0 for g in listed):
            require_effect("--attributes", request.attributes_file or "", len(listed), "reviewer",
                           request.allow_empty, warn)
        for name, flags_given in files.attributes.items():
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
