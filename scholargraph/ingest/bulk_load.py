"""Loading a dump with Neo4j's offline importer (`ingest --bulk`), and the schema step both paths share.

Steps: check that the managed server's database is empty; parse and stage with the same loader and
batches as the transactional path (`bulk.BulkStaging`); write the importer's CSV files; stop the server
and run `neo4j-admin database import full` (`server.admin_import`); start it again; create the schema
(Community refuses `--schema` during an import) and record the id migration, as a transactional
ingest does first.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scholargraph.config import Settings
from scholargraph.errors import ServerError, UsageError, naming_disk_full
from scholargraph.graph.neo4j_store import Neo4jStore
from scholargraph.ingest.bulk import ARRAY_DELIMITER, BulkStaging, StagedCounts, collector_paused
from scholargraph.ingest.loader import Checkpoint, IngestSummary, ingest
from scholargraph.server import admin_import, local_server
from scholargraph.server.connect import open_store


def prepare_store(store: Neo4jStore, on_migration: Callable[[dict[str, int]], None] | None = None) -> None:
    """Schema and id migration: before a transactional load, after a bulk one."""
    store.apply_schema()
    if not store.ids_migrated():
        # A graph from before ids were whitespace-free: rename its ids first, or this ingest would
        # create a second node beside each old one ('name:ann_lee' beside 'name:ann lee').
        counts = store.migrate_ids()
        if any(counts.values()) and on_migration is not None:
            on_migration(counts)


@dataclass
class BulkReport:
    summary: IngestSummary
    staged: StagedCounts
    seconds: dict[str, float] = field(default_factory=dict)  # per phase
    kept: Path | None = None  # the import files, when kept
    importer_peak_memory: str | None = None

    def lines(self) -> list[str]:
        s, staged = self.seconds, self.staged
        kept = (f"import files kept in {self.kept}" if self.kept
                else "import files removed (--keep-import-files keeps them)")
        return [f"bulk       parse+stage {s['stage']:.1f}s, import files {s['files']:.1f}s, "
                f"neo4j-admin import {s['import']:.1f}s (peak {self.importer_peak_memory or '?'}; server "
                f"stopped {s['offline']:.1f}s), "
                f"schema {s['schema']:.1f}s",
                f"imported   {staged.papers:,} papers ({staged.stubs:,} stubs), {staged.authors:,} authors, "
                f"{staged.venues:,} venues, {staged.authorships + staged.published_in + staged.citations:,} "
                f"relationships; {kept}"]


def bulk_ingest(settings: Settings, fmt: str, paths: list[str], *, quarantine_path: Path, batch_size: int = 2000,
                parse_workers: int = 0, import_root: Path | None = None, keep_files: bool = False, quiet: bool = False,
                on_migration: Callable[[dict[str, int]], None] | None = None) -> BulkReport:
    """Load `paths` into the managed server's empty database with the offline importer."""
    if not settings.managed:
        raise UsageError("--bulk runs Neo4j's offline importer on the managed local server; with "
                         "SCHOLARGRAPH_NEO4J_URI set, ingest without --bulk")
    with open_store(settings, quiet=quiet) as store:
        if store.has_data():
            raise UsageError("--bulk loads into an empty database and this one has data: ingest without --bulk "
                             "to add to it (or `scholargraph db reset --yes` first)")
        ingested_at = store.server_time()
    work = (import_root or settings.home / "import") / f"bulk-{time.strftime('%Y%m%d-%H%M%S')}-{fmt}"
    staging = BulkStaging(work / "staging", ingested_at)
    seconds: dict[str, float] = {}
    try:
        t0 = time.perf_counter()
        # The loader as for a transactional ingest (same parsing, batches, quarantine); no resume:
        # the staging lives only as long as this command.
        with collector_paused(), naming_disk_full(f"the bulk staging in {work}"):
            summary = ingest(staging, fmt, paths, quarantine_path=quarantine_path,
                             checkpoint_dir=work / "checkpoints", batch_size=batch_size, restart=True, quiet=quiet,
                             parse_workers=parse_workers)
            t1 = time.perf_counter()
            files, staged = staging.write_import_files(work / "csv", quiet=quiet)
        seconds.update(stage=t1 - t0, files=time.perf_counter() - t1)
    except BaseException:
        # The server has not stopped and the database is still empty: the staging is of no use to the next
        # run (it stages afresh) and, on a full disk, holds the space that run needs.
        staging.close()
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        staging.close()
    # Checkpoints of earlier ingests into this database describe a database that the import replaces.
    Checkpoint.forget_target(settings.checkpoints_dir, settings.database_target)
    t2 = time.perf_counter()
    try:
        run = admin_import.run_import(settings, files, ARRAY_DELIMITER, work, quiet=quiet,
                                      multiline=staged.multiline_rows > 0,
                                      after={"fill_empty_sources": bool(staged.empty_sources)})
    except ServerError as exc:
        state = local_server.import_state(settings)
        if state is None or state.get("phase") != "imported":
            raise  # the import failed or was interrupted: the database is empty again
        if not keep_files:
            shutil.rmtree(work, ignore_errors=True)
        # Only the schema is left to do, and the next command that opens the database does it.
        raise ServerError(f"the import finished ({staged.papers:,} papers with {staged.stubs:,} stubs, "
                          f"{staged.authors:,} authors), but Neo4j did not start again: {exc}; `scholargraph neo4j "
                          "start` starts it and completes the load (its schema)") from exc
    seconds["import"] = run.seconds
    seconds["offline"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    with open_store(settings, quiet=quiet) as store:  # fills empty sources and creates the schema (finish_import)
        prepare_store(store, on_migration)
    seconds["schema"] = time.perf_counter() - t3
    kept = None
    if keep_files:
        kept = work / "csv"
    else:
        shutil.rmtree(work, ignore_errors=True)
    return BulkReport(summary, staged, seconds, kept, run.peak_memory)
