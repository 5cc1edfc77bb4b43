"""Ids of the synthetic world's objects: in the source's own form, in corpus records and in the graph."""

from __future__ import annotations

from scholargraph.graph.records import source_id

OPENALEX_PREFIX = "https://openalex.org/"

# kind -> (AMiner prefix, AMiner digits, OpenAlex prefix). OpenAlex ids are a letter and digits only, so the
# leading digit after the letter keeps corpus works, outside works and held-out queries apart.
ID_SHAPES = {
    "paper": ("synth-p", 7, "W1"),
    "stub": ("synth-x", 7, "W2"),
    "reviewer_query": ("synth-r", 5, "W3"),
    "citation_query": ("synth-c", 5, "W4"),
    "author": ("synth-a", 6, "A1"),
    "venue": ("synth-v", 3, "S1"),
    "org": ("synth-i", 4, "I1"),
}


def id_template(kind: str, fmt: str, record: bool = False) -> str:
    """str.format template of an id taking the 1-based number: 'synth-p{:07d}', 'https://openalex.org/W1{:09d}'.

    `record=True` gives the form written inside corpus records (OpenAlex writes full URLs).
    """
    prefix, width, oa_prefix = ID_SHAPES[kind]
    if fmt == "aminer":
        return prefix + "{:0" + str(width) + "d}"
    return (OPENALEX_PREFIX if record else "") + oa_prefix + "{:09d}"


def local_id(kind: str, index: int, fmt: str) -> str:
    """The source's own id for the `index`-th (0-based) object: 'synth-p0000001' or 'W1000000001'."""
    return id_template(kind, fmt).format(index + 1)


def graph_id(kind: str, index: int, fmt: str) -> str:
    """The node id ingestion gives this object ('aminer:synth-p0000001', 'openalex:W1000000001').

    Every ground-truth file writes ids through this function (or its template below), so the truth always
    matches the graph built from the corpus. No synthetic paper has a DOI, so its graph id is never a DOI.
    """
    return source_id(fmt, local_id(kind, index, fmt))


def graph_id_template(kind: str, fmt: str) -> str:
    """graph_id as a str.format template of the 1-based number, for hot loops."""
    return source_id(fmt, id_template(kind, fmt))
