"""Cypher lives in .cypher files, one query per file, loaded by name."""

from functools import cache
from importlib import resources


@cache
def load(name: str) -> str:
    """The text of `<name>.cypher` (e.g. 'schema' or 'store/upsert_papers'), header comments included."""
    return resources.files(__package__).joinpath(f"{name}.cypher").read_text(encoding="utf-8")


def statements(name: str) -> list[str]:
    """A multi-statement file (like schema.cypher) split on ';', comment lines dropped first."""
    body = "\n".join(line for line in load(name).splitlines() if not line.strip().startswith("//"))
    return [piece.strip() for piece in body.split(";") if piece.strip()]
