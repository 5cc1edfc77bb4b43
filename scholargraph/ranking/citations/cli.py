"""CLI: `scholargraph citations train|recommend|evaluate` (Citeomatic: NNSelect + NNRank, BM25 baseline)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import cast

import click

from scholargraph.cli_output import emit, resolve_ids, rows_output, warn, write_option
from scholargraph.errors import UsageError
from scholargraph.graph.features import make_current
from scholargraph.graph.ids import IdResolver, output_id
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.ranking.citations.bm25 import BM25
from scholargraph.ranking.citations.nnrank import NNRank
from scholargraph.ranking.citations.nnselect import NNSelect, NNSelectParams
from scholargraph.ranking.citations.recommender import (
    ENCODER_DIR,
    CitationRecommender,
    Query,
    read_queries,
    time_split_queries,
)
from scholargraph.ranking.citations.service import (
    has_model,
    load_recommender,
    ranker_encoder,
    recommend_citations,
    registry,
    text_only_recommender,
)
from scholargraph.ranking.citations.textonly import too_few_citations
from scholargraph.ranking.metrics import read_qrels
from scholargraph.server.connect import open_store
from scholargraph.tables import Rows, Trec, text_table
from scholargraph.user_files import read_text


@click.group("citations")
def citations_group() -> None:
    """Citeomatic: what a draft should cite, from its title and abstract alone."""


def encoder_option(f):
    return click.option(
        "--encoder", "encoder_name", default="auto", show_default=True,
        help="The pretrained encoder NNRank reads evidence from (its cosine of draft and paper, and the "
             "citations of the draft's nearest papers by it): auto (the graph's, as `features` stored its "
             "vectors, else the current citation model's), none, or a name such as minilm-onnx-int8.")(f)


def seed_option(f):
    return click.option(
        "--seed", type=click.IntRange(0), default=NNSelectParams.seed, show_default=True,
        help="Seed of NNSelect's and NNRank's initialisation and sampling: the same seed on the same graph "
             "trains the same model (training runs on one torch thread). Other seeds show the spread of a "
             "result (on hep-th about 0.005 F1@20).")(f)


def training_size_options(f):
    """--epochs and --max-triplets: how much NNSelect trains, for `train` and the model `evaluate --time-split`
    trains (the same sizes evaluate the configuration that is served)."""
    f = click.option("--max-triplets", type=click.IntRange(1000, 100_000_000), default=NNSelectParams.max_triplets,
                     show_default=True, help="NNSelect training triplets per epoch (fewer: faster, rougher).")(f)
    return click.option("--epochs", type=click.IntRange(1, 100), default=NNSelectParams.epochs, show_default=True,
                        help="NNSelect epochs.")(f)


def ranker_and_snapshot(obj, store, no_ranker: bool, encoder_name: str, seed: int):
    """NNRank reading the chosen pretrained encoder (none without a ranker), the encoder, and the graph with
    that encoder's stored vectors; one line says which."""
    encoder = None if no_ranker else ranker_encoder(obj.settings.models_dir, encoder_name)
    snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=obj.quiet, with_vectors=encoder is not None,
                                        semantic_encoder=None if encoder is None else encoder.key)
    if encoder is not None:
        stored = 0 if snapshot.semantic_vectors is None else int(snapshot.semantic_vectors.any(axis=1).sum())
        click.echo(f"NNRank reads the pretrained encoder {encoder.name}: its vectors of {stored:,} papers are in "
                   "the graph, the rest are encoded now", err=True)
    elif not no_ranker:
        click.echo("NNRank without a pretrained encoder's evidence (--encoder none, or none in the graph: "
                   "`scholargraph features` stores one's vectors)", err=True)
    return (None if no_ranker else NNRank(use_encoder=encoder is not None, seed=seed)), encoder, snapshot


@citations_group.command("train")
@click.option("--as-of", "as_of", type=int, default=None, help="Train on papers up to this year only.")
@click.option("--no-ranker", is_flag=True, help="Train NNSelect only (no NNRank re-ranker).")
@training_size_options
@click.option("--fusion", default="auto", show_default=True, callback=lambda _c, _p, v: parse_fusion(v),
              help="Fusion of the re-ranked list with BM25's (reciprocal rank): auto chooses none or k on the last "
                   "year's citing papers over a second model trained as of the year before (twice the training "
                   "time); none serves the re-ranked list alone; a number k always fuses with that k.")
