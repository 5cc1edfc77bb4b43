"""CLI: `scholargraph rising-stars train|score|evaluate|explain`."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
import numpy as np

from scholargraph.errors import NotFitted, UsageError
from scholargraph.graph.features import load_current_models
from scholargraph.graph.ids import EXPECTED, IdResolver, output_id
from scholargraph.graph.scoring import ScoringRun
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.ranking.rising_stars.features import build_dataset, fit_paper_topics
from scholargraph.ranking.rising_stars.iirl import ALL, IIRL
from scholargraph.server.connect import open_store

MODEL_SUBDIR = "rising_stars"


def _model_dir(models_dir: Path) -> Path:
    return models_dir / MODEL_SUBDIR


def _graph_topics(models_dir: Path, snapshot: GraphSnapshot) -> np.ndarray:
    """Paper topic distributions from the graph's topic model (the one behind the Topic nodes), so that
    per-topic rankings attach to those nodes. The topic model is unsupervised: it never sees a label."""
    topic_model, _ = load_current_models(models_dir)
    if topic_model is None:
        raise UsageError("no topic model yet: run `scholargraph features --only topics` first")
    theta, empty = topic_model.transform([snapshot.text(i) for i in range(snapshot.n_papers)], return_empty=True)
    theta[empty] = 0.0
    return theta


def _feature_options(meta: dict) -> dict:
    """build_dataset's feature options for a trained model (models saved before `--features` have 18)."""
    return {"window": meta["window"], "external_features": meta.get("features", 18) == 20}


FEATURES_OPTION = click.option(
    "--features", "n_features", type=click.Choice(["18", "20"]), default="18", show_default=True,
    help="18: the paper's features. 20: plus the citations the author's papers received from others (no "
         "shared author) last year and over two years, where self-citation inflates recent counts (hep-th).")


def load_model(models_dir: Path) -> tuple[IIRL, dict]:
    current = _model_dir(models_dir) / "current.json"
    if not current.exists():
        raise NotFitted("no rising-star model: run `scholargraph rising-stars train --as-of T0 --horizon D` first")
    meta = json.loads(current.read_text())
    return IIRL.load(meta["path"]), meta


@click.group("rising-stars")
def rising_stars_group() -> None:
    """IIRL: which young researchers will gain the most citations in the next years, per research topic."""


@rising_stars_group.command("train")
@click.option("--as-of", "as_of", type=int, required=True, help="T0: features from papers up to this year.")
@click.option("--horizon", type=click.IntRange(1, 50), default=3, show_default=True,
              help="D: labels are the citation increments in (T0, T0 + D].")
@click.option("--window", type=click.IntRange(1, 50), default=5, show_default=True,
              help="Young: first first-author paper within this many years up to T0.")
@FEATURES_OPTION
@click.option("--self-citations/--no-self-citations", "self_citations", default=True, show_default=True,
              help="Whether the training labels count citations from papers that share an author with the "
                   "cited one.")
@click.pass_obj
def train_cmd(obj, as_of: int, horizon: int, window: int, n_features: str, self_citations: bool) -> None:
    """Learn per-topic IIRL weights from features as of T0 and labels in (T0, T0 + D]."""
    t0 = time.perf_counter()
    with open_store(obj.settings, quiet=obj.quiet) as store:
        snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=obj.quiet)
    if snapshot.max_year < as_of + horizon:
        raise UsageError(f"labels need papers up to {as_of + horizon}; the graph ends in {snapshot.max_year}")
    topics = _graph_topics(obj.settings.models_dir, snapshot)
    data = build_dataset(snapshot, as_of, horizon, paper_topics=topics, window=window,
                         external_features=n_features == "20", labels_without_self_citations=not self_citations)
    if len(data) < 10:
        raise UsageError(f"only {len(data)} young researchers as of {as_of}: choose another --as-of or --window")
    model = IIRL().fit(data.X, data.labels, topics=data.topic_groups(3), feature_names=data.feature_names)
    version = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    path = model.save(_model_dir(obj.settings.models_dir) / version)
    meta = {"path": str(path), "version": version, "as_of": as_of, "horizon": horizon, "window": window,
            "features": int(n_features), "labels_self_citations": self_citations,
            "authors": len(data), "nonzero_labels": int((data.labels > 0).sum())}
    (_model_dir(obj.settings.models_dir) / "current.json").write_text(json.dumps(meta, indent=2))
    click.echo(f"trained IIRL on {len(data):,} young researchers as of {as_of} (horizon {horizon}, "
               f"{meta['nonzero_labels']:,} with citations in ({as_of}, {as_of + horizon}]), "
               f"{len(model.topics_)} topic models, {n_features} features, in {time.perf_counter() - t0:.1f}s "
               f"-> {path}")


