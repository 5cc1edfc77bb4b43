"""`scholargraph synth`: write a synthetic scholarly world (corpus + planted ground truth) to a directory."""

from __future__ import annotations

import datetime
from pathlib import Path

import click

from scholargraph.progress import progress
from scholargraph.synth.params import CORPUS_FILES, FORMATS, SynthParams
from scholargraph.synth.world import generate


@click.command("synth")
@click.option("--papers", "-n", type=int, required=True, help="Corpus papers to generate (200 to 100M).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Directory for the corpus and the ground-truth files (created if missing).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="aminer", show_default=True,
              help="Dump format of the corpus; ids in the ground truth follow it.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Same seed and options give byte-identical files.")
@click.option("--start-year", type=int, default=1990, show_default=True,
              help="Year of the world's first papers (1800-2100).")
@click.option("--end-year", type=int, default=2023, show_default=True,
              help="Year of its last papers: at least 10 years after --start-year, at most next year.")
@click.option("--topics", type=int, default=10, show_default=True, help="Research topics (2-50).")
@click.option("--mean-refs", type=float, default=10.0, show_default=True, help="Mean references per paper.")
@click.option("--cross-share", type=float, default=0.15, show_default=True,
              help="Share of papers mixing two topics.")
@click.option("--stub-share", type=float, default=0.06, show_default=True,
              help="Share of references to works outside the corpus (more in the first years).")
@click.option("--as-of", type=int, default=None, help="Rising stars: as-of year T [default: end year - 3].")
@click.option("--horizon", type=int, default=3, show_default=True,
              help="Rising stars: future increments count citing papers in (T, T+horizon].")
@click.option("--window", type=int, default=5, show_default=True,
              help="Rising stars: young = first first-author paper within the last WINDOW years up to T.")
@click.option("--reviewer-queries", type=int, default=50, show_default=True,
              help="Held-out submissions with graded reviewer candidates.")
@click.option("--citation-queries", type=int, default=100, show_default=True,
              help="Held-out papers with their true references.")
@click.option("--reviewer-experts", type=int, default=6, show_default=True,
              help="Reviewer candidates per submission who are deep experts in its own vocabulary.")
@click.option("--reviewer-cross-experts", type=int, default=2, show_default=True,
              help="Planted cross-domain experts per submission, of each of the two kinds.")
@click.option("--overwrite", is_flag=True, help="Replace a synthetic world already in --out.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def synth_command(ctx: click.Context, papers: int, out_dir: Path, fmt: str, seed: int, start_year: int,
                  end_year: int, topics: int, mean_refs: float, cross_share: float, stub_share: float,
                  as_of: int | None, horizon: int, window: int, reviewer_queries: int, citation_queries: int,
                  reviewer_experts: int, reviewer_cross_experts: int, overwrite: bool, quiet: bool) -> None:
    """Generate a synthetic corpus whose hidden truth is known: reviewer judgments (with planted
    cross-domain experts), rising-star increments and held-out citation lists.

    Ingest the corpus FILE (not the directory, which also holds the held-out queries), e.g.
    `scholargraph ingest aminer OUT/corpus.aminer.jsonl`.
    """
    quiet = quiet or bool(getattr(ctx.obj, "quiet", False))
    params = SynthParams(
        papers=papers, seed=seed, start_year=start_year, end_year=end_year, fmt=fmt, topics=topics,
        mean_refs=mean_refs, p_cross=cross_share, p_external=stub_share, as_of=as_of, horizon=horizon,
        window=window, reviewer_queries=reviewer_queries, citation_queries=citation_queries,
        reviewer_experts=reviewer_experts, reviewer_cross_experts=reviewer_cross_experts)
    try:
        params.validate()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    latest = datetime.date.today().year + 1
    if end_year > latest:
        # Ingestion rejects years in the future, so such a corpus could not be loaded.
        raise click.BadParameter(f"must be at most {latest} (ingestion rejects future years)",
                                 param_hint="--end-year")
    if out_dir.exists() and not out_dir.is_dir():
        raise click.BadParameter(f"{out_dir} exists and is not a directory", param_hint="--out")
    existing = [out_dir / name for name in (*CORPUS_FILES.values(), "world.json")
                if (out_dir / name).exists()]
    if existing and not overwrite:
        raise click.UsageError(f"{out_dir} already holds a synthetic world ({existing[0].name}); "
                               "pass --overwrite to replace it")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if overwrite:
            # A world in the other format would otherwise sit beside the new one and be mistaken for it.
            for path in existing:
                path.unlink()
    except OSError as exc:
        raise click.BadParameter(f"cannot write {out_dir}: {exc.strerror or exc}",
                                 param_hint="--out") from None
    bar = progress(total=papers, desc="synth", unit="paper", quiet=quiet)
    try:
        stats = generate(params, out_dir, on_progress=bar.update)
    except OSError as exc:
        raise click.ClickException(f"cannot write {out_dir}: {exc.strerror or exc}") from None
    finally:
        bar.close()
    click.echo(
        f"synth: {stats['papers']:,} papers, {stats['authors_with_papers']:,} authors, "
        f"{stats['stub_papers']:,} outside works cited ({stats['stub_reference_share']:.1%} of "
        f"{stats['references']:,} references) -> {out_dir / CORPUS_FILES[fmt]}")
    click.echo(
        f"synth: ground truth: {stats['reviewer_queries']} reviewer queries "
        f"({stats['cross_domain_experts']} planted cross-domain experts), {stats['citation_queries']} "
        f"citation queries, {stats['young_authors']:,} young authors in rising_stars.tsv; see "
        f"{out_dir / 'world.json'}")
