"""The Cypher query library: one file per query under cypher/queries/, described by its header comment."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources

from scholargraph import cypher
from scholargraph.errors import UsageError

_PARAM = re.compile(r"(\w+)\s*\((\w+)(?:[^)]*?default\s+([^)\s,]+))?[^)]*\)")
# A parameter described as "a Paper id" (Author, Topic, Venue) takes an id: the CLI resolves it.
_ID_PARAM = re.compile(r"\b(Paper|Author|Topic|Venue) id\b")


@dataclass(frozen=True)
class QuerySpec:
    name: str
    purpose: str
    example: str
    params: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # name -> (type, default)
    id_params: dict[str, str] = field(default_factory=dict)  # name -> kind of id ('paper', 'author', ...)
    id_columns: tuple[str, ...] = ()  # result columns holding node ids (header `// ids: author`)


def _header(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"//\s*(purpose|params|ids|example):\s*(.*)", line)
        if m:
            fields[m.group(1)] = m.group(2).strip()
    return fields


def list_queries() -> list[QuerySpec]:
    names = sorted(p.name[:-len(".cypher")] for p in resources.files(cypher).joinpath("queries").iterdir()
                   if p.name.endswith(".cypher"))
    return [describe(name) for name in names]


def describe(name: str) -> QuerySpec:
    try:
        text = cypher.load(f"queries/{name}")
    except (FileNotFoundError, OSError):
        known = ", ".join(q.name for q in list_queries())
        raise UsageError(f"unknown query {name!r}; known: {known}") from None
    header = _header(text)
    matches = list(_PARAM.finditer(header.get("params", "")))
    params = {m.group(1): (m.group(2), m.group(3)) for m in matches}
    id_params = {m.group(1): found.group(1).lower() for m in matches if (found := _ID_PARAM.search(m.group(0)))}
    id_columns = tuple(re.findall(r"\w+", header.get("ids", "").split("(")[0]))
    return QuerySpec(name, header.get("purpose", ""), header.get("example", ""), params, id_params, id_columns)


def _convert(name: str, kind: str, raw: str):
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
    except ValueError:
        raise UsageError(f"parameter {name} must be an {kind}, not {raw!r}") from None
    return raw


def bind(spec: QuerySpec, assignments: list[str]) -> dict:
    """`key=value` strings -> typed parameters, defaults filled in; unknown or missing ones are errors."""
    given: dict[str, str] = {}
    for item in assignments:
        if "=" not in item:
            raise UsageError(f"parameters are key=value, not {item!r}")
        key, value = item.split("=", 1)
        if key not in spec.params:
            raise UsageError(f"query {spec.name} has no parameter {key!r} (it takes: {', '.join(spec.params)})")
        given[key] = value
    bound = {}
    for key, (kind, default) in spec.params.items():
        raw = given.get(key, default)
        if raw is None:
            raise UsageError(f"query {spec.name} needs -p {key}=... ({kind})")
        bound[key] = _convert(key, kind, raw)
    return bound