@encoder_option
@seed_option
@click.pass_obj
def train_cmd(obj, as_of: int | None, no_ranker: bool, epochs: int, max_triplets: int, fusion: int | str | None,
              encoder_name: str, seed: int) -> None:
    """Train NNSelect (text embedding, triplet loss on the citation graph) and NNRank (re-ranker)."""
    t0 = time.perf_counter()
    with open_store(obj.settings, quiet=obj.quiet) as store:
        ranker, encoder, snapshot = ranker_and_snapshot(obj, store, no_ranker, encoder_name, seed)
    short = too_few_citations(snapshot.as_of(as_of) if as_of is not None else snapshot)
    if short:
        # Not an error: a library without citations is served by the text-only ranker.
        click.echo(f"{short}: nothing trained. `scholargraph citations recommend` answers with the text-only "
                   "ranker (BM25, fused with the pretrained encoder's vectors when `features` stored them)")
        return
    rec = CitationRecommender(NNSelect(epochs=epochs, max_triplets=max_triplets, seed=seed), ranker,
                              encoder=encoder, fusion=fusion).fit(snapshot, as_of=as_of, quiet=obj.quiet)
    reg = registry(obj.settings.models_dir)
    version, base = reg.claim()
    # The selector is saved once, as the Citeomatic text encoder, which becomes the graph's encoder.
    rec.save(base)
    meta = {"version": version, "as_of": as_of, "path": str(base),
            "fusion": None if rec.lexical is None else {"lexical": "bm25", "rrf_k": rec.rrf_k},
            "fusion_validation": getattr(rec, "fusion_validation_", None)}
    reg.publish(meta)
    click.echo(f"trained NNSelect{'' if no_ranker else ' + NNRank'} on {snapshot.n_papers:,} papers"
               f"{'' if as_of is None else f' as of {as_of}'} in {time.perf_counter() - t0:.1f}s -> {base}")
    click.echo(fusion_note(rec))
    if as_of is not None:
        return  # a model of the past is for evaluation; the graph keeps its encoder
    make_current(obj.settings.models_dir, {"encoder": str(base / ENCODER_DIR)})
    click.echo("the Citeomatic encoder is now the graph's text encoder: the next `scholargraph features` run "
               "rewrites Paper.semanticVector with it, and the next `reviewers train` uses it")


def parse_fusion(value: str) -> int | str | None:
    """--fusion: "auto", "none" (None) or a positive rrf_k."""
    word = value.strip().lower()
    if word in ("auto", "none"):
        return None if word == "none" else word
    if word.isdigit() and int(word) > 0:
        return int(word)
    raise click.BadParameter(f"{value!r}: expected auto, none or a positive number (the fusion's k)")


def fusion_note(rec: CitationRecommender) -> str:
    """What the validation drafts chose: the fusion with BM25 or the re-ranked list alone, with the numbers."""
    val = getattr(rec, "fusion_validation_", None)
    served = "served ranker: " + rec.name + ("" if rec.lexical is None else f" (rrf_k {rec.rrf_k})")
    if rec.params.fusion != "auto":
        return served + " (as --fusion gave it: nothing validated)"
    if val is None:
        return served + " (too few citing papers in the last year to validate a fusion with BM25)"
    scores = ", ".join(f"{'alone' if c == 'None' else f'k={c}'} {m['f1@20']:.4f} / {m['mrr']:.4f}"
                       for c, m in val["scores"].items())
    drafts = (f"{val['queries']} drafts of the last year over a model as of {val['model_as_of']}"
              if "model_as_of" in val else f"{val['queries']} held-out drafts of the last year")
    return (f"{served}, chosen on {drafts} (F1@20 / MRR: {scores}; alone minus the best "
            f"fusion {val['alone_minus_fused']:+.4f}, standard error {val['standard_error']:.4f}; the best on "
            f"the drafts serves)")


def _queries_from_options(queries: str | None, title: str | None, abstract: str | None,
                          text_file: str | None) -> list[Query]:
    given = sum(x is not None for x in (queries, text_file)) + (title is not None or abstract is not None)
    if given != 1:
        raise UsageError("give exactly one of --queries FILE, --title/--abstract, --text-file FILE")
    if queries:
        return read_queries(queries, warn=warn)
    if text_file:
        text = read_text(text_file, "--text-file").strip()
        if not text:
            raise UsageError(f"--text-file {text_file}: is empty (expected the title on the first line)")
        first, _, rest = text.partition("\n")
        return [Query("draft", first.strip(), rest.strip() or None)]
    return [Query("draft", title, abstract)]


@citations_group.command("recommend")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), default=None,
              help="JSONL of drafts {id, title, abstract, year}.")
