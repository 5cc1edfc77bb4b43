"""The Cypher query library as a Neo4j Browser guide, served by the managed server's HTTP port.

`render_guide` is pure (query specs and texts -> HTML); `write_browser_jar` adds the page to a copy of the
Neo4j Browser jar as the classpath resource `browser/scholargraph/guide.html`, which the server's Browser
module serves at `/browser/scholargraph/guide.html` next to the Browser itself.
"""

from __future__ import annotations

import html
import os
import shlex
import shutil
import zipfile
from collections.abc import Sequence
from pathlib import Path

from scholargraph import cypher
from scholargraph.graph.query_library import QuerySpec, list_queries

GUIDE_RESOURCE = "browser/scholargraph/guide.html"  # inside the jar; served under the same path
GUIDE_PATH = "/" + GUIDE_RESOURCE
_FIXED_TIME = (2024, 1, 1, 0, 0, 0)  # zip entry time of the added entries

_SLIDE = """    <slide class="row-fluid">
      <div class="col-sm-12">
{body}
      </div>
    </slide>
"""


def guide_url(http_port: int) -> str:
    return f"http://127.0.0.1:{http_port}{GUIDE_PATH}"


def query_body(text: str) -> str:
    """The query without its header comment (the leading `//` lines)."""
    lines = text.strip().splitlines()
    while lines and (lines[0].lstrip().startswith("//") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines).strip()


def example_values(spec: QuerySpec) -> dict[str, str]:
    """The `-p key=value` pairs of the query's example command line."""
    try:
        words = shlex.split(spec.example)
    except ValueError:
        words = spec.example.split()
    values: dict[str, str] = {}
    for flag, item in zip(words, words[1:]):
        if flag == "-p" and "=" in item:
            key, value = item.split("=", 1)
            values[key] = value
    return values


def _literal(kind: str, raw: str) -> str:
    if kind in ("int", "float"):
        try:
            (int if kind == "int" else float)(raw)
            return raw
        except ValueError:
            pass
    return "'" + raw.replace("\\", "\\\\").replace("'", "\\'") + "'"


def params_command(spec: QuerySpec) -> str | None:
    """A Browser `:params {...}` command setting every parameter to its example or default value.

    A parameter with neither is set to null (to be edited); a query without parameters gets None.
    """
    if not spec.params:
        return None
    examples = example_values(spec)
    items = []
    for name, (kind, default) in spec.params.items():
        raw = examples.get(name, default)
        items.append(f"{name}: {'null' if raw is None else _literal(kind, raw)}")
    return ":params {" + ", ".join(items) + "}"


def _pre(code: str) -> str:
    return f'<pre mode="cypher" class="pre-scrollable code runnable">{html.escape(code, quote=False)}</pre>'


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def _intro(specs: Sequence[QuerySpec]) -> str:
    rows = "\n".join(f"          <li><b>{_e(s.name)}</b>: {_e(s.purpose)}</li>" for s in specs)
    return "\n".join([
        "        <h3>scholargraph: the Cypher query library</h3>",
        '        <p class="lead">Every query of <code>scholargraph query --list</code>, one per slide.</p>',
        "        <p>On each slide, click the <code>:params</code> block to set the parameters to the example",
        "          values (edit them to your own ids), then click the query and run it. The same queries run",
        "          from the command line: <code>scholargraph query NAME -p key=value</code>.</p>",
        "        <ul>",
        rows,
        "        </ul>",
        "        <p>The schema of the graph:</p>",
        "        " + _pre("CALL db.schema.visualization()"),
    ])


def _query_slide(spec: QuerySpec, text: str) -> str:
    parts = [f"        <h3>{_e(spec.name)}</h3>",
             f'        <p class="lead">{_e(spec.purpose)}</p>']
    command = params_command(spec)
    if command is None:
        parts.append("        <p>No parameters.</p>")
    else:
        described = ", ".join(f"<code>{_e(name)}</code> ({_e(kind)}"
                              + (f", default {_e(default)}" if default is not None else "") + ")"
                              for name, (kind, default) in spec.params.items())
        parts += [f"        <p>Parameters: {described}. Set them first:</p>", "        " + _pre(command)]
    parts += ["        <p>The query:</p>", "        " + _pre(query_body(text))]
    if spec.example:
        parts.append(f"        <p>From the command line: <code>{_e(spec.example)}</code></p>")
    return "\n".join(parts)


def render_guide(queries: Sequence[tuple[QuerySpec, str]]) -> str:
    """The guide's HTML: an intro slide, then one slide per (spec, query text), in the given order."""
    specs = [spec for spec, _text in queries]
    slides = [_SLIDE.format(body=_intro(specs))]
    slides += [_SLIDE.format(body=_query_slide(spec, text)) for spec, text in queries]
    return ('<article class="guide">\n  <carousel class="deck container-fluid">\n'
            + "".join(slides) + "  </carousel>\n</article>\n")


def library_guide() -> str:
    """The guide of the query library as installed."""
    return render_guide([(spec, cypher.load(f"queries/{spec.name}")) for spec in list_queries()])


def write_browser_jar(browser_jar: Path, path: Path, page: str) -> Path:
    """A copy of the Neo4j Browser jar with `page` added as GUIDE_RESOURCE (written atomically).

    The server serves the Browser from the first `browser/` directory on its classpath, so the guide
    cannot come from a jar of its own: the copy goes on the classpath ahead of the original.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    shutil.copyfile(browser_jar, tmp)
    with zipfile.ZipFile(tmp, "a", zipfile.ZIP_DEFLATED) as jar:
        present = set(jar.namelist())
        parts = GUIDE_RESOURCE.split("/")
        for i in range(1, len(parts)):  # directory entries: class loaders look a directory up by them
            directory = "/".join(parts[:i]) + "/"
            if directory not in present:
                jar.writestr(zipfile.ZipInfo(directory, _FIXED_TIME), "")
        if GUIDE_RESOURCE in present:
            raise ValueError(f"{browser_jar} already holds {GUIDE_RESOURCE}")
        jar.writestr(zipfile.ZipInfo(GUIDE_RESOURCE, _FIXED_TIME), page.encode("utf-8"),
                     compress_type=zipfile.ZIP_DEFLATED)
    os.replace(tmp, path)
    return path
