"""CLI: `scholargraph ingest FORMAT PATH...`."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import click

from scholargraph.config import Settings
from scholargraph.errors import UsageError
from scholargraph.graph import admin_import
from scholargraph.graph.cli import migration_summary
from scholargraph.graph.connect import open_store
from scholargraph.graph.neo4j_store import Neo4jStore
from scholargraph.ingest.bulk import ARRAY_DELIMITER, BulkStaging, collector_paused
from scholargraph.ingest.loader import Checkpoint, IngestSummary, ingest
from scholargraph.ingest.normalize import FORMATS


@click.command("ingest")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("paths", metavar="PATH...", nargs=-1, required=True)
@click.option("--quarantine", "quarantine_file", type=click.Path(dir_okay=False), default=None,
              help="JSONL file for rejected records (default: $SCHOLARGRAPH_HOME/quarantine/ingest-FORMAT.jsonl).")
@click.option("--max-bad-ratio", default=0.01, show_default=True, type=click.FloatRange(0, 1),
              help="Exit 3 when quarantined/read exceeds this.")
@click.option("--restart", is_flag=True, help="Ignore checkpoints and read every input from the start.")
@click.option("--batch-size", default=2000, show_default=True, type=click.IntRange(1, 100_000),
              help="Records per write transaction.")
@click.option("--writers", default=1, show_default=True, type=click.IntRange(1, 16),
              help="Concurrent write transactions. More than 1 helps on a many-core server; on citation-dense "
                   "data concurrent batches lock the same cited papers and deadlock (retried, but slow).")
@click.option("--bulk", is_flag=True,
              help="Initial load into an empty database with Neo4j's offline importer (neo4j-admin database "
                   "import): many times faster; the managed server stops while it runs. Same graph as without it.")
@click.option("--import-dir", type=click.Path(file_okay=False), default=None,
              help="With --bulk: where the staging and import files go (default: $SCHOLARGRAPH_HOME/import); "
                   "about 3x the input's size while it runs.")
@click.option("--keep-import-files", is_flag=True, help="With --bulk: keep the CSV files the importer read.")
@click.pass_obj
def ingest_command(obj, fmt: str, paths: tuple[str, ...], quarantine_file: str | None, max_bad_ratio: float,
                   restart: bool, batch_size: int, writers: int, bulk: bool, import_dir: str | None,
                   keep_import_files: bool) -> None:
    """Load bibliographic dumps into the graph: files, directories, globs, .gz, or - for stdin.

    FORMAT is aminer (DBLP-citation v10/v11+), openalex (works snapshot), s2 (Graph API,
    datasets, S2ORC) or bibtex (ACM DL / DBLP). Re-running a command resumes where an
    interrupted run stopped; writes are idempotent, so running it twice changes nothing.
    """
    settings = obj.settings
    quarantine = Path(quarantine_file) if quarantine_file else settings.home / "quarantine" / f"ingest-{fmt}.jsonl"
    t0 = time.perf_counter()
    if bulk:
        summary, phases = _bulk_ingest(settings, fmt, list(paths), quarantine, batch_size,
                                       Path(import_dir) if import_dir else settings.home / "import",
                                       keep_import_files, obj.quiet)
    else:
        with open_store(settings, quiet=obj.quiet) as store:
            _prepare(store)
            summary = ingest(store, fmt, list(paths), quarantine_path=quarantine,
                             checkpoint_dir=settings.checkpoints_dir, batch_size=batch_size, restart=restart,
                             quiet=obj.quiet, writers=writers,
                             target=settings.database_target)
        phases = []
    click.echo(f"ingest {fmt}{' --bulk' if bulk else ''}: done in {time.perf_counter() - t0:.1f}s")
    for line in summary.lines() + phases:
        click.echo("  " + line)
    if summary.bad_ratio > max_bad_ratio:
        click.echo(f"scholargraph: {summary.bad_ratio:.2%} of records quarantined, above --max-bad-ratio "
                   f"{max_bad_ratio:.2%}; see {quarantine}", err=True)
        sys.exit(3)


def _prepare(store: Neo4jStore) -> None:
    """Schema and id migration before (transactional) or after (bulk) a load."""
    store.apply_schema()
    if not store.ids_migrated():
        # A graph from before ids were whitespace-free: rename its ids first, or this ingest would
        # create a second node beside each old one ('name:ann_lee' beside 'name:ann lee').
        counts = store.migrate_ids()
        if any(counts.values()):
            click.echo(migration_summary(counts), err=True)


def _bulk_ingest(settings: Settings, fmt: str, paths: list[str], quarantine: Path, batch_size: int,
                 import_root: Path, keep_files: bool, quiet: bool) -> tuple[IngestSummary, list[str]]:
    """Parse and stage as the transactional path would write, write the importer's CSV files, run the
    importer with the server stopped, then create the schema (Community refuses it during the import)."""
    if not settings.managed:
        raise UsageError("--bulk runs Neo4j's offline importer on the managed local server; with "
                         "SCHOLARGRAPH_NEO4J_URI set, ingest without --bulk")
    with open_store(settings, quiet=quiet) as store:
        if store.has_data():
            raise UsageError("--bulk loads into an empty database and this one has data: ingest without --bulk "
                             "to add to it (or `scholargraph db reset` first)")
        ingested_at = store.server_time()
    work = import_root / f"bulk-{time.strftime('%Y%m%d-%H%M%S')}-{fmt}"
    staging = BulkStaging(work / "staging", ingested_at)
    try:
        t0 = time.perf_counter()
        # The loader as for a transactional ingest (same parsing, batches, quarantine); no resume:
        # the staging lives only as long as this command.
        with collector_paused():
            summary = ingest(staging, fmt, paths, quarantine_path=quarantine, checkpoint_dir=work / "checkpoints",
                             batch_size=batch_size, restart=True, quiet=quiet)
        t1 = time.perf_counter()
        files, staged = staging.write_import_files(work / "csv", quiet=quiet)
        t2 = time.perf_counter()
    finally:
        staging.close()
    import_seconds = admin_import.run_import(settings, files, ARRAY_DELIMITER, work, quiet=quiet)
    t3 = time.perf_counter()
    # Checkpoints of earlier ingests into this database describe a database that is gone.
    Checkpoint.forget_target(settings.checkpoints_dir, settings.database_target)
    with open_store(settings, quiet=quiet) as store:
        if staged.empty_sources:
            store.fill_empty_sources()
        _prepare(store)
    t4 = time.perf_counter()
    if keep_files:
        kept = f"import files kept in {work / 'csv'}"
    else:
        shutil.rmtree(work, ignore_errors=True)
        kept = "import files removed (--keep-import-files keeps them)"
    phases = [f"bulk       parse+stage {t1 - t0:.1f}s, import files {t2 - t1:.1f}s, "
              f"neo4j-admin import {import_seconds:.1f}s, schema {t4 - t3:.1f}s",
              f"imported   {staged.papers:,} papers ({staged.stubs:,} stubs), {staged.authors:,} authors, "
              f"{staged.venues:,} venues, {staged.authorships + staged.published_in + staged.citations:,} "
              f"relationships; {kept}"]
    return summary, phases
