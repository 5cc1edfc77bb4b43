"""CLI: `scholargraph reviewers train|recommend|evaluate` (RECO-Rank, CoF and semantic baselines)."""

from __future__ import annotations

import time

import click

from scholargraph.cli_output import emit, rows_output, write_option
from scholargraph.errors import UsageError
from scholargraph.graph.ids import output_id
from scholargraph.ranking.reviewers import service
from scholargraph.server.connect import open_store
from scholargraph.tables import Rows, Trec


def _num(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:.2f}"


def _warn(message: str) -> None:
    click.echo(f"scholargraph: {message}", err=True)


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
    files = service.ReviewerFiles.for_training(queries, qrels) if queries and qrels is not None else None
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
                   "node ids, the given form beside them, and each suggestion's evidence papers.")
@write_option("SUGGESTED_REVIEWER edges for the submissions that are in-graph papers")
@click.option("--no-coi", is_flag=True, help="Do not exclude the authors and their recent co-authors.")
@click.option("--picture", type=click.Path(dir_okay=False), default=None,
              help="Draw the first submission's top suggestion as a PNG: the submission, the reviewer's evidence "
                   "papers, the topics they share, citation links.")
@click.pass_obj
def recommend_cmd(obj, papers, queries, pool, candidates, k, fmt, out, write, no_coi, picture) -> None:
    """Suggested reviewers with their explanation: main and compensation, gate, reliability, evidence papers."""
    if not papers and not queries:
        raise UsageError("give --paper ID or --queries FILE")
    forms: dict[str, dict[str, str]] = {}
    files = service.ReviewerFiles.for_recommend(queries, pool, candidates)  # before the store: a bad file is cheap
    with open_store(obj.settings, quiet=obj.quiet) as store:
        results, note = service.recommend(store, obj.settings.models_dir, paper_ids=papers, files=files, k=k,
                                          coi=not no_coi, write=write, quiet=obj.quiet, id_forms=forms,
                                          picture=picture, warn=_warn)

    def given(kind: str, node_id: str) -> str:
        # Tabular outputs answer in the caller's ids (a run file is scored against the caller's qrels),
        # and never with whitespace in an id (TREC, TSV and CSV tools split on it).
        return output_id(forms[kind].get(node_id, node_id))

    columns = ["query", "rank", "reviewer_id", "name", "score", "main", "compensation", "gate", "reliability",
               "no_history"]
    cells: list[list] = []
    records: list[dict] = []
    text: list[str] = []
    for q, sugg in results:
        cells += [[given("paper", q.id), s.rank, given("author", s.reviewer_id), s.name or "", f"{s.score:.6f}",
                   f"{s.main:.6f}", f"{s.compensation:.6f}", f"{s.gate:.4f}", f"{s.reliability:.4f}",
                   str(s.no_history).lower()] for s in sugg]
        for s in sugg:
            row = {"query": output_id(q.id), **s.to_dict(), "reviewer_id": output_id(s.reviewer_id)}
            if q.id in forms["paper"]:
                row["given_query"] = forms["paper"][q.id]
            if s.reviewer_id in forms["author"]:
                row["given_id"] = forms["author"][s.reviewer_id]
            records.append(row)
        text.append(f"reviewers for {q.id}: {q.title}"[:120])
        for s in sugg:
            flag = " (no history)" if s.no_history else ""
            text.append(f"{s.rank:>3}. {(s.name or s.reviewer_id)[:28]:<28} score {s.score:6.3f} = main "
                        f"{s.main:6.3f} + compensation {s.compensation:6.3f} "
                        f"(gate {s.gate:.2f}, reliability {s.reliability:.2f}){flag}")
            for p in s.papers[:3]:
                text.append(f"       {(p.title or p.paper_id)[:50]:<50} {p.year or '':>5}  "
                            f"semantic {_num(p.semantic)}  topic {_num(p.topic)}  citation {_num(p.citation)}"
                            + ("  (cited by the submission)" if p.direct_link else ""))
    emit(Rows(columns, cells, records=records, trec=Trec("query", "reviewer_id", "score", "reco-rank", rank="rank"),
              text=text), fmt, out, note=note)


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

        judged = service.ReviewerFiles.for_expertise(queries, qrels)  # before the store: a bad file is cheap
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

    files = service.ReviewerFiles.for_candidates(queries, qrels, candidates)  # before the store: a bad file is cheap
    with open_store(obj.settings, quiet=obj.quiet) as store:
        experiment = service.evaluate_candidates(store, obj.settings.models_dir, queries, qrels, candidates,
                                                 seeds=seeds, quiet=obj.quiet, warn=_warn, files=files)
    click.echo(experiment.table())
    if plot:
        ev.plot_results([experiment], plot)
        click.echo(f"plot: {plot}")


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
@click.option("--coi-years", default=5, show_default=True, type=click.IntRange(0, 200),
              help="Conflicts: the submission's authors and their co-authors of this many years (0: authors only).")
