"""CLI: `scholargraph jobs run|schedule|status|history` (the scoring pipeline)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import click

from scholargraph.cli_output import emit, engine_options, rows_output
from scholargraph.ranking.batch import IN_PROCESS
from scholargraph.ranking.jobs import PIPELINE, run_pipeline
from scholargraph.server.connect import open_store
from scholargraph.spark.engine import SparkMapper
from scholargraph.spark.features import chosen_engine
from scholargraph.tables import Rows

LISTING = ("table", "jsonl", "csv", "tsv")


@click.group("jobs")
def jobs_group() -> None:
    """Scoring jobs: features, rising stars, reviewers and citations, in dependency order."""


def _log(obj):
    return (lambda _msg: None) if obj.quiet else (lambda msg: click.echo(f"  {msg}", err=True))


@jobs_group.command("run")
@click.option("--only", default=",".join(PIPELINE), show_default=True, help="Comma-separated steps to run.")
@click.option("--full", is_flag=True, help="Rescore everything, not only what changed since the last run.")
@click.option("--lease", default=600, show_default=True, type=click.IntRange(30, 86_400),
              help="Seconds a crashed run keeps the lock before the next run may take it.")
@engine_options
@click.pass_obj
def run_cmd(obj, only: str, full: bool, lease: int, engine: str, master: str | None, snapshot: str | None,
            keep_snapshot: bool) -> None:
    """Run the pipeline once (exit code 4 when another run holds the lock).

    With --engine spark the run exports the graph to Parquet once; networks and PageRank run on Spark and are
    written back through the Neo4j connector, and the models' batch scoring runs in Spark partitions."""
    steps = tuple(s.strip() for s in only.split(",") if s.strip())
    unknown = set(steps) - set(PIPELINE)
    if unknown:
        raise click.UsageError(f"unknown step(s) {', '.join(sorted(unknown))}; choose from {', '.join(PIPELINE)}")
    with open_store(obj.settings, quiet=obj.quiet) as store:
        store.apply_schema()
        with chosen_engine(obj.settings, store, engine, master, Path(snapshot) if snapshot else None,
                           keep_snapshot, quiet=obj.quiet) as chosen:
            report = run_pipeline(store, obj.settings.models_dir, steps, full=full, lease_seconds=lease,
                                  quiet=obj.quiet, log=_log(obj), engine=chosen,
                                  mapper=IN_PROCESS if chosen is None else SparkMapper(chosen.spark))
    for step, summary in report.steps:
        click.echo(f"{step:<13} {summary}")
    click.echo(f"jobs run finished in {report.seconds:.1f}s")


@jobs_group.command("schedule")
@click.option("--cron", required=True, help='Crontab expression, e.g. "0 3 * * *" (every day at 03:00).')
@click.option("--only", default=",".join(PIPELINE), show_default=True, help="Comma-separated steps to run.")
@click.option("--full", is_flag=True, help="Rescore everything at every run, not only what changed since the last.")
@click.pass_obj
def schedule_cmd(obj, cron: str, only: str, full: bool) -> None:
    """Run the pipeline on a cron schedule until SIGTERM/SIGINT (the docker-compose `scheduler` service)."""
    from apscheduler.schedulers.blocking import BlockingScheduler
    from apscheduler.triggers.cron import CronTrigger

    try:
        trigger = CronTrigger.from_crontab(cron)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--cron") from None
    steps = tuple(s.strip() for s in only.split(",") if s.strip())
    scheduler = BlockingScheduler()

    def tick() -> None:
        from scholargraph.errors import ScholargraphError

        try:
            with open_store(obj.settings, quiet=True) as store:
                store.apply_schema()
                report = run_pipeline(store, obj.settings.models_dir, steps, full=full, quiet=True, log=_log(obj))
            click.echo(f"scheduled run finished in {report.seconds:.1f}s: "
                       + "; ".join(f"{s}: {m}" for s, m in report.steps))
        except ScholargraphError as exc:  # one bad night must not stop the scheduler
            click.echo(f"scheduled run failed: {exc}", err=True)

    scheduler.add_job(tick, trigger, id="scoring", max_instances=1, coalesce=True)

    def stop(signum, _frame) -> None:
        click.echo(f"received signal {signum}: finishing the current run, then stopping", err=True)
        scheduler.shutdown(wait=True)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    click.echo(f"scheduler started: {cron!r} -> {', '.join(steps)}; next run at "
               f"{trigger.get_next_fire_time(None, __import__('datetime').datetime.now().astimezone())}")
    sys.stdout.flush()
    scheduler.start()
    click.echo("scheduler stopped")


@jobs_group.command("status")
@rows_output(formats=LISTING, about="One row per job.")
@click.pass_obj
def status_cmd(obj, fmt: str, out: str | None) -> None:
    """The current run of each job, and any run in progress."""
    with open_store(obj.settings, quiet=obj.quiet) as store:
        rows = store.run_history(limit=200)
    latest: dict[str, dict] = {}
    for row in rows:
        if row["current"] or row["status"] == "running" or row["job"] not in latest:
            latest.setdefault(row["job"], row)
            if row["current"]:
                latest[row["job"]] = row
    cols = ["job", "id", "status", "current", "startedAt", "finishedAt"]
    emit(Rows(cols, [[r[c] for c in cols] for r in latest.values()]), fmt, out)


@jobs_group.command("history")
@click.option("-n", "--limit", default=20, show_default=True,
              help="Rows of the listing: the newest this many scoring runs.")
@rows_output(formats=LISTING, about="One row per scoring run.")
@click.pass_obj
def history_cmd(obj, limit: int, fmt: str, out: str | None) -> None:
    """Scoring runs, newest first."""
    with open_store(obj.settings, quiet=obj.quiet) as store:
        rows = store.run_history(limit=limit)
    cols = ["id", "job", "status", "current", "startedAt", "finishedAt", "counts", "error"]
    emit(Rows(cols, [[r[c] for c in cols] for r in rows]), fmt, out)