@click.option("--title", default=None, help="One draft's title (with --abstract, or alone).")
@click.option("--abstract", default=None, help="One draft's abstract (with --title, or alone).")
@click.option("--text-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A text file: first line the title, the rest the abstract.")
@click.option("--k", default=20, show_default=True, type=click.IntRange(1, 1000),
              help="Results per query: the papers recommended for each draft.")
@rows_output(formats=("table", "jsonl", "csv", "tsv", "trec"),
             about="Rows: query, rank, paper_id, title, year, score, shared_terms (jsonl: the terms as a list).")
@write_option("RECOMMENDED_CITATION edges for the queries that are in-graph papers")
@click.pass_obj
def recommend_cmd(obj, queries, title, abstract, text_file, k: int, fmt: str, out: str | None, write: bool) -> None:
    """What the draft(s) should cite, best first, with the key terms each shares with the draft."""
    qs = _queries_from_options(queries, title, abstract, text_file)
    with open_store(obj.settings, quiet=obj.quiet) as store:
        results, served, note = recommend_citations(store, obj.settings.models_dir, qs, k, obj.quiet, write)
    snapshot, ranker = served.snapshot, served.ranker
    if not ranker.startswith("citeomatic"):
        click.echo(f"no citation model: the text-only ranker {ranker} answers (`citations train` learns one "
                   "where the graph has citations)", err=True)
    titles = snapshot.titles or [None] * snapshot.n_papers
    columns = ["query", "rank", "paper_id", "title", "year", "score", "shared_terms"]
    cells: list[list] = []
    records: list[dict] = []
    text: list[str] = []
    for q, recs in results:
        text.append(f"citations for {q.id} ({ranker}): {q.title or ''}"[:120])
        for rank, r in enumerate(recs, start=1):
            paper, year = output_id(snapshot.paper_ids[r.paper_index]), int(snapshot.paper_year[r.paper_index])
            cells.append([output_id(q.id), rank, paper, titles[r.paper_index] or "", year, f"{r.score:.6f}",
                          "; ".join(r.explanation)])
            records.append({"query": output_id(q.id), "rank": rank, "ranker": ranker, "paper_id": paper,
                            "title": titles[r.paper_index], "year": year, "score": round(r.score, 6),
                            "shared_terms": list(r.explanation)})
            text.append(f"{rank:>3}. {(titles[r.paper_index] or '')[:60]:<60} {year:>5} {r.score:7.3f}  "
                        f"{', '.join(r.explanation)}")
    emit(Rows(columns, cells, records=records, trec=Trec("query", "paper_id", "score", ranker, rank="rank"), text=text),
         fmt, out, note=note)


def resolve_judgments(snapshot: GraphSnapshot, store_lookup, queries: list[Query],
                      qrels: dict[str, dict[str, int]]) -> tuple[list[Query], dict[str, dict[str, int]]]:
    """Judged papers (qualified or bare ids) as node ids, so that a bare id in the qrels is not silently a
    miss: unknown ones are left out with a warning, none known is a UsageError (exit 2). A query that is an
    in-graph paper under another spelling takes the paper's id (it is then excluded from its own results)."""
    resolver = IdResolver.for_snapshot(snapshot, lookup=store_lookup)
    docs = resolve_ids(resolver, "paper", [d for grades in qrels.values() for d in grades], "--qrels")
    judged: dict[str, dict[str, int]] = {}
    for qid, grades in qrels.items():
        for doc, grade in grades.items():
            if doc.strip() in docs.ids:
                judged.setdefault(qid, {})[docs.ids[doc.strip()]] = grade
    node = resolver.resolve("paper", [q.id for q in queries], bare=False).ids
    out = []
    for q in queries:
        nid = node.get(q.id.strip(), q.id)
        if nid != q.id and q.id in judged:
            judged[nid] = judged.pop(q.id)
            q = Query(nid, q.title, q.abstract, q.year)
        out.append(q)
    return out, judged


def format_results(results: dict) -> str:
    """The evaluation table: one row per system, its metrics in fixed-width columns."""
    systems = list(results)
    metrics = [m for m in ("f1@20", "mrr", "recall@20", "recall@100", "ms_per_query", "queries")
               if m in results[systems[0]]]
    return text_table(["system", *metrics], [[s, *(f"{results[s][m]:.4f}" for m in metrics)] for s in systems],
                      widths=[18, *[13] * len(metrics)], sep="", rule="full")


@citations_group.command("evaluate")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), default=None,
              help="JSONL of drafts {id, title, abstract, year} (with --qrels).")
