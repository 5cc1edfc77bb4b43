"""CLI for the graph layer: `scholargraph db ...`, `features` and `query`."""

from __future__ import annotations

from pathlib import Path

import click

from scholargraph.cli_output import emit, engine_options, migration_summary, resolve_ids, rows_output, warn
from scholargraph.errors import UsageError
from scholargraph.graph import query_library
from scholargraph.graph.encoders import AUTO_ENCODER
from scholargraph.graph.features import STEPS, FeatureOptions, run_features
from scholargraph.graph.ids import EXPECTED, IdResolver, output_id
from scholargraph.graph.parquet import EXPORT_WORKERS
from scholargraph.server.connect import open_store
from scholargraph.spark.features import chosen_engine
from scholargraph.tables import Rows


@click.group("db")
def db_group() -> None:
    """Schema and housekeeping of the graph database."""


@db_group.command("init")
@click.pass_obj
def init_cmd(obj) -> None:
    """Create the constraints and indexes, and migrate ids to their current form (both idempotent)."""
    with open_store(obj.settings, quiet=obj.quiet) as store:
        n = store.apply_schema()
        counts = store.migrate_ids()
    click.echo(f"schema applied ({n} statements) at {store.uri}")
    if any(counts.values()):
        click.echo(migration_summary(counts))


@db_group.command("migrate")
@click.pass_obj
def migrate_cmd(obj) -> None:
    """Rename ids with whitespace (graphs ingested before ids were whitespace-free) to their current form:
    'name:ann lee' -> 'name:ann_lee'. The old ids still resolve. Idempotent: a second run changes nothing."""
    with open_store(obj.settings, quiet=obj.quiet) as store:
        store.apply_schema()
        counts = store.migrate_ids()
    click.echo(migration_summary(counts))


@db_group.command("stats")
@click.pass_obj
def stats_cmd(obj) -> None:
    """Counts per label and relationship type, and the names of the constraints and indexes."""
    with open_store(obj.settings, quiet=obj.quiet) as store:
        stats = store.stats()
        schema = store.schema_names()
    click.echo(f"{'nodes':<22}{'count':>12}")
    for label, n in stats["nodes"].items():
        click.echo(f"  {label:<20}{n:>12,}")
    click.echo(f"  {'(stub papers)':<20}{stats['stubs']['Paper']:>12,}")
    click.echo(f"{'relationships':<22}{'count':>12}")
    for rel, n in stats["relationships"].items():
        click.echo(f"  {rel:<20}{n:>12,}")
    for kind, names in schema.items():
        click.echo(f"{kind} ({len(names)}): {', '.join(names) if names else '-'}")


@db_group.command("dump")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the lines here (default: stdout).")
@click.pass_obj
def dump_cmd(obj, out: str | None) -> None:
    """The whole graph as JSON lines, one per node and relationship, without internal ids: sort two dumps
    (`LC_ALL=C sort`) and diff them to check that two loads of the same inputs agree. Streamed: memory
    stays flat however large the graph."""
    import contextlib
    import sys

    with open_store(obj.settings, quiet=obj.quiet) as store, \
            (open(out, "w", encoding="utf-8") if out else contextlib.nullcontext(sys.stdout)) as sink:
        n = 0
        for line in store.dump_lines():
            sink.write(line + "\n")
            n += 1
    if out:
        click.echo(f"{n:,} lines written to {out}")


@db_group.command("reset")
@click.option("--yes", is_flag=True, help="Really delete every node and relationship.")
@click.pass_obj
def reset_cmd(obj, yes: bool) -> None:
    """Empty the database (refuses without --yes)."""
    if not yes:
        raise click.UsageError("db reset deletes every node and relationship: add --yes to confirm")
    with open_store(obj.settings, quiet=obj.quiet) as store:
        store.reset()
        left = sum(store.stats()["nodes"].values())
    # Ingest checkpoints of this database would skip files whose records are gone now.
    from scholargraph.ingest.loader import Checkpoint

    forgotten = Checkpoint.forget_target(obj.settings.checkpoints_dir, obj.settings.database_target)
    click.echo(f"database emptied ({left} nodes left)" + (f"; {forgotten} ingest checkpoint(s) forgotten"
                                                         if forgotten else ""))


@click.command("features")
@click.option("--only", default=",".join(STEPS), show_default=True,
              help="Comma-separated steps: networks, pagerank, topics, vectors.")
@click.option("--as-of", "as_of", type=int, default=None,
              help="Compute from papers up to this year only; scalar results are written as <name>AsOf<YEAR>.")
