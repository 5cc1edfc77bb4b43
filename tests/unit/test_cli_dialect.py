"""The one CLI dialect, checked over the whole click tree: help on every option, the same --format/--out/--write."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from scholargraph.cli import SUBCOMMANDS, main
from scholargraph.conference.exchange import TOOL_FORMATS
from scholargraph.tables import FORMATS

# Commands that print result rows, and whether their rows are rankings (which a TREC run can hold).
ROW_COMMANDS = {
    "query": False,
    "jobs status": False,
    "jobs history": False,
    "rising-stars score": True,
    "citations recommend": True,
    "reviewers recommend": True,
    "reviewers assign": True,
    "reviewers conflicts": False,
    "reviewers profile show": False,
}
# Commands that also write the chair's conference tools' files (after the common formats).
CHAIR_TOOLS = {"reviewers recommend", "reviewers assign"}


def commands(group: click.Group = main, prefix: str = ""):
    ctx = click.Context(group)  # the top group loads its subcommands on demand: list them as --help does
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, f"{prefix}{name} is listed but does not load"
        path = f"{prefix}{name}"
        if isinstance(command, click.Group):
            yield from commands(command, f"{path} ")
        else:
            yield path, command


def option(command: click.Command, name: str) -> click.Option | None:
    return next((p for p in command.params if isinstance(p, click.Option) and name in p.opts), None)


def test_every_option_has_help_text():
    missing = [f"{path} {'/'.join(p.opts)}" for path, command in commands() for p in command.params
               if isinstance(p, click.Option) and not (p.help or "").strip()]
    missing += [f"{'/'.join(p.opts)}" for p in main.params if isinstance(p, click.Option) and not p.help
                and "--version" not in p.opts]
    assert not missing, f"options without help text: {', '.join(missing)}"


@pytest.mark.parametrize("path, ranking", sorted(ROW_COMMANDS.items()))
def test_row_commands_offer_the_same_formats_and_out(path, ranking):
    command = dict(commands())[path]
    fmt, out = option(command, "--format"), option(command, "--out")
    assert fmt is not None and out is not None, f"{path}: --format and --out"
    choices = list(fmt.type.choices)
    expected = [f for f in FORMATS if ranking or f != "trec"] + (list(TOOL_FORMATS) if path in CHAIR_TOOLS else [])
    assert choices == expected and fmt.default == "table", f"{path}: --format {choices}"
    assert all(f.split(":")[0] in fmt.help for f in choices), f"{path}: --format's help names every format"
    assert out.help


def test_only_the_row_commands_take_a_rows_format():
    # synth's --format is the dump format it writes (aminer|openalex), not a rendering of rows.
    rows = {path for path, command in commands()
            if (o := option(command, "--format")) is not None
            and set(o.type.choices) <= set(FORMATS) | set(TOOL_FORMATS)}
    assert rows == set(ROW_COMMANDS)


def test_write_means_the_same_everywhere():
    writers = {path: option(command, "--write") for path, command in commands() if option(command, "--write")}
    assert set(writers) == {"rising-stars score", "citations recommend", "reviewers recommend", "reviewers assign"}
    for path, o in writers.items():
        assert o.secondary_opts == ["--no-write"] and o.default is False, path
        assert "scoring run" in o.help and "`jobs run` always writes" in o.help, path


def test_k_is_results_per_query_and_limit_rows_of_a_listing():
    for path, command in commands():
        k, limit = option(command, "--k"), option(command, "--limit")
        if k is not None and path != "rising-stars evaluate":  # there --k is the Pre@k% cut-offs
            assert "Results per query" in k.help, path
        if limit is not None:
            assert "Rows of the listing" in limit.help, path


def test_the_engine_options_mean_the_same_on_features_and_jobs_run():
    engines = {path: option(command, "--engine") for path, command in commands() if option(command, "--engine")}
    assert set(engines) == {"features", "jobs run"}
    for path, o in engines.items():
        assert list(o.type.choices) == ["in-process", "spark"] and o.default == "in-process", path
        for name in ("--master", "--snapshot", "--keep-snapshot"):
            assert option(dict(commands())[path], name) is not None, (path, name)


def test_spark_with_the_gds_backend_is_a_usage_error_before_anything_starts(tmp_path):
    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["features", "--engine", "spark", "--backend", "gds"],
                                env={"SCHOLARGRAPH_HOME": str(tmp_path)})
    assert result.exit_code == 2 and "does not combine with --backend gds" in result.output


def test_a_subcommand_imports_only_its_own_modules():
    """`reviewers` must not pay for the citation commands (NNRank, Spark) or gensim (tokenising) before it
    needs them: the CLI loads a subcommand's module when that subcommand runs."""
    code = ("import sys; from scholargraph.cli import main; import click\n"
            "main.get_command(click.Context(main), 'reviewers')\n"
            "heavy = ('gensim', 'pyspark', 'scholargraph.ranking.citations.cli')\n"
            "print(' '.join(m for m in heavy if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == []


def test_every_subcommand_is_listed_under_its_own_name():
    ctx = click.Context(main)
    assert set(SUBCOMMANDS) <= set(main.list_commands(ctx))
    for name in SUBCOMMANDS:
        assert main.get_command(ctx, name).name == name