def score_rising_stars(store, models_dir: Path, as_of: int | None, quiet: bool = True, write: bool = True,
                       out: str | None = None, run_props: dict | None = None) -> str:
    """Apply the trained model to features as of T (the latest year by default): the real prediction."""
    model, meta = load_model(models_dir)
    snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=quiet)
    as_of = snapshot.max_year if as_of is None else as_of
    topics = _graph_topics(models_dir, snapshot)
    data = build_dataset(snapshot, as_of, None, paper_topics=topics, **_feature_options(meta))
    if not len(data):
        raise UsageError(f"no young researchers as of {as_of}")
    X = data.X
    overall = model.score(X, ALL)
    order = np.argsort(-overall, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    rows: list[dict] = []
    tsv = [(data.author_ids[i], ALL, float(overall[i]), int(rank[i])) for i in order]
    for topic, members in sorted(data.topic_groups(3).items(), key=lambda kv: int(kv[0])):
        if not len(members):
            continue
        scores = model.score(X[members], topic)
        pct = model.percentile(scores, topic)
        local = np.argsort(-scores, kind="stable")
        for r, j in enumerate(local, start=1):
            author = data.author_ids[members[j]]
            rows.append({"source": author, "target": f"topic:{topic}",
                         "props": {"score": float(scores[j]), "rank": r, "percentile": float(pct[j]),
                                   "as_of": as_of, "horizon": meta["horizon"]}})
            tsv.append((author, f"topic:{topic}", float(scores[j]), r))
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write("author_id\ttopic\tscore\trank\n")
            for author, topic, score, r in tsv:
                fh.write(f"{output_id(author)}\t{topic}\t{score:.6f}\t{r}\n")
    summary = f"scored {len(data):,} young researchers as of {as_of} in {len(data.topic_groups(3))} topics"
    if write:
        props = {"model_version": meta["version"], "as_of": as_of, **(run_props or {})}
        with ScoringRun(store, "rising-stars", props) as run:
            for row in rows:
                row["props"]["run_id"] = run.run_id
            n = run.publish(rows, counts={"authors": len(data)}, node_label="Author", node_ids=data.author_ids,
                            node_props={"rising_star_score": overall.astype(float), "rising_star_rank": rank})
        summary += f"; wrote {n:,} RISING_STAR_IN edges (run {run.run_id})"
    return summary


@rising_stars_group.command("score")
@click.option("--as-of", "as_of", type=int, default=None, help="T (default: the latest year in the graph).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Also write TSV author_id, topic, score, rank (topic 'all' is the overall ranking).")
@click.option("--write/--no-write", default=True, show_default=True, help="Store the scores in the graph.")
@click.pass_obj
def score_cmd(obj, as_of: int | None, out: str | None, write: bool) -> None:
    """Predict the rising stars as of T and store RISING_STAR_IN edges and Author.risingStarScore/Rank."""
    with open_store(obj.settings, quiet=obj.quiet) as store:
        click.echo(score_rising_stars(store, obj.settings.models_dir, as_of, quiet=obj.quiet, write=write, out=out))


@rising_stars_group.command("evaluate")
@click.option("--as-of", "as_of", type=int, required=True)
@click.option("--horizon", type=click.IntRange(1, 50), default=3, show_default=True)
@click.option("--window", type=click.IntRange(1, 50), default=5, show_default=True)
@click.option("--k", "ks", default="5,10,20", show_default=True, help="Pre@k% cut-offs, in percent.")
@click.option("--topics", "num_topics", type=click.IntRange(2, 100), default=10, show_default=True)
@click.option("--repeats", type=click.IntRange(1, 20), default=3, show_default=True, help="Random splits.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="PNG of Pre@k% versus k.")
@FEATURES_OPTION
@click.pass_obj
def evaluate_cmd(obj, as_of: int, horizon: int, window: int, ks: str, num_topics: int, repeats: int,
                 plot: str | None, n_features: str) -> None:
    """The paper's protocol: young researchers split into train/test, features as of T, labels in (T, T+D];
    topics refitted on the papers up to T so nothing leaks. IIRL beside every baseline, ablations, transfer."""
    from scholargraph.ranking.rising_stars.evaluate import evaluate, format_report

    try:
        cut = tuple(float(k) for k in ks.split(","))
    except ValueError:
        raise click.BadParameter(f"not a list of numbers: {ks!r}", param_hint="--k") from None
    with open_store(obj.settings, quiet=obj.quiet) as store:
        snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=obj.quiet)
    if snapshot.max_year < as_of + horizon:
        raise UsageError(f"labels need papers up to {as_of + horizon}; the graph ends in {snapshot.max_year}")
    past = snapshot.as_of(as_of)
    topics = fit_paper_topics(past, num_topics=num_topics)
    data = build_dataset(snapshot, as_of, horizon, paper_topics=topics, window=window, past=past,
                         external_features=n_features == "20")
    click.echo(f"{len(data):,} young researchers as of {as_of}; {int((data.labels > 0).sum()):,} with a non-zero "
               f"citation increment in ({as_of}, {as_of + horizon}]")
    results = evaluate(data, ks=cut, repeats=repeats, plot_path=plot)
    click.echo(format_report(results))
    if plot:
        click.echo(f"plot: {plot}")


@rising_stars_group.command("explain")
@click.argument("author_id")
@click.option("--as-of", "as_of", type=int, default=None, help="T (default: the latest year in the graph).")
@click.option("--topic", default=ALL, show_default=True, help="A topic number, or 'all'.")
@click.option("--picture", type=click.Path(dir_okay=False), default=None,
              help="Draw the author's collaboration neighbourhood up to T as a PNG (most frequent co-authors).")
@click.pass_obj
def explain_cmd(obj, author_id: str, as_of: int | None, topic: str, picture: str | None) -> None:
    """Each feature's contribution to an author's score, in words a hiring chair can read. AUTHOR_ID is
    qualified (s2author:1737249) or the source's bare id (1737249) when exactly one author has it."""
    model, meta = load_model(obj.settings.models_dir)
    with open_store(obj.settings, quiet=obj.quiet) as store:
        snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=obj.quiet)
        resolved = IdResolver.for_snapshot(snapshot, lookup=store.lookup_ids).resolve("author", [author_id])
    if not resolved.given:
        raise UsageError(f"AUTHOR_ID is empty; expected {EXPECTED['author']}")
    author_id = resolved.require("AUTHOR_ID").ids[resolved.given[0]]
    as_of = snapshot.max_year if as_of is None else as_of
    topics = _graph_topics(obj.settings.models_dir, snapshot)
    data = build_dataset(snapshot, as_of, None, paper_topics=topics, author_ids=[author_id], **_feature_options(meta))
    topic_key = topic.replace("topic:", "")
    name = (snapshot.author_names or [None] * snapshot.n_authors)[snapshot.author_index[author_id]] or author_id
    explanation = model.explain(data.X[0], topic_key, name=name)
    click.echo(explanation.sentence)
    click.echo(f"score {explanation.score:.3f}, percentile {explanation.percentile:.0f} in topic {explanation.topic}")
    for feature, contribution in explanation:
        click.echo(f"  {feature:<40} {contribution:+.3f}")
    if picture:
        from scholargraph.graph.pictures import draw
        from scholargraph.ranking.rising_stars.picture import collaboration_graph

        title = (f"{name}: score {explanation.score:.3f}, percentile {explanation.percentile:.0f} in topic "
                 f"{explanation.topic}, as of {as_of}")
        graph = collaboration_graph(snapshot, author_id, as_of, title=title)
        draw(graph, picture, caption=explanation.sentence)
        click.echo(f"picture: {picture}", err=True)