@click.option("--topics", "num_topics", default=10, show_default=True, type=click.IntRange(2, 500),
              help="LDA topics when a topic model is fitted (the first run, or --retrain); a saved one keeps its own.")
@click.option("--topic-sample", type=click.IntRange(1, None), default=None,
              help="Fit the topic model (when one is fitted) on about N papers drawn at random, each paper in or out "
                   "by a hash of its id (the same papers on both engines); the mixtures are inferred for every "
                   "paper. Default: the fit reads every paper. For corpora far past a million papers.")
@click.option("--encoder", default=AUTO_ENCODER, show_default=True,
              help="Text encoder for semanticVector: auto (minilm-onnx-int8 for natural-language text, tfidf-svd "
                   "otherwise; "
                   "keeps the current encoder once there is one), tfidf-svd, minilm-onnx-int8, minilm-onnx, minilm "
                   "or minilm-int8 (docs/vectors.md compares them).")
@click.option("--commit-every", default=2048, show_default=True, type=click.IntRange(1, None),
              help="Text vectors are committed every N papers: a crash loses at most N, and the same command "
                   "then encodes only the papers without a committed vector.")
@click.option("--backend", type=click.Choice(["networkx", "gds"]), default="networkx", show_default=True,
              help="PageRank in process (SciPy) or on the server with Graph Data Science.")
@click.option("--retrain", is_flag=True,
              help="Fit a new topic model and encoder (auto: choose again) even when saved ones exist.")
@click.option("--force", is_flag=True, help="Recompute even when nothing changed since the last run.")
@engine_options
@click.pass_obj
def features_command(obj, only: str, as_of: int | None, num_topics: int, topic_sample: int | None, encoder: str,
                     commit_every: int, backend: str, retrain: bool, force: bool, engine: str, master: str | None,
                     snapshot: str | None, keep_snapshot: bool) -> None:
    """Derived networks, PageRank, LDA topics and text/citation vectors, written back to the graph.

    With --engine spark, the networks, PageRank, LDA topics (MLlib online LDA when one is fitted) and text
    vectors run on Apache Spark over a Parquet export of the graph (--master local[N] or a cluster URL) and are
    written back through the Neo4j Spark connector; the citation vectors run here over the same export
    (docs/scale-out.md)."""
    steps = tuple(s.strip() for s in only.split(",") if s.strip())
    unknown = set(steps) - set(STEPS)
    if unknown:
        raise click.UsageError(f"unknown step(s) {', '.join(sorted(unknown))}; choose from {', '.join(STEPS)}")
    if engine == "spark" and backend == "gds":
        raise click.UsageError("--engine spark computes PageRank itself: it does not combine with --backend gds")
    options = FeatureOptions(only=steps, as_of=as_of, num_topics=num_topics, encoder=encoder, backend=backend,
                             commit_every=commit_every, topic_sample=topic_sample)
    log = (lambda _msg: None) if obj.quiet else (lambda msg: click.echo(f"  {msg}", err=True))
    with open_store(obj.settings, quiet=obj.quiet) as store, chosen_engine(
            obj.settings, store, engine, master, Path(snapshot) if snapshot else None, keep_snapshot,
            quiet=obj.quiet) as chosen:
        report = run_features(store, obj.settings.models_dir, options, retrain=retrain, force=force,
                              quiet=obj.quiet, log=log, engine=chosen)
    click.echo(report)


@click.command("query")
@click.argument("name", required=False)
@click.option("-p", "--param", "params", multiple=True, metavar="KEY=VALUE", help="A query parameter (repeatable).")
@rows_output(formats=("table", "jsonl", "csv", "tsv"), about="One row per result of the query.")
@click.option("--list", "list_only", is_flag=True, help="List the library's queries with their parameters.")
@click.pass_obj
def query_command(obj, name: str | None, params: tuple[str, ...], fmt: str, out: str | None, list_only: bool) -> None:
    """Run a query of the Cypher library (scholargraph/cypher/queries/) and print its rows."""
    if list_only or not name:
        for spec in query_library.list_queries():
            args = ", ".join(f"{k} ({t}{'' if d is None else ', default ' + d})" for k, (t, d) in spec.params.items())
            click.echo(f"{spec.name}\n    {spec.purpose}\n    params: {args or '-'}\n    e.g. {spec.example}")
        return
    spec = query_library.describe(name)
    bound = query_library.bind(spec, list(params))
    with open_store(obj.settings, quiet=obj.quiet) as store:
        resolver = IdResolver(lookup=store.lookup_ids)
        for key, kind in spec.id_params.items():
            # An id parameter takes the qualified id or the source's bare id; one that names no node is a
            # usage error (exit 2) rather than an empty result that looks like "no data".
            res = resolver.resolve(kind, [str(bound[key])])
            if not res.given:
                raise UsageError(f"-p {key} needs an id; expected {EXPECTED[kind]}")
            bound[key] = res.require(f"-p {key}").ids[res.given[0]]
        columns, rows = store.run_library_query(name, bound)
    fix = [i for i, c in enumerate(columns) if c in spec.id_columns]
    if fix:
        rows = [[output_id(v) if i in fix and isinstance(v, str) else v for i, v in enumerate(row)] for row in rows]
    emit(Rows(columns, rows), fmt, out)


