"""The `scholargraph` command: a click group whose subcommands live beside the code they drive."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

import click

from scholargraph import __version__
from scholargraph.config import Settings
from scholargraph.errors import ScholargraphError


@dataclass
class AppContext:
    settings: Settings
    quiet: bool = False

    def with_password(self, password: str) -> Settings:
        return replace(self.settings, neo4j_password=password)


class ScholargraphGroup(click.Group):
    """Turns domain errors into one clear line and their exit code, never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ScholargraphError as exc:
            click.echo(f"scholargraph: {exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("scholargraph: interrupted", err=True)
            sys.exit(130)


@click.group(cls=ScholargraphGroup)
@click.version_option(__version__, prog_name="scholargraph")
@click.option("--config", type=click.Path(dir_okay=False), default=None, envvar="SCHOLARGRAPH_CONFIG",
              help="TOML file with a [scholargraph] table (environment variables override it).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.pass_context
def main(ctx: click.Context, config: str | None, quiet: bool) -> None:
    """scholargraph: load bibliographic dumps into Neo4j and rank reviewers, rising stars and citations."""
    try:
        settings = Settings.load(config_file=config)
    except (OSError, ValueError) as exc:
        raise click.UsageError(f"bad configuration: {exc}") from None
    ctx.obj = AppContext(settings=settings, quiet=quiet)


def _register() -> None:
    from scholargraph.graph_cli import db_group, export_group, features_command, query_command
    from scholargraph.ingest.cli import ingest_command
    from scholargraph.ranking.citations.cli import citations_group
    from scholargraph.ranking.cli import jobs_group
    from scholargraph.ranking.reviewers.cli import reviewers_group
    from scholargraph.ranking.rising_stars.cli import rising_stars_group
    from scholargraph.server.cli import neo4j_group
    from scholargraph.spark.cli import spark_group
    from scholargraph.synth.cli import synth_command

    for command in (neo4j_group, db_group, ingest_command, synth_command, features_command,
                    query_command, jobs_group, rising_stars_group, citations_group,
                    reviewers_group, export_group, spark_group):
        main.add_command(command)


_register()

if __name__ == "__main__":
    main()
