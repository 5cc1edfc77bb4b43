"""CLI: `scholargraph rising-stars train|score|evaluate|explain`."""

from __future__ import annotations

import click

from scholargraph.cli_output import emit, rows_output, write_option
from scholargraph.graph.ids import output_id
from scholargraph.ranking.rising_stars import service
from scholargraph.ranking.rising_stars.iirl import ALL
from scholargraph.server.connect import open_store
from scholargraph.tables import Rows, Trec

FEATURES_OPTION = click.option(
    "--features", "n_features", type=click.Choice(["18", "20"]), default="18", show_default=True,
    help="18: the paper's features. 20: plus the citations the author's papers received from others (no "
         "shared author) last year and over two years, where self-citation inflates recent counts (hep-th).")


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
    with open_store(obj.settings, quiet=obj.quiet) as store:
        click.echo(service.train(store, obj.settings.models_dir, as_of, horizon, window, int(n_features),
                                 self_citations, quiet=obj.quiet))


@rising_stars_group.command("score")
@click.option("--as-of", "as_of", type=int, default=None, help="T (default: the latest year in the graph).")
@rows_output(about="Rows: author_id, topic, score, rank; topic 'all' (the overall ranking) first, then each "
                   "topic's ranking (trec: the topic is the query).")
@write_option("RISING_STAR_IN edges and Author.risingStarScore/risingStarRank")
@click.pass_obj
def score_cmd(obj, as_of: int | None, fmt: str, out: str | None, write: bool) -> None:
    """Predict the rising stars as of T: each young researcher's score and rank, overall and per topic (and with
    --write, stored in the graph)."""
    with open_store(obj.settings, quiet=obj.quiet) as store:
        scored = service.score(store, obj.settings.models_dir, as_of, quiet=obj.quiet, write=write)
    columns = ["author_id", "topic", "score", "rank"]
    ranked = [(output_id(author), topic, value, rank) for author, topic, value, rank in scored.rankings]
    emit(Rows(columns, [[a, t, f"{v:.6f}", r] for a, t, v, r in ranked],
              records=[dict(zip(columns, (a, t, round(v, 6), r))) for a, t, v, r in ranked],
              trec=Trec("topic", "author_id", "score", "iirl")), fmt, out, summary=[scored.summary])


@rising_stars_group.command("evaluate")
@click.option("--as-of", "as_of", type=int, required=True, help="T: features from papers up to this year.")
@click.option("--horizon", type=click.IntRange(1, 50), default=3, show_default=True,
              help="D: labels are the citation increments in (T, T + D], in years.")
@click.option("--window", type=click.IntRange(1, 50), default=5, show_default=True,
              help="Young: first first-author paper within this many years up to T.")
@click.option("--k", "ks", default="5,10,20", show_default=True, help="Pre@k% cut-offs, in percent.")
@click.option("--topics", "num_topics", type=click.IntRange(2, 100), default=10, show_default=True,
              help="LDA topics refitted on the papers up to T (the per-topic tasks).")
@click.option("--repeats", type=click.IntRange(1, 20), default=3, show_default=True, help="Random splits.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="PNG of Pre@k% versus k.")
@FEATURES_OPTION
@click.pass_obj
def evaluate_cmd(obj, as_of: int, horizon: int, window: int, ks: str, num_topics: int, repeats: int,
                 plot: str | None, n_features: str) -> None:
    """The paper's protocol: young researchers split into train/test, features as of T, labels in (T, T+D];
    topics refitted on the papers up to T so nothing leaks. IIRL beside every baseline, ablations, transfer."""
    from scholargraph.ranking.rising_stars.evaluate import format_report

    try:
        cut = tuple(float(k) for k in ks.split(","))
    except ValueError:
        raise click.BadParameter(f"not a list of numbers: {ks!r}", param_hint="--k") from None
    with open_store(obj.settings, quiet=obj.quiet) as store:
        results = service.evaluate(store, as_of, horizon, window, cut, num_topics, repeats, int(n_features),
                                   plot=plot, quiet=obj.quiet, log=click.echo)
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
    loaded = service.load_model(obj.settings.models_dir)
    with open_store(obj.settings, quiet=obj.quiet) as store:
        explained = service.explain(store, obj.settings.models_dir, loaded, author_id, as_of, topic, quiet=obj.quiet)
    explanation = explained.explanation
    click.echo(explanation.sentence)
    click.echo(f"score {explanation.score:.3f}, percentile {explanation.percentile:.0f} in topic {explanation.topic}")
    for feature, contribution in explanation:
        click.echo(f"  {feature:<40} {contribution:+.3f}")
    if picture:
        service.draw_collaboration(explained, picture)
        click.echo(f"picture: {picture}", err=True)