@click.option("--qrels", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The papers each draft should cite: `qid 0 paper_id grade` or `qid paper_id` lines.")
@click.option("--time-split", "time_split", type=int, default=None,
              help="Papers after YEAR are the queries, their in-corpus references the gold; trains as of YEAR.")
@click.option("--max-queries", type=int, default=500, show_default=True, help="Sample of time-split queries.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="PNG chart of the table.")
@training_size_options
@encoder_option
@seed_option
@click.pass_obj
def evaluate_cmd(obj, queries: str | None, qrels: str | None, time_split: int | None, max_queries: int,
                 plot: str | None, epochs: int, max_triplets: int, encoder_name: str, seed: int) -> None:
    """F1@20, MRR, Recall@20/100 for BM25, NNSelect and NNSelect + NNRank side by side (without a trained
    model: BM25, the pretrained encoder and their fusion, the text-only rankers that `recommend` serves)."""
    if (time_split is None) == (queries is None or qrels is None):
        raise UsageError("give either --queries FILE --qrels FILE, or --time-split YEAR")
    if encoder_name != "auto" and time_split is None:
        raise UsageError("--encoder is for --time-split, which trains a model; a saved model reads the encoder it "
                         "was trained with")
    for name, value, default in (("--seed", seed, NNSelectParams.seed), ("--epochs", epochs, NNSelectParams.epochs),
                                 ("--max-triplets", max_triplets, NNSelectParams.max_triplets)):
        if value != default and time_split is None:
            raise UsageError(f"{name} is for --time-split, which trains a model; a saved model was trained with "
                             "its own")
    # The user's files are read first: a bad one is refused before a model is loaded or the graph pulled.
    given = (read_queries(queries, warn=warn), read_qrels(qrels, warn=warn)) if queries is not None \
        and qrels is not None else None
    text_only = time_split is None and not has_model(obj.settings.models_dir)
    with open_store(obj.settings, quiet=obj.quiet) as store:
        if text_only:
            rec = text_only_recommender(store, obj.settings.models_dir, obj.quiet)
            snapshot = rec.snapshot_
        elif time_split is not None:  # trains a model of its own, as `train` would
            ranker, encoder, snapshot = ranker_and_snapshot(obj, store, False, encoder_name, seed)
        else:
            snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=obj.quiet)
    if text_only:
        click.echo(f"no citation model: the text-only rankers ({rec.name}) are evaluated", err=True)
        assert given is not None, "checked above: no --time-split means both files"
        qs, judged = resolve_judgments(snapshot, store_lookup=None, queries=given[0], qrels=given[1])
        results = rec.evaluate(qs, judged, quiet=obj.quiet)
    elif time_split is not None:
        split = time_split_queries(snapshot, time_split, max_queries=max_queries)
        if not split.queries:
            raise UsageError(f"no paper after {time_split} cites a paper up to {time_split}")
        click.echo(f"time split at {time_split}: training on {split.train.n_papers:,} papers, "
                   f"{len(split.queries):,} later papers as queries", err=True)
        model = CitationRecommender(NNSelect(epochs=epochs, max_triplets=max_triplets, seed=seed), ranker, BM25(),
                                    encoder=encoder).fit(split.train, quiet=obj.quiet)
        trained = model.selector.history_
        click.echo(f"NNSelect trained {len(trained)} epoch(s) on {sum(h['triplets'] for h in trained):,} triplets "
                   f"(--epochs {epochs}, --max-triplets {max_triplets:,} an epoch)", err=True)
        results = model.evaluate(split.queries, split.qrels, quiet=obj.quiet)
    else:
        assert given is not None, "checked above: no --time-split means both files"
        model, _ = load_recommender(obj.settings.models_dir, snapshot)
        model.baseline = BM25().fit(snapshot, quiet=obj.quiet)
        qs, judged = resolve_judgments(snapshot, store_lookup=None, queries=given[0], qrels=given[1])
        results = model.evaluate(qs, judged, quiet=obj.quiet)
    click.echo(format_results(results))
    if plot:
        from scholargraph.ranking.plots import grouped_bars

        source = f"time split at {time_split}" if time_split else Path(cast(str, queries)).name
        title = f"citation recommendation ({source})"
        grouped_bars([(title, results)], ["f1@20", "mrr", "recall@20", "recall@100"],
                     ["F1@20", "MRR", "Recall@20", "Recall@100"], plot)
        click.echo(f"plot: {plot}")
    sys.stdout.flush()
