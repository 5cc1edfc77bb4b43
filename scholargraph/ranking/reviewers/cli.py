"""CLI: `scholargraph reviewers train|recommend|evaluate` (RECO-Rank, CoF and semantic baselines)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

import click

from scholargraph.errors import NotFitted, UsageError
from scholargraph.graph.cli import emit_lines
from scholargraph.graph.connect import open_store
from scholargraph.graph.features import current_model_paths, load_models
from scholargraph.graph.scoring import publish_paper_scores
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.ranking.metrics import format_run_lines, read_qrels
from scholargraph.ranking.reviewers.evidence import EvidenceIndex, ReviewerPool
from scholargraph.ranking.reviewers.reco_rank import RecoRank

MODEL_SUBDIR = "reviewers"


def _current(models_dir: Path) -> Path:
    return models_dir / MODEL_SUBDIR / "current.json"


def build_index(store, models_dir: Path, quiet: bool, models: dict[str, str] | None = None) -> EvidenceIndex:
    """Evidence over the graph as it is now, with the encoder and topic model saved in `models`
    ({"topics": dir, "encoder": dir}; by default the graph's current ones, when saved)."""
    snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=quiet)
    topic_model, encoder = load_models(current_model_paths(models_dir) if models is None else models)
    return EvidenceIndex.build(snapshot, encoder=encoder, topic_model=topic_model)


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
    return [line.split()[0] for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def _candidates(path: str) -> dict[str, list[str]]:
    """TREC qrels `qid 0 cand rel` or two columns `qid cand`."""
    out: dict[str, list[str]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 4:
            out.setdefault(parts[0], []).append(parts[2])
        elif len(parts) == 2:
            out.setdefault(parts[0], []).append(parts[1])
    return out


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
                        replace_all: bool = False, run_props: dict | None = None):
    """Suggestions per query; with `write`, a scoring run that stores them for the in-graph papers and
    keeps the current suggestions of every other paper (`replace_all`: only this run's papers remain)."""
    model, meta = load_model(models_dir)
    index = index or index_for_model(store, models_dir, meta, quiet)
    queries = [index.query_for_paper(p) for p in paper_ids]
    if queries_file:
        queries += index.read_queries(queries_file)
    base_pool = (ReviewerPool.from_snapshot(index.snapshot, author_ids=_read_ids(pool_file)) if pool_file
                 else ReviewerPool.from_snapshot(index.snapshot, min_papers=meta.get("min_papers", 3)))
    candidates = _candidates(candidates_file) if candidates_file else {}
    results = []
    for q in queries:
        if q.id in candidates:
            # The CoF protocol: rank exactly the listed candidates; each gets a score, history or not.
            pool = ReviewerPool.from_snapshot(index.snapshot, author_ids=candidates[q.id])
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
@click.option("--paper", "papers", multiple=True, help="An in-graph paper id (repeatable).")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Submissions JSONL {id, title, abstract, year?, authors?, references?}.")
@click.option("--pool", type=click.Path(exists=True, dir_okay=False), default=None, help="Author ids, one per line.")
@click.option("--candidates", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Rank only these candidates per query (qrels `qid 0 cand rel` or `qid cand`).")
@click.option("--k", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--format", "fmt", type=click.Choice(["table", "jsonl", "trec"]), default="table", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None)
@click.option("--write", is_flag=True, help="Store SUGGESTED_REVIEWER edges for in-graph papers.")
@click.option("--no-coi", is_flag=True, help="Do not exclude the authors and their recent co-authors.")
@click.pass_obj
def recommend_cmd(obj, papers, queries, pool, candidates, k, fmt, out, write, no_coi) -> None:
    """Suggested reviewers with their explanation: main and compensation, gate, reliability, evidence papers."""
    if not papers and not queries:
        raise UsageError("give --paper ID or --queries FILE")
    with open_store(obj.settings, quiet=obj.quiet) as store:
        results, note = recommend_reviewers(store, obj.settings.models_dir, paper_ids=papers, queries_file=queries,
                                            pool_file=pool, candidates_file=candidates, k=k, coi=not no_coi,
                                            write=write, quiet=obj.quiet)
    lines: list[str] = []
    for q, sugg in results:
        if fmt == "trec":
            lines += format_run_lines(q.id, [(s.reviewer_id, s.score) for s in sugg], "reco-rank")
        elif fmt == "jsonl":
            lines += [json.dumps({"query": q.id, **s.to_dict()}, default=str, ensure_ascii=False) for s in sugg]
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
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), required=True)
@click.option("--qrels", type=click.Path(exists=True, dir_okay=False), required=True)
@click.option("--candidates", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Judged candidates per query (default: the judged reviewers of the qrels).")
@click.option("--seeds", default=1, show_default=True, type=click.IntRange(1, 10))
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="PNG chart of the table.")
@click.pass_obj
def evaluate_cmd(obj, queries: str, qrels: str, candidates: str | None, seeds: int, plot: str | None) -> None:
    """Soft/Hard P@5/P@10 ranking only the judged candidates: RECO-Rank, its ablations, CoF, TF-IDF, BM25
    and the embedding ranker side by side."""
    from scholargraph.ranking.reviewers import evaluate as ev

    with open_store(obj.settings, quiet=obj.quiet) as store:
        index = build_index(store, obj.settings.models_dir, obj.quiet)
    cand_file = candidates or qrels
    judgments = ev.synthetic_judgments(index, queries, qrels, cand_file) if candidates else \
        ev.Judgments(index.read_queries(queries), read_qrels(qrels), _candidates(cand_file))
    pool = ReviewerPool.from_snapshot(index.snapshot, min_papers=3)
    training = ev.synthetic_training(index, pool)
    experiment = ev.run_experiment(index, judgments, title="reviewer recommendation", training=training,
                                   seeds=tuple(range(seeds)))
    click.echo(experiment.table())
    if plot:
        ev.plot_results([experiment], plot)
        click.echo(f"plot: {plot}")
