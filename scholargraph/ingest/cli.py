"""CLI: `scholargraph ingest FORMAT PATH...`."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from scholargraph.cli_output import allow_empty_option, migration_summary, warn
from scholargraph.ingest.bulk_load import bulk_ingest, prepare_store
from scholargraph.ingest.loader import default_parse_workers, ingest
from scholargraph.ingest.normalize import FORMATS
from scholargraph.server.connect import open_store

HOTCRP_PC = "hotcrp-pc"  # not a dump of papers: a PC list matched to the graph's authors
HOTCRP_PAPERS = "hotcrp-papers"  # submissions, not graph papers: written as a --queries file
EMPTY_FILES = (HOTCRP_PC, HOTCRP_PAPERS)  # the formats whose file may change nothing: --allow-empty's


@click.command("ingest")
@click.argument("fmt", metavar="FORMAT", type=click.Choice((*FORMATS, HOTCRP_PC, HOTCRP_PAPERS)))
@click.argument("paths", metavar="PATH...", nargs=-1, required=True)
@click.option("--quarantine", "quarantine_file", type=click.Path(dir_okay=False), default=None,
              help="JSONL file for rejected records (default: $SCHOLARGRAPH_HOME/quarantine/ingest-FORMAT.jsonl).")
@click.option("--max-bad-ratio", default=0.01, show_default=True, type=click.FloatRange(0, 1),
              help="Exit 3 when quarantined/read exceeds this.")
@click.option("--restart", is_flag=True, help="Ignore checkpoints and read every input from the start.")
@click.option("--batch-size", default=2000, show_default=True, type=click.IntRange(1, 100_000),
              help="Records per write transaction.")
@click.option("--writers", default=1, show_default=True, type=click.IntRange(1, 16),
              help="Concurrent write transactions. More than 1 may help on a many-core server; on 2 cores two "
                   "writers were no faster and deadlock on shared authors, venues and cited papers (retried; "
                   "bench/ingest_tx.py), also with citations in a sorted second phase.")
@click.option("--parse-workers", type=click.IntRange(0, 64), default=None,
              help="Processes that normalise records beside the reader (0: on the main thread). Default: one per "
                   "CPU (at most 4; 0 on one CPU) with --bulk, where parsing is the bottleneck; 0 otherwise, "
                   "where Neo4j's transactions are and Neo4j needs the cores.")
@click.option("--bulk", is_flag=True,
              help="Initial load into an empty database with Neo4j's offline importer (neo4j-admin database "
                   "import): many times faster; the managed server stops while it runs. Same graph as without it.")
@click.option("--import-dir", type=click.Path(file_okay=False), default=None,
              help="With --bulk: where the staging and import files go (default: $SCHOLARGRAPH_HOME/import); "
                   "about 3x the input's size while it runs.")
@click.option("--keep-import-files", is_flag=True, help="With --bulk: keep the CSV files the importer read.")
@click.option("--submissions-out", type=click.Path(dir_okay=False), default=None,
              help="openreview, hotcrp-papers: where the submissions go, as a --queries JSONL for reviewers "
                   "recommend|assign (default: $SCHOLARGRAPH_HOME/FORMAT/submissions.jsonl, FORMAT openreview "
                   "or hotcrp).")
@click.option("--conflicts-out", type=click.Path(dir_okay=False), default=None,
              help="hotcrp-papers: where the papers' declared PC conflicts go, as a HotCRP assignment CSV "
                   "(paper,action,email,conflicttype) for reviewers recommend|assign --conflicts (default: "
                   "$SCHOLARGRAPH_HOME/hotcrp/conflicts.csv).")
@click.option("--pool-out", type=click.Path(dir_okay=False), default=None,
              help="hotcrp-pc: write the graph ids of the PC members matched, one per line (a --pool file).")
@allow_empty_option(f"{HOTCRP_PC}'s PC list (no member matched) or {HOTCRP_PAPERS}' paper JSON (no paper left)")
@click.pass_obj
def ingest_command(obj, fmt: str, paths: tuple[str, ...], quarantine_file: str | None, max_bad_ratio: float,
                   restart: bool, batch_size: int, writers: int, parse_workers: int | None, bulk: bool,
                   import_dir: str | None, keep_import_files: bool, submissions_out: str | None,
                   conflicts_out: str | None, pool_out: str | None, allow_empty: bool) -> None:
    """Load bibliographic dumps into the graph: files, directories, globs, .gz, or - for stdin.

    FORMAT is aminer (DBLP-citation v10/v11+), openalex (works snapshot), s2 (Graph API,
    datasets, S2ORC), bibtex (ACM DL / DBLP) or openreview (an OpenReview expertise dataset
    folder: archives/ become papers; its submissions become a --queries file, its profiles'
    emails and institutions go onto the reviewers). Re-running a command resumes where an
    interrupted run stopped; writes are idempotent, so running it twice changes nothing.

    hotcrp-pc FILE reads HotCRP's PC info CSV: members are matched to the graph's authors (by
    email, else by name), their emails and affiliations stored, and --pool-out lists them.

    hotcrp-papers FILE reads HotCRP's paper JSON (Search > Download > JSON): the papers become a
    --queries file (authors with their emails and affiliations, for conflicts), withdrawn ones
    are skipped, and their pc_conflicts a --conflicts file. The graph is not touched.
    """
    settings = obj.settings
    if allow_empty and fmt not in EMPTY_FILES:
        from scholargraph.errors import UsageError

        raise UsageError(f"--allow-empty applies to ingest {' and '.join(EMPTY_FILES)} only (a file that would "
                         f"change nothing); ingest {fmt} quarantines what it cannot read (--max-bad-ratio)")
    if fmt == HOTCRP_PC:
        _ingest_pc_list(obj, paths, pool_out, allow_empty)
        return
    quarantine = Path(quarantine_file) if quarantine_file else settings.home / "quarantine" / f"ingest-{fmt}.jsonl"
    if fmt == HOTCRP_PAPERS:
        _ingest_hotcrp_papers(obj, paths, quarantine, max_bad_ratio, submissions_out, conflicts_out, allow_empty)
        return
    t0 = time.perf_counter()
    if parse_workers is None:
        parse_workers = default_parse_workers() if bulk else 0
    if bulk:
        report = bulk_ingest(settings, fmt, list(paths), quarantine_path=quarantine, batch_size=batch_size,
                             parse_workers=parse_workers,
                             import_root=Path(import_dir) if import_dir else None, keep_files=keep_import_files,
                             quiet=obj.quiet, on_migration=_echo_migration)
        summary, phases = report.summary, report.lines()
    else:
        with open_store(settings, quiet=obj.quiet) as store:
            prepare_store(store, on_migration=_echo_migration)
            summary = ingest(store, fmt, list(paths), quarantine_path=quarantine,
                             checkpoint_dir=settings.checkpoints_dir, batch_size=batch_size, restart=restart,
                             quiet=obj.quiet, writers=writers, parse_workers=parse_workers,
                             target=settings.database_target, warn=lambda line: click.echo(line, err=True))
        phases = []
    if fmt == "openreview":
        phases += _openreview_side_files(obj, paths, quarantine, submissions_out)
    click.echo(f"ingest {fmt}{' --bulk' if bulk else ''}: done in {time.perf_counter() - t0:.1f}s")
    for line in summary.lines() + phases:
        click.echo("  " + line)
    if summary.bad_ratio > max_bad_ratio:
        click.echo(f"scholargraph: {summary.bad_ratio:.2%} of records quarantined, above --max-bad-ratio "
                   f"{max_bad_ratio:.2%}; see {quarantine}", err=True)
        sys.exit(3)


def _openreview_side_files(obj, paths: tuple[str, ...], quarantine: Path, submissions_out: str | None) -> list[str]:
    """The submissions and profiles of each dataset folder given (the archives went through the loader):
    summary lines. Bad notes go to the quarantine file, as bad publications do."""
    from scholargraph.ingest.loader import Quarantine
    from scholargraph.ingest.openreview import (
        archive_lines,
        merge_author_details,
        read_profiles,
        read_submissions,
        write_queries,
    )

    folders = [p for p in paths if Path(p).is_dir()]
    found = read_submissions(folders)  # all folders at once: a note id given twice is kept once
    submissions, profiles, rejected = found.records, [], list(found.rejected)
    for folder in folders:
        people, bad_profiles = read_profiles(folder)
        profiles += people
        rejected += bad_profiles.rejected
    target = Path(submissions_out) if submissions_out else obj.settings.home / "openreview" / "submissions.jsonl"
    lines, bad_matches = archive_lines(paths, target)  # match_submissions.jsonl
    lines += found.lines("submissions")
    rejected += bad_matches
    if rejected:
        sink = Quarantine(quarantine, "openreview")
        sink.write(rejected)
        sink.close()
        lines.append(f"submissions and profiles: {len(rejected)} bad notes quarantined in {quarantine}")
    if submissions:
        write_queries(submissions, target)
        lines.append(f"submissions: {len(submissions)} written to {target} (reviewers recommend|assign --queries)")
    elif folders:
        lines.append("submissions: none found (submissions.json, submissions.jsonl or submissions/)")
    if profiles:
        with open_store(obj.settings, quiet=True) as store:
            updated = merge_author_details(store, {p.author_id: (p.emails, p.affiliations) for p in profiles})
        lines.append(f"profiles: {len(profiles)} read, emails and institutions stored on {updated} reviewers"
                     + (f" ({len(profiles) - updated} not in the graph)" if updated < len(profiles) else ""))
    return lines


def _ingest_pc_list(obj, paths: tuple[str, ...], pool_out: str | None, allow_empty: bool) -> None:
    """`ingest hotcrp-pc FILE`: the file is read (and refused with exit 2 when bad) before the store opens; a
    member listed twice (their email) counts once; a list none of whose members matches exits 2 unless
    --allow-empty."""
    from scholargraph.errors import UsageError
    from scholargraph.ingest.hotcrp import match_pc, read_pc_list, store_pc_details, write_pool
    from scholargraph.user_files import require_effect

    if len(paths) != 1:
        raise UsageError("ingest hotcrp-pc takes one file: HotCRP's PC info CSV")
    members = read_pc_list(paths[0], "hotcrp-pc", warn)
    with open_store(obj.settings, quiet=obj.quiet) as store:
        match = match_pc(store, members)
        store_pc_details(store, match)
    click.echo(f"ingest hotcrp-pc: {len(members)} PC members read from {paths[0]}")
    for line in match.lines(paths[0]):
        click.echo("  " + line)
    if not match.matched:
        require_effect("hotcrp-pc", paths[0], len(members), "PC member", allow_empty, warn)
    if pool_out:
        write_pool(match, Path(pool_out))
        click.echo(f"  pool: {len(match.matched)} ids written to {pool_out} (reviewers recommend|assign --pool)")


def _ingest_hotcrp_papers(obj, paths: tuple[str, ...], quarantine: Path, max_bad_ratio: float,
                          submissions_out: str | None, conflicts_out: str | None, allow_empty: bool) -> None:
    """`ingest hotcrp-papers FILE`: a bad file exits 2 (UsageError), bad papers are quarantined and counted; a
    file with no paper left to write (every one withdrawn) changes nothing: exit 2 unless --allow-empty."""
    from scholargraph.errors import UsageError
    from scholargraph.ingest.hotcrp import PAPERS, read_papers, write_conflicts
    from scholargraph.ingest.loader import Quarantine
    from scholargraph.ingest.openreview import write_queries
    from scholargraph.user_files import require_effect

    if len(paths) != 1:
        raise UsageError("ingest hotcrp-papers takes one file: HotCRP's paper JSON")
    found = read_papers(paths[0], PAPERS, warn)
    click.echo(f"ingest hotcrp-papers: {paths[0]}")
    for line in found.lines():
        click.echo("  " + line)
    if found.rejected:
        sink = Quarantine(quarantine, PAPERS)
        sink.write(found.rejected)
        sink.close()
        click.echo(f"  quarantine: {quarantine}")
    home = obj.settings.home / "hotcrp"
    if found.records:
        target = Path(submissions_out) if submissions_out else home / "submissions.jsonl"
        write_queries(found.records, target)
        click.echo(f"  submissions: {len(found.records)} written to {target} (reviewers recommend|assign --queries)")
    else:
        click.echo("  submissions: none to write (every paper withdrawn or quarantined)")
    if found.conflicts:
        target = Path(conflicts_out) if conflicts_out else home / "conflicts.csv"
        write_conflicts(found.conflicts, target)
        click.echo(f"  pc_conflicts: {len(found.conflicts)} declared conflicts written to {target} "
                   "(reviewers recommend|assign --conflicts)")
    else:
        click.echo("  pc_conflicts: none to write (none declared, or only what HotCRP's upload refuses)")
    total = len(found.records) + len(found.rejected)
    ratio = len(found.rejected) / total if total else 0.0
    if ratio > max_bad_ratio:
        click.echo(f"scholargraph: {ratio:.2%} of papers quarantined, above --max-bad-ratio {max_bad_ratio:.2%}; "
                   f"see {quarantine}", err=True)
        sys.exit(3)
    if not found.records:
        require_effect(HOTCRP_PAPERS, paths[0], found.withdrawn + len(found.rejected), "paper", allow_empty, warn,
                       check="no paper is left that is not withdrawn (is it the conference's export?)")


def _echo_migration(counts: dict[str, int]) -> None:
    click.echo(migration_summary(counts), err=True)
