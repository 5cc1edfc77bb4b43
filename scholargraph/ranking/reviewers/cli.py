"""CLI: `scholargraph reviewers train|recommend|evaluate` (RECO-Rank, CoF and semantic baselines)."""

from __future__ import annotations

import time

import click

from scholargraph.cli_output import allow_empty_option, emit, emit_text, rows_output, write_option
from scholargraph.cli_output import warn as _warn
from scholargraph.conference import exchange
from scholargraph.conference.conflicts import conflict_kind
from scholargraph.conference.declared import PAIRS, read_declared
from scholargraph.conference.submissions import SUBMISSION_YEAR, read_ids
from scholargraph.errors import UsageError
from scholargraph.graph.ids import output_id
from scholargraph.ranking.reviewers import service
from scholargraph.server.connect import open_store
from scholargraph.tables import Rows, Trec


def _num(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:.2f}"


class EvidenceCut(click.ParamType):
    """`--evidence-until`: a year, or `submission` (each submission's own year)."""

    name = "YEAR|submission"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value == SUBMISSION_YEAR:
            return value
        try:
            return int(str(value).strip())
        except ValueError:
            self.fail(f"{value!r}: a year (2019) or {SUBMISSION_YEAR!r}", param, ctx)


def evidence_until_option(command):
    return click.option(
        "--evidence-until", type=EvidenceCut(), default=None,
        help="Judge reviewers only on their papers up to this year, or up to each submission's own year "
             "(`submission`: a historical evaluation). Default: every paper of the reviewer counts, whatever "
             "year a submission carries.")(command)


def institution_years_option(command):
    return click.option(
        "--institution-years", default=3, show_default=True, type=click.IntRange(0, 200),
        help="Conflicts: reviewers at an institution of a submission's author in this many years up to the "
             "submission's year (affiliations from the dumps, profiles and PC lists); reviewers with an email at "
             "an author's organisation domain are conflicts too (public mail providers do not count).")(command)


def _score_cells(s, *values: float, digits: int = 6) -> list[str]:
    """A suggestion's numbers as cells; empty for a pair without eligible evidence (never a number standing
    for 'unknown': the warning on stderr counts them)."""
    return ["" if s.no_history else f"{v:.{digits}f}" for v in values]


def chair_tool_options(command):
    """`--conflicts FILE` and `--emails FILE`: what the chair's conference tools know about the reviewers."""
    command = click.option(
        "--emails", type=click.Path(exists=True, dir_okay=False), default=None,
        help="Reviewers' emails, `reviewer_id,email` rows: the address HotCRP and CMT files use (default: the "
             "Author nodes' emails from ingested profiles), and whom an email in --conflicts names.")(command)
    return click.option(
        "--conflicts", type=click.Path(exists=True, dir_okay=False), default=None,
        help="Declared conflicts, in any of: OpenReview constraints `paper,profile,-1` (1: forced), HotCRP bulk "
             "assignments `paper,action,email` (action conflict), HotCRP's PC-conflicts download, or `paper "
             "reviewer` pairs; reviewers by id or email. The layout found is said on stderr; pairs naming "
             "nobody known are reported, never dropped silently.")(command)


def _chair_files(conflicts: str | None, emails: str | None):
    """The --conflicts and --emails files, read before the store (a bad one is refused cheaply); how the
    conflicts file was read, and what the files repeat, goes to stderr."""
    declared = [read_declared(conflicts, "--conflicts", warn=_warn)] if conflicts else []
    for f in declared:
        _warn(f.describe())
    return declared, exchange.read_email_file(emails, warn=_warn) if emails else []


