"""CLI of the managed server: `scholargraph neo4j start|stop|status|logs`."""

from __future__ import annotations

import time
from dataclasses import replace

import click

from scholargraph.server import local_server


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
@click.option("--no-auth", is_flag=True,
              help="No password at all, for a throw-away server (SCHOLARGRAPH_NEO4J_AUTH=off does the same): "
                   "every account on this machine can then read and change the graph.")
@click.option("--timeout", default=120.0, show_default=True, help="Seconds to wait for Bolt (and HTTP).")
@click.pass_obj
def start_cmd(obj, no_auth: bool, timeout: float) -> None:
    """Start the managed server (or reuse the running one).

    Authentication is on: user neo4j with SCHOLARGRAPH_NEO4J_PASSWORD when it is set, else with a random
    password generated on the first start into $SCHOLARGRAPH_HOME/neo4j-password (mode 0600), which every
    command reads. The password is never printed."""
    settings = replace(obj.settings, neo4j_auth=False) if no_auth else obj.settings
    was_running = local_server.running_pid(settings) is not None
    t0 = time.monotonic()
    st = local_server.start(settings, timeout=timeout, quiet=obj.quiet)
    if was_running:
        click.echo(f"Neo4j {st.version} already running at {st.uri} (pid {st.pid})")
    else:
        click.echo(f"Neo4j {st.version} started at {st.uri} (pid {st.pid}) in {time.monotonic() - t0:.1f}s")
    click.echo(f"auth:    {_auth_line(st, settings)}")
    if (local_server.import_state(settings) or {}).get("phase") == "imported":
        from scholargraph.server.connect import open_store  # the driver, only when there is work for it

        with open_store(settings, quiet=True):
            pass  # opening the database completes it (connect.finish_import)
        click.echo("completed the last `ingest --bulk`: its import had finished, its schema is now created")
    if st.browser_url:
        click.echo(f"Neo4j Browser: {st.browser_url} (the query library's guide opens on connect)")
    if was_running and st.auth is not True and settings.neo4j_auth:
        click.echo("note: this server runs without authentication (it was started so, or before authentication "
                   "became the default); restart it to turn it on: scholargraph neo4j stop && scholargraph neo4j "
                   "start", err=True)


def _auth_line(st: local_server.ServerStatus, settings) -> str:
    """How to log in, never the password itself."""
    if st.auth is None:
        return "unknown (started by an earlier version; restart to turn authentication on)"
    if not st.auth:
        return "off (every account on this machine can connect)"
    if st.password_file is not None:
        return f"user {settings.neo4j_user}, the password in {st.password_file}"
    return f"user {settings.neo4j_user}, the password of SCHOLARGRAPH_NEO4J_PASSWORD"


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
    """Version, URI, Browser URL, pid and store size of the managed server."""
    st = local_server.status(obj.settings)
    click.echo(f"state:   {'running' if st.running else 'stopped'}")
    click.echo(f"version: Neo4j {st.version}")
    click.echo(f"uri:     {st.uri}")
    click.echo(f"browser: {st.browser_url or '-'}")
    click.echo(f"auth:    {_auth_line(st, obj.settings) if st.running else '-'}")
    click.echo(f"pid:     {st.pid if st.pid else '-'}")
    click.echo(f"home:    {st.home}")
    click.echo(f"store:   {_human_bytes(st.store_bytes)}")
    if not obj.settings.managed:
        click.echo(f"note:    SCHOLARGRAPH_NEO4J_URI is set; commands use {obj.settings.uri}")


@neo4j_group.command("logs")
@click.option("-n", "--lines", default=50, show_default=True, help="Last lines of the server log to print.")
@click.pass_obj
def logs_cmd(obj, lines: int) -> None:
    """The last lines of the managed server's log."""
    for line in local_server.tail_logs(obj.settings, lines):
        click.echo(line)