@click.group("export")
def export_group() -> None:
    """Export the graph to files that other engines read (Spark, pandas, DuckDB)."""


@export_group.command("parquet")
@click.argument("out_dir", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--as-of", "as_of", type=int, default=None,
              help="Export the graph as it stood at the end of this year (papers up to it, the stubs they cite).")
@click.option("--no-text", "no_text", is_flag=True, help="Leave titles and abstracts out (their columns stay, null).")
@click.option("--rows-per-file", "rows_per_file", type=click.IntRange(min=1), default=1_000_000, show_default=True,
              help="Start a new part file of a table after this many rows.")
@click.option("--overwrite", is_flag=True,
              help="Replace an earlier export in DIR (a non-empty DIR is refused otherwise).")
@click.option("--workers", type=click.IntRange(min=1), default=EXPORT_WORKERS, show_default=True,
              help="Read this many id ranges at once, each in its own Bolt sessions (1: one stream).")
@click.pass_obj
def export_parquet_cmd(obj, out_dir: Path, as_of: int | None, no_text: bool, rows_per_file: int,
                       overwrite: bool, workers: int) -> None:
    """Write a Parquet snapshot of the graph to DIR: papers, authors, venues, authorships and citations
    tables plus DIR/_manifest.json (docs/features.md, "Parquet snapshots")."""
    from scholargraph.graph.parquet import MANIFEST, check_target, export_parquet

    check_target(out_dir, overwrite)  # before connecting: a refused DIR costs no pull
    with open_store(obj.settings, quiet=obj.quiet) as store:
        manifest = export_parquet(store, out_dir, as_of=as_of, with_text=not no_text, rows_per_file=rows_per_file,
                                  quiet=obj.quiet, overwrite=overwrite, workers=workers)
    for table, n in manifest["counts"].items():
        parts = len(manifest["tables"][table])
        click.echo(f"{table:<12}{n:>12,} rows  {parts} file{'s' if parts != 1 else ''}")
    click.echo(f"manifest: {out_dir / MANIFEST}")


@export_group.command("openreview")
@click.argument("out_dir", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--pool", "pool_file", required=True, type=click.Path(dir_okay=False),
              help="The reviewers, one id per line (graph ids or the source's bare ids).")
@click.option("--queries", "queries_file", type=click.Path(dir_okay=False), default=None,
              help="Submissions (the --queries JSONL of reviewers recommend) to write as submissions.json.")
@click.pass_obj
def export_openreview_cmd(obj, out_dir: Path, pool_file: str, queries_file: str | None) -> None:
    """Write the pool's publications in OpenReview's expertise dataset layout (openreview/openreview-expertise,
    README "Datasets"): DIR/archives/<reviewer id>.jsonl (an OpenReview profile id bare, ~Ann_Lee1.jsonl, the id
    openreview-expertise scores by) and DIR/submissions.json. `ingest openreview DIR` reads it back into the same
    graph (docs/reviewers.md, "A chair's inputs")."""
    from scholargraph.conference.submissions import read_ids
    from scholargraph.ingest.openreview import export_dataset
    from scholargraph.user_files import read_jsonl

    # The user's files first: a bad one is refused (exit 2) before the store opens.
    given = read_ids(pool_file, "--pool", warn)
    submissions = read_jsonl(queries_file, "--queries", warn=warn) if queries_file else []
    with open_store(obj.settings, quiet=obj.quiet) as store:
        resolved = resolve_ids(IdResolver(lookup=store.lookup_ids), "author", given, "--pool")
        counts = export_dataset(store, resolved.node_ids(), submissions, out_dir)
    click.echo(f"export openreview: {counts.reviewers} reviewers with {counts.publications} publications in "
               f"{out_dir / 'archives'}, {counts.submissions} submissions in {out_dir / 'submissions.json'}")
    if counts.not_written:
        shown = ", ".join(output_id(a) for a in counts.not_written[:5])
        click.echo(f"scholargraph: {len(counts.not_written)} reviewers have no paper with a title or an abstract "
                   f"in the graph (no archive written), e.g. {shown}", err=True)
