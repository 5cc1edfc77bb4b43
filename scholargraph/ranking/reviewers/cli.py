"""CLI: `scholargraph reviewers train|recommend|evaluate` (RECO-Rank, CoF and semantic baselines)."""

from __future__ import annotations

import csv
import io
import json
import time
from dataclasses import asdict
from pathlib import Path

import click

from scholargraph.errors import NotFitted, UsageError
from scholargraph.graph.cli import emit_lines, resolve_ids
from scholargraph.graph.connect import open_store
from scholargraph.graph.features import current_model_paths, load_models
from scholargraph.graph.ids import IdResolver, Resolution, output_id
from scholargraph.graph.records import paper_text
from scholargraph.graph.scoring import publish_paper_scores
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.vectors import stored_text_vectors
from scholargraph.ranking.metrics import format_run_lines, read_qrels
from scholargraph.ranking.reviewers.evidence import EvidenceIndex, ReviewerPool
from scholargraph.ranking.reviewers.reco_rank import RecoRank

MODEL_SUBDIR = "reviewers"


def _current(models_dir: Path) -> Path:
    return models_dir / MODEL_SUBDIR / "current.json"


def build_index(store, models_dir: Path, quiet: bool, models: dict[str, str] | None = None) -> EvidenceIndex:
    """Evidence over the graph as it is now, with the encoder and topic model saved in `models`
    ({"topics": dir, "encoder": dir}; by default the graph's current ones, when saved)."""
    topic_model, encoder = load_models(current_model_paths(models_dir) if models is None else models)
    key = encoder.key if encoder is not None and getattr(encoder, "fitted_", False) else None
    snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=quiet, with_vectors=key is not None,
                                        semantic_encoder=key)
    # The vectors `features` stored with this encoder are read, not recomputed; only papers without one
    # (ingested since) are encoded here.
    text = stored_text_vectors(snapshot, encoder)[0] if key is not None else None
    return EvidenceIndex.build(snapshot, encoder=encoder, topic_model=topic_model, text_vectors=text)


def index_for_model(store, models_dir: Path, meta: dict, quiet: bool) -> EvidenceIndex:
    """Evidence read with the encoder and topic model the reviewer model was trained with (a later
    `citations train` or `features --retrain` changes the graph's current ones, not this model's inputs)."""
    return build_index(store, models_dir, quiet, models=meta.get("evidence_models"))


def load_model(models_dir: Path) -> tuple[RecoRank, dict]:
    current = _current(models_dir)
    if not current.exists():
        raise NotFitted("no reviewer model: run `scholargraph reviewers train` first")
    meta = json.loads(current.read_text())
    return RecoRank.load(meta["path"]), meta


def _num(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:.2f}"