def _export(fmt: str, what: str, pairs: list[exchange.Pair], book, out: str | None, aside: list[str]) -> None:
    """A conference tool's file to --out or stdout; what it could not hold (no email, no score) to stderr."""
    done = exchange.export(fmt, what, pairs, book.email if book is not None else None)
    said = [*aside, *(f"scholargraph: {line}" for line in done.warnings(fmt))]
    if done.unscored_rows and out:
        side = exchange.unscored_path(out)
        with open(side, "w", encoding="utf-8") as fh:
            fh.write(done.unscored_rows + "\n")
        said.append(f"scholargraph: {fmt}: those pairs are in {side} (`paper,profile` rows without a score)")
    elif done.unscored_rows:
        said.append(f"scholargraph: {fmt}: give --out FILE to have those pairs written beside it")
    emit_text(done.text, out, said)


@click.group("reviewers")
def reviewers_group() -> None:
    """RECO-Rank: who should review a submission, cross-domain experts included, with the evidence."""


@reviewers_group.command("train")
@click.option("--min-papers", default=3, show_default=True, type=click.IntRange(1, 1000),
              help="Reviewer pool: authors with at least this many papers.")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Submissions JSONL with graded judgments (--qrels) to train on besides the graph.")
@click.option("--qrels", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Graded judgments of --queries: `query 0 reviewer grade` lines (grades 0-3).")
@click.option("--training-queries", default=600, show_default=True, type=click.IntRange(10, 100_000),
              help="Self-supervised training queries (hidden papers); fewer train faster.")
@click.option("--steps", default=300, show_default=True, type=click.IntRange(10, 100_000),
              help="Optimisation steps.")
@click.pass_obj
def train_cmd(obj, min_papers: int, queries: str | None, qrels: str | None, training_queries: int,
              steps: int) -> None:
    """Train on the graph (hidden papers, their authors as positives), plus judgments when given."""
    if (queries is None) != (qrels is None):
        raise UsageError("--queries and --qrels go together")
    t0 = time.perf_counter()
    # The user's files are read before the store is opened: a bad one is refused without a server.
    files = service.ReviewerFiles.for_training(queries, qrels, _warn) if queries and qrels is not None else None
    with open_store(obj.settings, quiet=obj.quiet) as store:
        trained = service.train(store, obj.settings.models_dir, min_papers=min_papers, files=files,
                                training_queries=training_queries, steps=steps, quiet=obj.quiet)
    info = trained.model.fit_info_
    click.echo(f"trained RECO-Rank on {info.get('queries', 0):,} queries ({info.get('judged', 0)} judged) with a "
               f"pool of {trained.pool_size:,} reviewers in {time.perf_counter() - t0:.1f}s -> {trained.path}")


@reviewers_group.command("recommend")
@click.option("--paper", "papers", multiple=True,
              help="An in-graph paper id (repeatable): a DOI, a qualified id (aminer:123) or the bare id (123).")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Submissions JSONL {id, title, abstract, year?, authors?, references?}.")
@click.option("--pool", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Author ids, one per line: qualified (s2author:1737249) or bare (1737249).")
@click.option("--candidates", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Rank only these candidates per query (qrels `qid 0 cand rel` or `qid cand`; author ids "
                   "qualified or bare).")
@click.option("--k", default=10, show_default=True, type=click.IntRange(1, 1000),
              help="Results per query: the reviewers suggested for each submission.")
@rows_output(about="Rows: query, rank, reviewer_id, name, score, main, compensation, gate, reliability, "
                   "no_history. trec, tsv and csv print ids as they were given (a bare id stays bare); jsonl prints "
                   "node ids, the given form beside them, and each suggestion's evidence papers.",
             tools=exchange.TOOL_FORMATS)
@write_option("SUGGESTED_REVIEWER edges for the submissions that are in-graph papers")
@chair_tool_options
@evidence_until_option
@click.option("--no-coi", is_flag=True, help="Do not exclude the conflicts of interest found in the graph "
              "(authors, recent co-authors, institution, email domain).")
@institution_years_option
@click.option("--picture", type=click.Path(dir_okay=False), default=None,
              help="Draw the first submission's top suggestion as a PNG: the submission, the reviewer's evidence "
                   "papers, the topics they share, citation links.")
@allow_empty_option("a --conflicts, --emails or --candidates file")
@click.pass_obj
def recommend_cmd(obj, papers, queries, pool, candidates, k, fmt, out, write, evidence_until, no_coi,
                  institution_years, picture, conflicts, emails, allow_empty) -> None:
    """Suggested reviewers with their explanation: main and compensation, gate, reliability, evidence papers."""
    if not papers and not queries:
        raise UsageError("give --paper ID or --queries FILE")
    forms: dict[str, dict[str, str]] = {}
    files = service.ReviewerFiles.for_recommend(queries, pool, candidates, _warn)  # before the store: cheap
    declared, email_rows = _chair_files(conflicts, emails)
    with open_store(obj.settings, quiet=obj.quiet) as store:
        book = None
        if fmt in exchange.NEEDS_EMAIL or email_rows or any(f.has_emails for f in declared):
            book = exchange.EmailBook.from_store(store, email_rows)
            if book.warning():
                _warn(str(book.warning()))
            book.require_listed(emails or "", len(email_rows), allow_empty, _warn)
        results, note = service.recommend(store, obj.settings.models_dir, paper_ids=papers, files=files, k=k,
                                          coi=not no_coi, write=write, quiet=obj.quiet, id_forms=forms,
                                          picture=picture, warn=_warn, evidence_until=evidence_until,
                                          institution_years=institution_years, declared=declared, emails=book,
                                          allow_empty=allow_empty)

    def given(kind: str, node_id: str) -> str:
        # Tabular outputs answer in the caller's ids (a run file is scored against the caller's qrels),
        # and never with whitespace in an id (TREC, TSV and CSV tools split on it).
        return output_id(forms[kind].get(node_id, node_id))

    if fmt in exchange.TOOL_FORMATS:
        pairs = [exchange.Pair(given("paper", q.id), given("author", s.reviewer_id), s.reviewer_id,
                               None if s.no_history else s.score) for q, sugg in results for s in sugg]
        _export(fmt, "scores", pairs, book, out, [note] if note else [])
        return
    columns = ["query", "rank", "reviewer_id", "name", "score", "main", "compensation", "gate", "reliability",
               "no_history"]
    cells: list[list] = []
    records: list[dict] = []
    text: list[str] = []
    for q, sugg in results:
        cells += [[given("paper", q.id), s.rank, given("author", s.reviewer_id), s.name or "",
                   *_score_cells(s, s.score, s.main, s.compensation), *_score_cells(s, s.gate, s.reliability, digits=4),
                   str(s.no_history).lower()] for s in sugg]
        for s in sugg:
            row = {"query": output_id(q.id), **s.to_dict(), "reviewer_id": output_id(s.reviewer_id)}
            if s.no_history:  # no number stands for 'could not be scored'
                row.update(score=None, main=None, compensation=None, gate=None, reliability=None)
            if q.id in forms["paper"]:
                row["given_query"] = forms["paper"][q.id]
            if s.reviewer_id in forms["author"]:
                row["given_id"] = forms["author"][s.reviewer_id]
            records.append(row)
        text.append(f"reviewers for {q.id}: {q.title}"[:120])
        for s in sugg:
            own = f"       expertise settings: {s.expertise_settings['summary']}" if s.expertise_settings else ""
            if s.no_history:
                text.append(f"{s.rank:>3}. {(s.name or s.reviewer_id)[:28]:<28} no score: no eligible evidence")
                text += [own] if own else []
                continue
            text.append(f"{s.rank:>3}. {(s.name or s.reviewer_id)[:28]:<28} score {s.score:6.3f} = main "
                        f"{s.main:6.3f} + compensation {s.compensation:6.3f} "
                        f"(gate {s.gate:.2f}, reliability {s.reliability:.2f})")
            text += [own] if own else []
            for p in s.papers[:3]:
                text.append(f"       {(p.title or p.paper_id)[:50]:<50} {p.year or '':>5}  "
                            f"semantic {_num(p.semantic)}  topic {_num(p.topic)}  citation {_num(p.citation)}"
                            + ("  (cited by the submission)" if p.direct_link else ""))
    emit(Rows(columns, cells, records=records, trec=Trec("query", "reviewer_id", "score", "reco-rank", rank="rank"),
              text=text), fmt, out, note=note)


@reviewers_group.command("conflicts")
@click.option("--paper", "papers", multiple=True, help="An in-graph paper id (repeatable), qualified or bare.")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Submissions JSONL {id, year?, authors?, author_ids?} (the recommend and assign file).")
@click.option("--pool", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Only these reviewers, one id per line (default: every author of the graph).")
@click.option("--coi-years", default=5, show_default=True, type=click.IntRange(0, 200),
              help="Co-authors of this many years up to the submission's year (0: authors only).")
@institution_years_option
@rows_output(formats=("table", "jsonl", "csv", "tsv"),
             about="Rows: paper, reviewer, name, reason (author | coauthor YEAR | institution NAME | email domain "
                   "DOMAIN).")
@click.pass_obj
def conflicts_cmd(obj, papers, queries, pool, coi_years, institution_years, fmt, out) -> None:
    """The conflicts of interest recommend and assign rule out, each with its reason."""
    from scholargraph.user_files import read_jsonl

    if not papers and not queries:
        raise UsageError("give --paper ID or --queries FILE")
    records = read_jsonl(queries, "--queries", warn=_warn) if queries else []  # before the store: a bad file is cheap
    pool_ids = read_ids(pool, "--pool", _warn) if pool else None
    with open_store(obj.settings, quiet=obj.quiet) as store:
        rows = service.list_conflicts(store, paper_ids=papers, records=records, pool_ids=pool_ids,
                                      coi_years=coi_years, institution_years=institution_years, quiet=obj.quiet,
                                      warn=_warn)
    columns = ["paper", "reviewer", "name", "reason"]
    cells = [[output_id(p), output_id(r), name or "", why] for p, r, name, why in rows]
    records_out = [dict(zip(columns, row)) for row in cells]
    text = [f"{p}  {r}  {name[:28]:<28}  {why}" for p, r, name, why in cells]
    kinds: dict[str, int] = {}
    for _, _, _, why in rows:
        kind = conflict_kind(why)
        kinds[kind] = kinds.get(kind, 0) + 1
    summary = [f"{len(rows):,} conflict(s): " + (", ".join(f"{k} {n:,}" for k, n in kinds.items()) or "none")]
    emit(Rows(columns, cells, records=records_out, text=text), fmt, out, summary=summary)


@reviewers_group.command("evaluate")
@click.option("--protocol", type=click.Choice(["candidates", "expertise"]), default="candidates",
              show_default=True,
              help="candidates: rank each query's judged candidates (Soft/Hard P@k, qrels grades 0-3); expertise: "
                   "reviewers' own ratings of papers (qrels `paper 0 reviewer expertise`), weighted Kendall loss.")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), required=True,
              help="The submissions JSONL {id, title, abstract, ...} the qrels judge.")
@click.option("--qrels", type=click.Path(exists=True, dir_okay=False), required=True,
              help="Judgments: `query 0 reviewer grade` (candidates) or `paper 0 reviewer expertise` (expertise).")
@click.option("--candidates", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Judged candidates per query (default: the judged reviewers of the qrels).")
@click.option("--seeds", default=1, show_default=True, type=click.IntRange(1, 10),
              help="RECO-Rank training seeds (candidates protocol).")
@click.option("--bootstrap", default=2000, show_default=True, type=click.IntRange(100, 100_000),
              help="Bootstrap resamples over reviewers for the 95% interval (expertise protocol).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="PNG chart of the table.")
@click.pass_obj
def evaluate_cmd(obj, protocol: str, queries: str, qrels: str, candidates: str | None, seeds: int, bootstrap: int,
                 plot: str | None) -> None:
    """RECO-Rank against CoF and the semantic baselines. `candidates`: Soft/Hard P@5/P@10 ranking only the judged
    candidates, with RECO-Rank's ablations. `expertise`: each (paper, reviewer) pair scored on its own, the
    weighted Kendall loss of every reviewer's order of their rated papers with a bootstrap interval."""
    if protocol == "expertise":
        from scholargraph.ranking.reviewers import expertise as ex

        judged = service.ReviewerFiles.for_expertise(queries, qrels, _warn)  # before the store: a bad file is cheap
        with open_store(obj.settings, quiet=obj.quiet) as store:
            done = service.evaluate_expertise(store, obj.settings.models_dir, queries, qrels, bootstrap=bootstrap,
                                              quiet=obj.quiet, warn=_warn, files=judged)
        click.echo(f"RECO-Rank: {done.origin}; text encoder: {done.encoder}")
        click.echo(ex.format_expertise_table(done.results, done.judgments))
        if plot:
            ex.plot_expertise(done.results, plot)
            click.echo(f"plot: {plot}")
        return
    from scholargraph.ranking.reviewers import evaluate as ev

    files = service.ReviewerFiles.for_candidates(queries, qrels, candidates, _warn)  # before the store: cheap
    with open_store(obj.settings, quiet=obj.quiet) as store:
        experiment = service.evaluate_candidates(store, obj.settings.models_dir, queries, qrels, candidates,
                                                 seeds=seeds, quiet=obj.quiet, warn=_warn, files=files)
    click.echo(experiment.table())
    if plot:
        ev.plot_results([experiment], plot)
        click.echo(f"plot: {plot}")


def _affinity_cell(affinity: float | None, digits: int = 6) -> str:
    """An assigned pair's affinity; empty for a forced pair whose affinity could not be computed."""
    return "" if affinity is None else f"{affinity:.{digits}f}"


DEFAULT_TIME_LIMIT = 300.0  # seconds for the integer programs: maxmin at a thousand papers can run for hours


@reviewers_group.command("assign")
@click.option("--paper", "papers", multiple=True,
              help="An in-graph submission id (repeatable): a DOI, a qualified id or the bare source id.")
@click.option("--venue", default=None, help="All papers of this venue (id or name) in --year are the submissions.")
@click.option("--year", type=int, default=None, help="The year of --venue's submissions.")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Submissions JSONL {id, title, abstract, authors?, references?, k?}; `k` overrides --per-paper.")
@click.option("--pool", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Reviewer ids, one per line (qualified or bare); default: authors with the model's minimum "
                   "number of papers.")
@click.option("--per-paper", default=3, show_default=True, type=click.IntRange(1, 100),
              help="Reviewers per submission.")
@click.option("--max-load", default=6, show_default=True, type=click.IntRange(0, 10_000),
              help="Most papers per reviewer.")
@click.option("--min-load", default=0, show_default=True, type=click.IntRange(0, 10_000),
              help="Fewest papers per reviewer (a hard bound).")
@click.option("--loads", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Per-reviewer loads `reviewer max [min]`, overriding --max-load/--min-load.")
@evidence_until_option
@click.option("--coi-years", default=5, show_default=True, type=click.IntRange(0, 200),
              help="Conflicts: the submission's authors and their co-authors of this many years (0: authors only).")
@click.option("--no-coi", is_flag=True, help="Do not rule out conflicts of interest found in the graph.")
@institution_years_option
@click.option("--forbid", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Pairs `paper reviewer` never to assign (declared conflicts), or a file of --conflicts' "
                   "layouts; unlike --conflicts, a pair naming no submission or pool reviewer is an error.")
@click.option("--force", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Pairs `paper reviewer` that must be assigned, or OpenReview constraints (1: forced, -1: "
                   "conflict).")
@chair_tool_options
@click.option("--senior", default=None,
              help="Every paper gets a senior reviewer: papers>=N, years>=N, or a file of senior reviewer ids.")
@click.option("--attributes", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Reviewer attributes, a table with a header `reviewer,attr1,...` (cells 1/0, true/false).")
@click.option("--require", "requirements", multiple=True,
              help="ATTR>=N: every paper gets at least N reviewers with the attribute (repeatable).")
@click.option("--candidates-per-paper", default=100, show_default=True, type=click.IntRange(1, 100_000),
              help="Affinities kept per submission (its best reviewers).")
@click.option("--method", type=click.Choice(["auto", "flow", "milp", "maxmin"]), default="auto", show_default=True,
              help="flow: min-cost flow (one attribute requirement); milp: integer program (any number); maxmin: "
                   "raise the worst paper's total affinity first, then the total. auto: flow, or milp for several "
                   "requirements.")
@click.option("--max-prob", type=float, default=None,
              help="Randomised assignment: no pair assigned with probability above Q (0 < Q <= 1).")
@click.option("--seed", default=0, show_default=True, help="Seed of the randomised assignment.")
@click.option("--time-limit", type=float, default=None,
              help="Seconds the integer programs (milp, maxmin) may take; default 300. maxmin then keeps the best "
                   "it found, never less fair than the min-cost flow.")
@rows_output(about="Rows: paper, reviewer, name, affinity, rank (the reviewer's rank for the paper), forced, "
                   "evidence; the summary follows a table on stdout, else goes to stderr.",
             tools=exchange.TOOL_FORMATS)
@write_option("the assignment as ASSIGNED_TO edges")
@allow_empty_option("a --conflicts, --emails, --loads or --attributes file")
@click.pass_obj
def assign_cmd(obj, papers, venue, year, queries, pool, per_paper, max_load, min_load, loads, coi_years, no_coi,
               institution_years, forbid, force, senior, attributes, requirements, candidates_per_paper, method,
               max_prob, seed, time_limit, fmt, out, write, evidence_until, conflicts, emails, allow_empty) -> None:
    """Assign reviewers to submissions under loads, conflicts and attribute requirements, against a greedy
    baseline on the same input; the summary reports every constraint (to stderr unless --format table)."""
    from scholargraph.conference import assignment as solver
    from scholargraph.conference.assignment.plan import AssignmentRequest, ChairFiles, publish_assignment
    from scholargraph.ranking.reviewers.assign import plan_assignment

    request = AssignmentRequest(paper_ids=papers, queries_file=queries, venue=venue, year=year, pool_file=pool,
                                per_paper=per_paper, max_load=max_load, min_load=min_load, loads_file=loads,
                                coi=not no_coi, coi_years=coi_years, institution_years=institution_years,
                                forbid_file=forbid, force_file=force,
                                senior=senior, attributes_file=attributes, requirements=requirements,
                                candidates_per_paper=candidates_per_paper, method=method, max_prob=max_prob, seed=seed,
                                time_limit=time_limit if time_limit is not None else DEFAULT_TIME_LIMIT,
                                evidence_until=evidence_until, conflicts_file=conflicts, emails_file=emails,
                                need_emails=fmt in exchange.NEEDS_EMAIL, allow_empty=allow_empty)
    files = ChairFiles.read(request, _warn)  # a bad file is refused before the server, the model or the graph
    for f in files.layouts:
        if f.layout != PAIRS or f in files.declared:  # --forbid/--force of plain pairs read as they always were
            _warn(f.describe())
    with open_store(obj.settings, quiet=obj.quiet) as store:
        model_and_meta = service.load_model(obj.settings.models_dir)
        outcome = plan_assignment(store, obj.settings.models_dir, request, quiet=obj.quiet, warn=_warn,
                                  model_and_meta=model_and_meta, files=files)
        note = publish_assignment(store, outcome, model_and_meta[1]["version"]) if write else ""

    def given(kind: str, node_id: str) -> str:
        return output_id(outcome.forms[kind].get(node_id, node_id))

    rows = outcome.rows()
    columns = ["paper", "reviewer", "name", "affinity", "rank", "forced", "evidence"]
    cells = [[given("paper", r["paper"]), given("author", r["reviewer"]), r["name"], _affinity_cell(r["affinity"]),
              r["rank"], str(r["forced"]).lower(), r["evidence"]] for r in rows]
    records = [{**r, "paper": given("paper", r["paper"]), "reviewer": given("author", r["reviewer"])} for r in rows]
    text: list[str] = []
    current = None
    for r in rows:
        if r["paper"] != current:
            current = r["paper"]
            text.append(f"{given('paper', current)}: {r['title']}"[:120])
        affinity = _affinity_cell(r["affinity"], 3) or "n/a"
        text.append(f"   {(r['name'] or r['reviewer'])[:28]:<28} affinity {affinity:>6}  rank "
                    f"{r['rank'] or '-':>3}{'  forced' if r['forced'] else ''}  {r['evidence'][:70]}")
    summary = [f"submissions {len(outcome.problem.papers):,}, reviewers {len(outcome.problem.reviewers):,}, "
               f"candidate pairs {len(outcome.problem.affinity):,} (conflicts ruled out "
               f"{int(outcome.table.conflicts.sum()):,})"]
    if outcome.senior_rule:
        summary.append(f"senior: {outcome.senior_rule} ({int(outcome.problem.attributes['senior'].sum()):,} of "
                       f"{len(outcome.problem.reviewers):,} reviewers)")
    summary += outcome.table.notes
    summary += solver.format_summary(solver.summarize(outcome.assignment))
    summary += solver.compare_lines([solver.summarize(outcome.assignment), solver.summarize(outcome.baseline)])
    if fmt in exchange.TOOL_FORMATS:
        pairs = [exchange.Pair(given("paper", r["paper"]), given("author", r["reviewer"]), r["reviewer"],
                               r["affinity"]) for r in rows]
        _export(fmt, "assignment", pairs, outcome.emails, out, [*summary, *([note] if note else [])])
        return
    trec = Trec("paper", "reviewer", "affinity", f"assign-{outcome.assignment.method}")
    emit(Rows(columns, cells, records=records, trec=trec, text=text), fmt, out, summary=summary, note=note)


# --- reviewers' own expertise settings ------------------------------------------------------------------


@reviewers_group.group("profile")
def profile_group() -> None:
    """Reviewers' own expertise settings, kept on their Author node: papers excluded, a minimum year, a recency
    window, weights per source or venue. recommend, assign and the reviewers job honour them."""


def _weights(given: tuple[str, ...]) -> list[tuple[str, float]]:
    from scholargraph.conference.profiles import parse_weight

    out = []
    for text in given:
        try:
            out.append(parse_weight(text))
        except ValueError as exc:
            raise UsageError(f"--weight {exc}") from None
    return out


@profile_group.command("set")
@click.argument("reviewer")
@click.option("--exclude", multiple=True, help="A paper never to count as this reviewer's expertise (repeatable; "
                                               "qualified or bare id, a DOI). Exclusions accumulate.")
@click.option("--include", multiple=True, help="Take an excluded paper back (repeatable).")
@click.option("--since", type=click.IntRange(0, 9999), default=None, help="Only papers of this year or later.")
@click.option("--recent", type=click.IntRange(1, 200), default=None,
              help="Only papers of the last N years (up to --evidence-until's year, else the graph's latest year).")
@click.option("--weight", "weights", multiple=True,
              help="source:NAME=W (a source prefix of the paper's ids: s2, aminer, dblp...) or venue:ID-or-name=W; "
                   "multiplies those papers' evidence (1 by default, 0 leaves them out; repeatable).")
@click.pass_obj
def profile_set_cmd(obj, reviewer: str, exclude, include, since, recent, weights) -> None:
    """Set a reviewer's expertise settings (what is not given stays as it was)."""
    from scholargraph.conference import profiles

    if not (exclude or include or since is not None or recent is not None or weights):
        raise UsageError("give at least one of --exclude, --include, --since, --recent, --weight")
    parsed = _weights(weights)  # before the store: a bad weight is cheap
    with open_store(obj.settings, quiet=obj.quiet) as store:
        author_id, settings = profiles.set_profile(store, reviewer, exclude=exclude, include=include, since=since,
                                                   recent_years=recent, weights=parsed)
    click.echo(f"expertise settings of {output_id(author_id)}: {settings.describe()}")


@profile_group.command("show")
@click.argument("reviewer")
@rows_output(formats=("table", "jsonl", "csv", "tsv"),
             about="Rows: paper, year, weight, left_out (why a paper is not evidence), title.")
@click.pass_obj
def profile_show_cmd(obj, reviewer: str, fmt: str, out: str | None) -> None:
    """A reviewer's settings, and which of their papers they leave as evidence (with each paper's weight)."""
    from scholargraph.conference import profiles
    from scholargraph.graph.snapshot import GraphSnapshot

    with open_store(obj.settings, quiet=obj.quiet) as store:
        author_id = profiles.resolve_reviewer(store, reviewer)
        snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=obj.quiet)
        view = profiles.show_profile(store, snapshot, author_id)
    columns = ["paper", "year", "weight", "left_out", "title"]
    cells = [[output_id(p["paper_id"]), p["year"] or "", f"{p['weight']:g}", p["left_out"] or "", p["title"] or ""]
             for p in view.papers]
    head = [f"{output_id(view.reviewer_id)} {view.name or ''}".rstrip(),
            f"expertise settings: {view.settings.describe()}"
            + (f" (recency up to {view.reference_year})" if view.settings.recent_years is not None else ""),
            f"evidence: {view.n_eligible:,} of {len(view.papers):,} papers"]
    if view.papers and not view.n_eligible:
        head.append("no paper is left as evidence: this reviewer gets no score")
    text = head + [f"  {c[0]:<40} {c[1]!s:>4}  {'left out: ' + c[3] if c[3] else 'weight ' + c[2]:<22} "
                   f"{c[4][:60]}" for c in cells]
    records = [{"reviewer": output_id(view.reviewer_id), "settings": view.settings.to_dict(),
                **{k: (output_id(v) if k == "paper_id" and v else v) for k, v in p.items()}} for p in view.papers]
    emit(Rows(columns, cells, records=records, text=text), fmt, out,
         summary=[] if fmt == "table" else head)


@profile_group.command("clear")
@click.argument("reviewer")
@click.option("--what", "parts", multiple=True, type=click.Choice(["exclude", "since", "recent", "weights"]),
              help="Clear only these settings (repeatable); default: all.")
@click.pass_obj
def profile_clear_cmd(obj, reviewer: str, parts) -> None:
    """Remove a reviewer's expertise settings (all of them, or those named by --what)."""
    from scholargraph.conference import profiles

    with open_store(obj.settings, quiet=obj.quiet) as store:
        author_id, settings = profiles.clear_profile(store, reviewer, parts or profiles.PARTS)
    click.echo(f"expertise settings of {output_id(author_id)}: {settings.describe()}")


@profile_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.pass_obj
def profile_import_cmd(obj, file: str) -> None:
    """Replace the settings of the reviewers a JSONL file lists, one per line: {"reviewer": ID, "exclude": [paper
    ids], "since": YEAR, "recent_years": N, "weights": {"source:dblp": 0.5, "venue:ID": 2}} (all but reviewer
    optional). Ids unknown to the graph are left out with a warning (count and examples)."""
    from scholargraph.conference import profiles

    records = profiles.read_settings_file(file, "FILE", _warn)  # before the store: a bad file is cheap
    with open_store(obj.settings, quiet=obj.quiet) as store:
        report = profiles.import_settings(store, records)
    for line in report.warnings():
        _warn(f"warning: profile import {file}: {line}")
    click.echo(f"imported the expertise settings of {report.written:,} reviewer(s) from {file}")
