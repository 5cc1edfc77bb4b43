"""CLI for the graph layer: `scholargraph neo4j ...` (managed server) and `scholargraph db ...`."""

from __future__ import annotations

import csv
import io
import json
import time

import click

from scholargraph.graph import local_server, query_library
from scholargraph.graph.connect import open_store
from scholargraph.graph.encoders import DEFAULT_ENCODER
from scholargraph.graph.features import STEPS, FeatureOptions, run_features


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{n} B"


@click.group("neo4j")
def neo4j_group() -> None:
    """Manage the local Neo4j that scholargraph runs when SCHOLARGRAPH_NEO4J_URI is not set."""


@neo4j_group.command("start")
@click.option("--password", envvar="SCHOLARGRAPH_NEO4J_PASSWORD", default=None,
              help="Turn authentication on with this password for user neo4j (never printed).")
@click.option("--timeout", default=120.0, show_default=True, help="Seconds to wait for Bolt.")
@click.pass_obj
def start_cmd(obj, password: str | None, timeout: float) -> None:
    """Start the managed server (or reuse the running one)."""
    settings = obj.settings if password is None else obj.with_password(password)
    was_running = local_server.running_pid(settings) is not None
    t0 = time.monotonic()
    st = local_server.start(settings, timeout=timeout, quiet=obj.quiet)
    if was_running:
        click.echo(f"Neo4j {st.version} already running at {st.uri} (pid {st.pid})")
    else:
        click.echo(f"Neo4j {st.version} started at {st.uri} (pid {st.pid}) in {time.monotonic() - t0:.1f}s")


@neo4j_group.command("stop")
@click.option("--timeout", default=60.0, show_default=True, help="Seconds to wait for a clean shutdown.")
@click.pass_obj
def stop_cmd(obj, timeout: float) -> None:
    """Stop the managed server and wait for its clean shutdown."""
    if local_server.stop(obj.settings, timeout=timeout):
        click.echo("Neo4j stopped")
    else:
        click.echo("Neo4j was not running")


@neo4j_group.command("status")
@click.pass_obj
def status_cmd(obj) -> None:
    """Version, URI, pid and store size of the managed server."""
    st = local_server.status(obj.settings)
    click.echo(f"state:   {'running' if st.running else 'stopped'}")
    click.echo(f"version: Neo4j {st.version}")
    click.echo(f"uri:     {st.uri}")
    click.echo(f"pid:     {st.pid if st.pid else '-'}")
    click.echo(f"home:    {st.home}")
    click.echo(f"store:   {_human_bytes(st.store_bytes)}")
    if not obj.settings.managed:
        click.echo(f"note:    SCHOLARGRAPH_NEO4J_URI is set; commands use {obj.settings.uri}")


@neo4j_group.command("logs")
@click.option("-n", "--lines", default=50, show_default=True)
@click.pass_obj
def logs_cmd(obj, lines: int) -> None:
    """The last lines of the managed server's log."""
    for line in local_server.tail_logs(obj.settings, lines):
        click.echo(line)


@click.group("db")
def db_group() -> None:
    """Schema and housekeeping of the graph database."""


@db_group.command("init")
@click.pass_obj
def init_cmd(obj) -> None:
    """Create the constraints and indexes (idempotent)."""
    with open_store(obj.settings, quiet=obj.quiet) as store:
        n = store.apply_schema()
    click.echo(f"schema applied ({n} statements) at {store.uri}")


@db_group.command("stats")
@click.pass_obj
def stats_cmd(obj) -> None:
    """Counts per label and relationship type."""
    with open_store(obj.settings, quiet=obj.quiet) as store:
        stats = store.stats()
    click.echo(f"{'nodes':<22}{'count':>12}")
    for label, n in stats["nodes"].items():
        click.echo(f"  {label:<20}{n:>12,}")
    click.echo(f"  {'(stub papers)':<20}{stats['stubs']['Paper']:>12,}")
    click.echo(f"{'relationships':<22}{'count':>12}")
    for rel, n in stats["relationships"].items():
        click.echo(f"  {rel:<20}{n:>12,}")


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
    click.echo(f"database emptied ({left} nodes left)")


@click.command("features")
@click.option("--only", default=",".join(STEPS), show_default=True,
              help="Comma-separated steps: networks, pagerank, topics, vectors.")
@click.option("--as-of", "as_of", type=int, default=None,
              help="Compute from papers up to this year only; scalar results are written as <name>AsOf<YEAR>.")
@click.option("--topics", "num_topics", default=10, show_default=True, type=click.IntRange(2, 500))
@click.option("--encoder", default=DEFAULT_ENCODER, show_default=True, help="Text encoder for semanticVector.")
@click.option("--backend", type=click.Choice(["networkx", "gds"]), default="networkx", show_default=True,
              help="PageRank in process (SciPy) or on the server with Graph Data Science.")
@click.option("--retrain", is_flag=True, help="Fit a new topic model and encoder even when saved ones exist.")
@click.option("--force", is_flag=True, help="Recompute even when nothing changed since the last run.")
@click.pass_obj
def features_command(obj, only: str, as_of: int | None, num_topics: int, encoder: str, backend: str,
                     retrain: bool, force: bool) -> None:
    """Derived networks, PageRank, LDA topics and text/citation vectors, written back to the graph."""
    steps = tuple(s.strip() for s in only.split(",") if s.strip())
    unknown = set(steps) - set(STEPS)
    if unknown:
        raise click.UsageError(f"unknown step(s) {', '.join(sorted(unknown))}; choose from {', '.join(STEPS)}")
    options = FeatureOptions(only=steps, as_of=as_of, num_topics=num_topics, encoder=encoder, backend=backend)
    log = (lambda _msg: None) if obj.quiet else (lambda msg: click.echo(f"  {msg}", err=True))
    with open_store(obj.settings, quiet=obj.quiet) as store:
        report = run_features(store, obj.settings.models_dir, options, retrain=retrain, force=force,
                              quiet=obj.quiet, log=log)
    click.echo(report)


@click.command("query")
@click.argument("name", required=False)
@click.option("-p", "--param", "params", multiple=True, metavar="KEY=VALUE", help="A query parameter (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--list", "list_only", is_flag=True, help="List the library's queries with their parameters.")
@click.pass_obj
def query_command(obj, name: str | None, params: tuple[str, ...], fmt: str, list_only: bool) -> None:
    """Run a query of the Cypher library (scholargraph/cypher/queries/) and print its rows."""
    if list_only or not name:
        for spec in query_library.list_queries():
            args = ", ".join(f"{k} ({t}{'' if d is None else ', default ' + d})" for k, (t, d) in spec.params.items())
            click.echo(f"{spec.name}\n    {spec.purpose}\n    params: {args or '-'}\n    e.g. {spec.example}")
        return
    spec = query_library.describe(name)
    bound = query_library.bind(spec, list(params))
    with open_store(obj.settings, quiet=obj.quiet) as store:
        columns, rows = store.run_library_query(name, bound)
    click.echo(render_rows(columns, rows, fmt))


def emit_lines(lines: list[str], out: str | None, note: str = "") -> None:
    """Results to a file (--out) or stdout; a side note (what was written to the graph) to stderr."""
    text = "\n".join(lines)
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        click.echo(text)
    if note:
        click.echo(note, err=True)


def render_rows(columns: list[str], rows: list[list], fmt: str) -> str:
    """Rows as an aligned text table, JSON lines or CSV."""
    if fmt == "json":
        return "\n".join(json.dumps(dict(zip(columns, row)), default=str, ensure_ascii=False) for row in rows)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(columns)
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)


def _cell(value) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (list, dict)) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."
