"""Domain records (Paper, Author, Venue, Authorship, Citation) and the id policy."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

# --- id policy -------------------------------------------------------------------------------

_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi:")
_DOI_SHAPE = re.compile(r"^10\.\d{4,9}/\S+$")
_WHITESPACE = re.compile(r"\s+")


def paper_text(title: str | None, abstract: str | None) -> str:
    """A paper's title and abstract as one text ('' when it has neither): what single-text models read."""
    return " ".join(t for t in (title, abstract) if t)


def normalize_doi(raw: str | None) -> str | None:
    """Lower-cased bare DOI ('10.1145/123.456'), or None when `raw` is not a DOI."""
    if not raw or not isinstance(raw, str):
        return None
    doi = raw.strip()
    low = doi.lower()
    for prefix in _DOI_PREFIXES:
        if low.startswith(prefix):
            doi = doi[len(prefix):]
            break
    doi = doi.strip().lower()
    return doi if _DOI_SHAPE.match(doi) else None


def fold_id(text: str) -> str:
    """An id (or the local part of one) without whitespace: ends stripped, each run of whitespace folded to
    '_' ('my key' -> 'my_key'). Ids never contain whitespace, so that TREC, TSV and CSV tools can split
    their lines; every id builder below goes through this."""
    # Fast path, most ids: printable without ' ' means no whitespace at all (str.isprintable is false for
    # every other whitespace character, which Unicode files under 'Separator' or 'Other').
    if " " not in text and text.isprintable():
        return text
    return _WHITESPACE.sub("_", text.strip())


def has_whitespace(text: str) -> bool:
    return _WHITESPACE.search(text) is not None


def source_id(source: str, local_id: str | int) -> str:
    """Source-qualified id such as 'aminer:123' or 'openalex:W1' (whitespace in the local id folded to '_')."""
    return f"{source}:{fold_id(str(local_id))}"


def paper_id(doi: str | None, source: str, local_id: str | int | None) -> str:
    """The graph id of a paper: its lower-cased DOI when known, else a source-qualified id."""
    norm = normalize_doi(doi)
    if norm:
        return norm
    if local_id is None or str(local_id).strip() == "":
        raise ValueError("paper has neither a DOI nor a source id")
    return source_id(source, local_id)


def fold_name(text: str) -> str:
    """Lower-case ASCII fold of a name: accents removed, punctuation dropped, spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", text)
    ascii_only = "".join(c for c in decomposed if not unicodedata.combining(c))
    cleaned = re.sub(r"[^\w\s]", " ", ascii_only.lower())
    return re.sub(r"\s+", " ", cleaned).strip()


def author_name_key(name: str) -> str:
    """Fallback author id from a name alone: 'name:<folded name>', words joined by '_' ('name:ann_lee').

    Caveat: two different people with the same name merge into one node, and one person
    written two ways ('J. Smith' / 'John Smith') splits into two. Sources with author ids
    or ORCIDs avoid both.
    """
    folded = fold_name(name)
    if not folded:
        raise ValueError("empty author name")
    return f"name:{fold_id(folded)}"


def normalize_orcid(raw: str | None) -> str | None:
    """Bare ORCID '0000-0002-1825-0097', or None."""
    if not raw or not isinstance(raw, str):
        return None
    m = re.search(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dXx])", raw)
    return m.group(1).upper() if m else None


def venue_key(name: str) -> str:
    """Venue id from its name: 'venue:<folded name>' with years and ordinals removed and words joined by
    '_', so that 'SIGIR '20' and 'SIGIR 2021' share one venue ('venue:sigir', 'venue:acm_recsys')."""
    folded = fold_name(name)
    folded = re.sub(r"\b(19|20)\d{2}\b", " ", folded)
    folded = re.sub(r"\b\d+(st|nd|rd|th)\b", " ", folded)
    folded = re.sub(r"\b\d{2}\b", " ", folded)
    folded = re.sub(r"\s+", " ", folded).strip()
    if not folded:
        raise ValueError("empty venue name")
    return f"venue:{fold_id(folded)}"


# --- records ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Paper:
    id: str
    title: str | None
    abstract: str | None = None
    year: int | None = None
    doi: str | None = None
    venue_id: str | None = None
    sources: tuple[str, ...] = ()
    # A stub is a cited paper known only by its id; ingesting its record later fills it in.
    stub: bool = False
    # Citation count as the source reports it (AMiner n_citation, OpenAlex cited_by_count).
    n_citation: int | None = None
    # A partial paper (an S2 abstracts or citations row) updates only the non-None fields it
    # carries, never changes stub status, and may have no title.
    partial: bool = False


@dataclass(frozen=True)
class Author:
    id: str
    name: str
    orcid: str | None = None
    sources: tuple[str, ...] = ()
    # Institutions with their years, as affiliation_entry strings (a set, unioned across records).
    affiliations: tuple[str, ...] = ()


def affiliation_entry(name: str, first: int | None, last: int | None) -> str:
    """One institution of an author with the years it holds for, as stored in `Author.affiliations`:
    '2019|Carnegie Mellon University' (one year: a paper's), '2015-2020|...' (a profile's history),
    '2015-|...' (still there), '|...' (years unknown). A string, so that Neo4j keeps a list of them."""
    if first is not None and first == last:
        years = str(first)
    elif first is None and last is None:
        years = ""
    else:
        years = f"{'' if first is None else first}-{'' if last is None else last}"
    return f"{years}|{name}"


def parse_affiliation(entry: str) -> tuple[str, int | None, int | None] | None:
    """(institution, first year, last year) of an affiliation_entry string; None when it is not one."""
    years, sep, name = entry.partition("|")
    if not sep or not name.strip():
        return None
    first_text, dash, last_text = years.partition("-")
    if not dash:
        last_text = first_text
    try:
        first = int(first_text) if first_text.strip() else None
        last = int(last_text) if last_text.strip() else None
    except ValueError:
        return None
    return name.strip(), first, last


@dataclass(frozen=True)
class Venue:
    id: str
    name: str


@dataclass(frozen=True)
class Authorship:
    author_id: str
    paper_id: str
    position: int  # 1-based order in the author list


@dataclass(frozen=True)
class Citation:
    citing_id: str
    cited_id: str


@dataclass(frozen=True)
class PaperBundle:
    """Everything one source record contributes to the graph."""

    paper: Paper
    authors: tuple[Author, ...] = ()
    venue: Venue | None = None
    authorships: tuple[Authorship, ...] = ()
    citations: tuple[Citation, ...] = ()
    # Where it came from, for provenance and quarantine messages.
    origin: str = ""
    line: int | None = None


@dataclass(frozen=True)
class RawRecord:
    """One record as a parser read it: a dict, or the error that stopped it from being one."""

    source: str  # the file (or '-' for stdin)
    line: int  # 1-based line, or record ordinal for formats without lines
    data: dict | None = None
    error: str | None = None
    excerpt: str = ""
    extra: dict = field(default_factory=dict)
