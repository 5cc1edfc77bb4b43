"""The one CLI output dialect: `--format`/`--out` on every command that prints rows, and where each part goes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import click

from scholargraph.graph.ids import IdResolver, Resolution
from scholargraph.tables import FORMATS, Rows, render

FORMAT_HELP = {
    "table": "table: aligned text for a terminal",
    "jsonl": "jsonl: one JSON object per line",
    "csv": "csv: a header line, cells quoted where needed",
    "tsv": "tsv: a header line, tab-separated",
    "trec": "trec: a TREC run `qid Q0 doc rank score tag`",
}



def rows_output(formats: Sequence[str] = FORMATS, default: str = "table", about: str = "",
                tools: Mapping[str, str] | None = None) -> Callable:
    """Adds `--format` (the given subset of FORMATS) and `--out FILE` to a command; `about` adds to --format's help
    what this command's rows hold. `tools`: further format names with their help, files of another program
    (the chair's conference tools) that the command writes itself (emit_text)."""
    unknown = set(formats) - set(FORMATS)
    if unknown or default not in formats:
        raise ValueError(f"formats {formats} (default {default}) outside {FORMATS}")
    tools = dict(tools or {})
    help_text = "; ".join([*(FORMAT_HELP[f] for f in formats), *tools.values()]) + "." + (f" {about}" if about else "")

    def decorate(command: Callable) -> Callable:
        command = click.option("--out", type=click.Path(dir_okay=False), default=None,
                               help="Write the rows to this file instead of stdout.")(command)
        return click.option("--format", "fmt", type=click.Choice([*formats, *tools]), default=default,
                            show_default=True, help=help_text)(command)

    return decorate


def write_option(what: str) -> Callable:
    """`--write/--no-write`, the same rule everywhere: off unless asked (`jobs run` always writes)."""
    return click.option("--write/--no-write", default=False, show_default=True,
                        help=f"Store {what} in the graph as a scoring run (the previous run stays current until this "
                             "one completes). `jobs run` always writes.")


def warn(message: str) -> None:
    """A line for the user on stderr, beside the rows: the `warn` the services and the file readers are given."""
    click.echo(f"scholargraph: {message}", err=True)


def allow_empty_option(files: str) -> Callable:
    """`--allow-empty`, the same rule everywhere (user_files.require_effect): a user's file that applies to
    nothing of the run exits 2 unless it is given."""
    return click.option("--allow-empty", is_flag=True,
                        help=f"Go on, with a warning, when {files} applies to nothing of this run (none of its ids "
                             "known, or none for these submissions); without it that is exit 2, as a wrong "
                             "file most likely is.")


def emit(rows: Rows, fmt: str, out: str | None, summary: Sequence[str] = (), note: str = "") -> None:
    """The rows to `--out` or stdout. A summary follows a table on stdout, and goes to stderr beside machine-readable
    rows or a file; a side note (what was written to the graph) always goes to stderr."""
    text = render(rows, fmt)
    on_terminal = fmt == "table" and not out
    if on_terminal and summary:
        text = "\n".join([*([text] if text else []), "", *summary])
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        click.echo(text)
    aside = [] if on_terminal else list(summary)
    if note:
        aside.append(note)
    if aside:
        click.echo("\n".join(aside), err=True)


def emit_text(text: str, out: str | None, aside: Sequence[str] = ()) -> None:
    """A file another program reads (a conference tool's upload) to `--out` or stdout; the lines about it (what
    was left out, and why) go to stderr."""
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        click.echo(text)
    if aside:
        click.echo("\n".join(aside), err=True)


def migration_summary(counts: dict[str, int]) -> str:
    """One line: what the whitespace-free id migration renamed (and folded into an existing node)."""
    if not any(counts.values()):
        return "ids: nothing to migrate (every id is whitespace-free)"
    line = (f"ids migrated to their whitespace-free form: {counts.get('Author', 0):,} authors, "
            f"{counts.get('Venue', 0):,} venues, {counts.get('Paper', 0):,} papers (ids, venue or source ids), "
            f"{counts.get('PaperAlias', 0):,} paper aliases; the old ids still resolve")
    if counts.get("folded"):
        line += (f"; {counts['folded']:,} nodes folded into the node that already had the new id: run "
                 "`scholargraph features --force` to recompute the derived networks")
    return line


def resolve_ids(resolver: IdResolver, kind: str, given, what: str) -> Resolution:
    """`given` ids of one option resolved: unknown ones are warned about on stderr (their count, up to five
    examples); none known at all is a UsageError (exit 2) that shows the expected form."""
    res = resolver.resolve(kind, given).require(what)
    message = res.warning(what)
    if message:
        click.echo(f"scholargraph: {message}", err=True)
    return res


def engine_options(command: Callable) -> Callable:
    """`--engine in-process|spark`, `--master`, `--snapshot DIR` and `--keep-snapshot`: the same on `features` and
    `jobs run` (docs/scale-out.md)."""
    command = click.option("--engine", type=click.Choice(["in-process", "spark"]), default="in-process",
                           show_default=True,
                           help="Where networks, PageRank, topics, text vectors and batch scoring run: in this "
                                "process, or on Apache Spark (pip install 'scholargraph[spark]').")(command)
    command = click.option("--master", default=None, envvar="SCHOLARGRAPH_SPARK_MASTER",
                           help="Spark master for --engine spark: local[N] or a cluster URL "
                                "(default: local[2], or SCHOLARGRAPH_SPARK_MASTER).")(command)
    command = click.option("--snapshot", type=click.Path(file_okay=False, exists=True), default=None,
                           help="--engine spark: compute on this `export parquet` directory instead of exporting "
                                "the graph first (shared storage on a cluster).")(command)
    return click.option("--keep-snapshot", is_flag=True,
                        help="--engine spark: keep the run's Parquet export under "
                             "SCHOLARGRAPH_HOME/spark/snapshots.")(command)
