"""CLI: `scholargraph spark jars` (what `spark-submit --jars` takes for the Spark engine)."""

from __future__ import annotations

import click

from scholargraph.spark.session import connector_jars


@click.group("spark")
def spark_group() -> None:
    """The Spark engine's setup (`--engine spark` on features and jobs run; docs/scale-out.md)."""


@spark_group.command("jars")
@click.pass_obj
def jars_cmd(obj) -> None:
    """Print the Neo4j Spark connector's jars, comma-separated (fetched from Maven once), for
    `spark-submit --jars "$(scholargraph spark jars)"`."""
    click.echo(",".join(str(p) for p in connector_jars(obj.settings, quiet=obj.quiet)))