@click.option("--no-coi", is_flag=True, help="Do not rule out conflicts of interest found in the graph.")
@click.option("--forbid", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Pairs `paper reviewer` never to assign (declared conflicts).")
@click.option("--force", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Pairs `paper reviewer` that must be assigned.")
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
                   "evidence; the summary follows a table on stdout, else goes to stderr.")
@write_option("the assignment as ASSIGNED_TO edges")
@click.pass_obj
def assign_cmd(obj, papers, venue, year, queries, pool, per_paper, max_load, min_load, loads, coi_years, no_coi,
               forbid, force, senior, attributes, requirements, candidates_per_paper, method, max_prob, seed,
               time_limit, fmt, out, write) -> None:
    """Assign reviewers to submissions under loads, conflicts and attribute requirements, against a greedy
    baseline on the same input; the summary reports every constraint (to stderr unless --format table)."""
    from scholargraph.ranking.reviewers import assignment as solver
    from scholargraph.ranking.reviewers.assign import (
        AssignmentRequest,
        ChairFiles,
        plan_assignment,
        publish_assignment,
    )

    request = AssignmentRequest(paper_ids=papers, queries_file=queries, venue=venue, year=year, pool_file=pool,
                                per_paper=per_paper, max_load=max_load, min_load=min_load, loads_file=loads,
                                coi=not no_coi, coi_years=coi_years, forbid_file=forbid, force_file=force,
                                senior=senior, attributes_file=attributes, requirements=requirements,
                                candidates_per_paper=candidates_per_paper, method=method, max_prob=max_prob, seed=seed,
                                time_limit=time_limit if time_limit is not None else DEFAULT_TIME_LIMIT)
    files = ChairFiles.read(request)  # a bad file is refused before the server, the model or the graph
    with open_store(obj.settings, quiet=obj.quiet) as store:
        model_and_meta = service.load_model(obj.settings.models_dir)
        outcome = plan_assignment(store, obj.settings.models_dir, request, quiet=obj.quiet, warn=_warn,
                                  model_and_meta=model_and_meta, files=files)
        note = publish_assignment(store, outcome, model_and_meta[1]["version"]) if write else ""

    def given(kind: str, node_id: str) -> str:
        return output_id(outcome.forms[kind].get(node_id, node_id))

    rows = outcome.rows()
    columns = ["paper", "reviewer", "name", "affinity", "rank", "forced", "evidence"]
    cells = [[given("paper", r["paper"]), given("author", r["reviewer"]), r["name"], f"{r['affinity']:.6f}",
              r["rank"], str(r["forced"]).lower(), r["evidence"]] for r in rows]
    records = [{**r, "paper": given("paper", r["paper"]), "reviewer": given("author", r["reviewer"])} for r in rows]
    text: list[str] = []
    current = None
    for r in rows:
        if r["paper"] != current:
            current = r["paper"]
            text.append(f"{given('paper', current)}: {r['title']}"[:120])
        text.append(f"   {(r['name'] or r['reviewer'])[:28]:<28} affinity {r['affinity']:6.3f}  rank "
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
    trec = Trec("paper", "reviewer", "affinity", f"assign-{outcome.assignment.method}")
    emit(Rows(columns, cells, records=records, trec=trec, text=text), fmt, out, summary=summary, note=note)