def _read_ids(path: str) -> list[str]:
    """Ids as a file gives them, one per line (its first field; blank lines and `#` comments skipped).
    They are user ids: resolve them (graph.ids.IdResolver) before looking them up."""
    return [line.split()[0] for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def _candidates(path: str) -> dict[str, list[str]]:
    """TREC qrels `qid 0 cand rel` or two columns `qid cand`, ids as the file gives them (resolve them with
    `_resolve_candidates` before scoring: a bare S2 author id is not a node id)."""
    out: dict[str, list[str]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) >= 4:
            out.setdefault(parts[0], []).append(parts[2])
        elif len(parts) == 2:
            out.setdefault(parts[0], []).append(parts[1])
    return out


def _resolve_candidates(resolver: IdResolver, listed: dict[str, list[str]],
                        what: str = "--candidates") -> tuple[dict[str, list[str]], Resolution]:
    """Candidate lists with every id resolved to its author node id (the qualified id, or the source's bare
    id when exactly one author has it); unknown ones are left out with a warning, and none known at all is
    a UsageError (exit 2): never a silent default score for an id the graph does not have."""
    res = resolve_ids(resolver, "author", [c for cands in listed.values() for c in cands], what)
    return {qid: list(dict.fromkeys(res.ids[c] for c in cands if c.strip() in res.ids))
            for qid, cands in listed.items()}, res


def _row(fmt: str, cells: list) -> str:
    """One TSV or CSV line (CSV quoted where a cell needs it; a name may hold a comma)."""
    if fmt == "tsv":
        return "\t".join(" ".join(str(c).split()) for c in cells)
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(cells)
    return out.getvalue()


@click.group("reviewers")
def reviewers_group() -> None:
    """RECO-Rank: who should review a submission, cross-domain experts included, with the evidence."""


@reviewers_group.command("train")
@click.option("--min-papers", default=3, show_default=True, type=click.IntRange(1, 1000),
              help="Reviewer pool: authors with at least this many papers.")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Submissions JSONL with graded judgments (--qrels) to train on besides the graph.")
@click.option("--qrels", type=click.Path(exists=True, dir_okay=False), default=None)
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
    evidence_models = current_model_paths(obj.settings.models_dir)
    with open_store(obj.settings, quiet=obj.quiet) as store:
        index = build_index(store, obj.settings.models_dir, obj.quiet, models=evidence_models)
    pool = ReviewerPool.from_snapshot(index.snapshot, min_papers=min_papers)
    judged = []
    if queries:
        grades = read_qrels(qrels)
        judged = [(q, grades[q.id]) for q in index.read_queries(queries) if grades.get(q.id)]
    model = RecoRank(min_papers=min_papers, self_supervised=training_queries, steps=steps).fit(index, pool,
                                                                                             judged=judged)
    version = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    path = obj.settings.models_dir / MODEL_SUBDIR / version
    model.save(path)
    _current(obj.settings.models_dir).write_text(json.dumps({"path": str(path), "version": version,
                                                             "min_papers": min_papers,
                                                             "evidence_models": evidence_models}, indent=2))
    click.echo(f"trained RECO-Rank on {model.fit_info_.get('queries', 0):,} queries "
               f"({model.fit_info_.get('judged', 0)} judged) with a pool of {len(pool):,} reviewers "
               f"in {time.perf_counter() - t0:.1f}s -> {path}")


def recommend_reviewers(store, models_dir: Path, *, paper_ids=(), queries_file: str | None = None,
                        pool_file: str | None = None, candidates_file: str | None = None, k: int = 10,
                        coi: bool = True, write: bool = False, quiet: bool = True, index: EvidenceIndex | None = None,
                        replace_all: bool = False, run_props: dict | None = None,
                        id_forms: dict[str, dict[str, str]] | None = None):
    """Suggestions per query; with `write`, a scoring run that stores them for the in-graph papers and
    keeps the current suggestions of every other paper (`replace_all`: only this run's papers remain).

    Paper and author ids (`paper_ids`, the pool and candidate files) may be qualified or the source's bare
    ids: they are resolved to node ids (graph.ids.IdResolver); unknown ones are left out with a warning, and
    an option none of whose ids is known is a UsageError. `id_forms`, when given, is filled with
    {"paper": {node id: given id}, "author": {...}} for ids given in another form, so that outputs can
    answer in the caller's own ids."""
    model, meta = load_model(models_dir)
    index = index or index_for_model(store, models_dir, meta, quiet)
    resolver = IdResolver.for_snapshot(index.snapshot, lookup=store.lookup_ids if store is not None else None)
    forms = id_forms if id_forms is not None else {}
    forms.setdefault("paper", {})
    forms.setdefault("author", {})
    queries = []
    if paper_ids:
        papers = resolve_ids(resolver, "paper", paper_ids, "--paper")
        forms["paper"].update(papers.given_forms())
        queries = [index.query_for_paper(p) for p in papers.node_ids()]
    if queries_file:
        queries += index.read_queries(queries_file)
    if pool_file:
        pool_ids = resolve_ids(resolver, "author", _read_ids(pool_file), "--pool")
        forms["author"].update(pool_ids.given_forms())
        base_pool = ReviewerPool.from_snapshot(index.snapshot, author_ids=pool_ids.node_ids())
    else:
        base_pool = ReviewerPool.from_snapshot(index.snapshot, min_papers=meta.get("min_papers", 3))
    candidates: dict[str, list[str]] = {}
    if candidates_file:
        candidates, cand_ids = _resolve_candidates(resolver, _candidates(candidates_file))
        forms["author"].update(cand_ids.given_forms())
    results = []
    for q in queries:
        # A query is listed under its id, or under the form its paper id was given in (a bare id).
        listed = candidates.get(q.id, candidates.get(forms["paper"].get(q.id, q.id)))
        if listed is not None:
            # The CoF protocol: rank exactly the listed candidates; each known one gets a score, history
            # or not (unknown ids were left out with a warning above).
            if not listed:
                results.append((q, []))
                continue
            pool = ReviewerPool.from_snapshot(index.snapshot, author_ids=listed)
            results.append((q, model.recommend(index, q, pool, k=len(pool), coi=coi, shortlist=None)))
        else:
            results.append((q, model.recommend(index, q, base_pool, k=k, coi=coi)))
    note = ""
    if write:
        rows = [{"source": s.reviewer_id, "target": q.id,
                 "props": {"score": s.score, "rank": s.rank, "main": s.main, "compensation": s.compensation,
                           "gate": s.gate, "reliability": s.reliability,
                           "evidence": json.dumps([asdict(p) for p in s.papers], default=str)}}
                for q, sugg in results if q.id in index.snapshot.paper_index for s in sugg]
        scored = [q.id for q, _ in results if q.id in index.snapshot.paper_index]
        note = publish_paper_scores(store, "reviewers", rows, scored, meta["version"], queries=len(results),
                                    replace_all=replace_all, run_props=run_props)
    return results, note


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
@click.option("--k", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--format", "fmt", type=click.Choice(["table", "jsonl", "trec", "tsv", "csv"]), default="table",
              show_default=True, help="trec, tsv and csv print ids as they were given (a bare id stays bare); "
                                      "jsonl prints node ids, and the given form beside them.")
@click.option("--out", type=click.Path(dir_okay=False), default=None)
@click.option("--write", is_flag=True, help="Store SUGGESTED_REVIEWER edges for in-graph papers.")
@click.option("--no-coi", is_flag=True, help="Do not exclude the authors and their recent co-authors.")
@click.pass_obj
def recommend_cmd(obj, papers, queries, pool, candidates, k, fmt, out, write, no_coi) -> None:
    """Suggested reviewers with their explanation: main and compensation, gate, reliability, evidence papers."""
    if not papers and not queries:
        raise UsageError("give --paper ID or --queries FILE")
    forms: dict[str, dict[str, str]] = {}
    with open_store(obj.settings, quiet=obj.quiet) as store:
        results, note = recommend_reviewers(store, obj.settings.models_dir, paper_ids=papers, queries_file=queries,
                                            pool_file=pool, candidates_file=candidates, k=k, coi=not no_coi,
                                            write=write, quiet=obj.quiet, id_forms=forms)

    def given(kind: str, node_id: str) -> str:
        # Tabular outputs answer in the caller's ids (a run file is scored against the caller's qrels),
        # and never with whitespace in an id (TREC, TSV and CSV tools split on it).
        return output_id(forms[kind].get(node_id, node_id))

    lines: list[str] = []
    if fmt in ("tsv", "csv"):
        lines.append(_row(fmt, ["query", "rank", "reviewer_id", "name", "score", "main", "compensation", "gate",
                                "reliability", "no_history"]))
    for q, sugg in results:
        if fmt == "trec":
            lines += format_run_lines(given("paper", q.id), [(given("author", s.reviewer_id), s.score) for s in sugg],
                                      "reco-rank")
        elif fmt in ("tsv", "csv"):
            lines += [_row(fmt, [given("paper", q.id), s.rank, given("author", s.reviewer_id), s.name or "",
                                 f"{s.score:.6f}", f"{s.main:.6f}", f"{s.compensation:.6f}", f"{s.gate:.4f}",
                                 f"{s.reliability:.4f}", str(s.no_history).lower()]) for s in sugg]
        elif fmt == "jsonl":
            for s in sugg:
                row = {"query": output_id(q.id), **s.to_dict(), "reviewer_id": output_id(s.reviewer_id)}
                if q.id in forms["paper"]:
                    row["given_query"] = forms["paper"][q.id]
                if s.reviewer_id in forms["author"]:
                    row["given_id"] = forms["author"][s.reviewer_id]
                lines.append(json.dumps(row, default=str, ensure_ascii=False))
        else:
            lines.append(f"reviewers for {q.id}: {q.title}"[:120])
            for s in sugg:
                flag = " (no history)" if s.no_history else ""
                lines.append(f"{s.rank:>3}. {(s.name or s.reviewer_id)[:28]:<28} score {s.score:6.3f} = main "
                             f"{s.main:6.3f} + compensation {s.compensation:6.3f} "
                             f"(gate {s.gate:.2f}, reliability {s.reliability:.2f}){flag}")
                for p in s.papers[:3]:
                    lines.append(f"       {(p.title or p.paper_id)[:50]:<50} {p.year or '':>5}  "
                                 f"semantic {_num(p.semantic)}  topic {_num(p.topic)}  citation {_num(p.citation)}"
                                 + ("  (cited by the submission)" if p.direct_link else ""))
    emit_lines(lines, out, note)


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
        _evaluate_expertise(obj, queries, qrels, bootstrap, plot)
        return
    from scholargraph.ranking.reviewers import evaluate as ev

    with open_store(obj.settings, quiet=obj.quiet) as store:
        index = build_index(store, obj.settings.models_dir, obj.quiet)
    cand_file = candidates or qrels
    if candidates:
        judgments = ev.synthetic_judgments(index, queries, qrels, cand_file)
    else:  # reviewer ids as the qrels give them: resolve them (a bare source id is not a node id)
        grades = read_qrels(qrels)
        cands, res = _resolve_candidates(IdResolver.for_snapshot(index.snapshot), _candidates(cand_file),
                                         "--qrels reviewers")
        grades = {qid: {res.ids[a]: g for a, g in judged.items() if a in res.ids} for qid, judged in grades.items()}
        judgments = ev.Judgments(index.read_queries(queries), grades, cands)
    pool = ReviewerPool.from_snapshot(index.snapshot, min_papers=3)
    training = ev.synthetic_training(index, pool)
    experiment = ev.run_experiment(index, judgments, title="reviewer recommendation", training=training,
                                   seeds=tuple(range(seeds)))
    click.echo(experiment.table())
    if plot:
        ev.plot_results([experiment], plot)
        click.echo(f"plot: {plot}")


def _evaluate_expertise(obj, queries: str, qrels: str, bootstrap: int, plot: str | None) -> None:
    """The trained reviewer model (trained here on the graph when there is none yet) and the baselines on
    reviewers' expertise ratings; reviewer ids as the qrels give them (bare source ids resolve)."""
    from scholargraph.ranking.reviewers import expertise as ex

    ratings = ex.read_expertise_qrels(qrels)
    with open_store(obj.settings, quiet=obj.quiet) as store:
        try:
            model, meta = load_model(obj.settings.models_dir)
            index = index_for_model(store, obj.settings.models_dir, meta, obj.quiet)
            origin = f"the trained model {meta.get('version')}"
        except NotFitted:
            model, index = None, build_index(store, obj.settings.models_dir, obj.quiet)
            origin = "no trained model yet: trained now on the graph (run `reviewers train` to keep one)"
    resolution = resolve_ids(IdResolver.for_snapshot(index.snapshot), "author", list(ratings), "--qrels reviewers")
    with open(queries, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    texts = {str(r["id"]): paper_text(r.get("title"), r.get("abstract")) for r in records if "id" in r}
    judgments = ex.ExpertiseJudgments.build(index, index.read_queries(queries), ratings, resolution.ids, texts)
    if not judgments.ratings:
        raise UsageError("no reviewer of the qrels has two rated papers among the queries: nothing to evaluate")
    if model is None:
        model = RecoRank().fit(index)
    results = ex.expertise_experiment(index, judgments, model, bootstrap=bootstrap)
    click.echo(f"RECO-Rank: {origin}; text encoder: {getattr(index.encoder, 'name', '?')}")
    click.echo(ex.format_expertise_table(results, judgments))
    if plot:
        ex.plot_expertise(results, plot)
        click.echo(f"plot: {plot}")
