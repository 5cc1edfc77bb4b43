"""The `scholargraph` command: a click group whose subcommands live beside the code they drive."""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass

import click

from scholargraph import __version__
from scholargraph.config import Settings
from scholargraph.errors import ScholargraphError


@dataclass
class AppContext:
    settings: Settings
    quiet: bool = False


class ScholargraphGroup(click.Group):
    """Turns domain errors into one clear line and their exit code, never a traceback; loads each
    subcommand's module on first use (SUBCOMMANDS)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(SUBCOMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in SUBCOMMANDS:
            self.add_command(_load_subcommand(cmd_name))
        return super().get_command(ctx, cmd_name)

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
    except ScholargraphError:
        raise  # a bad setting: one line naming the file or variable (ScholargraphGroup.invoke)
    except (OSError, ValueError) as exc:
        raise click.UsageError(f"bad configuration: {exc}") from None
    ctx.obj = AppContext(settings=settings, quiet=quiet)


# name -> "module:attribute". A subcommand's module is imported when that subcommand runs (or `--help` lists
# them all), not on every call: the ranking modules bring torch and gensim, seconds of import that
# `reviewers recommend --paper` should not pay for `citations` it never touches.
SUBCOMMANDS = {
    "neo4j": "scholargraph.server.cli:neo4j_group",
    "db": "scholargraph.graph_cli:db_group",
    "ingest": "scholargraph.ingest.cli:ingest_command",
    "synth": "scholargraph.synth.cli:synth_command",
    "features": "scholargraph.graph_cli:features_command",
    "query": "scholargraph.graph_cli:query_command",
    "jobs": "scholargraph.ranking.cli:jobs_group",
    "rising-stars": "scholargraph.ranking.rising_stars.cli:rising_stars_group",
    "citations": "scholargraph.ranking.citations.cli:citations_group",
    "reviewers": "scholargraph.ranking.reviewers.cli:reviewers_group",
    "export": "scholargraph.graph_cli:export_group",
    "spark": "scholargraph.spark.cli:spark_group",
}


def _load_subcommand(name: str) -> click.Command:
    module, attribute = SUBCOMMANDS[name].split(":")
    command = getattr(importlib.import_module(module), attribute)
    if command.name != name:
        raise RuntimeError(f"{SUBCOMMANDS[name]} is the command {command.name!r}, not {name!r}")
    return command


if __name__ == "__main__":
    main()
