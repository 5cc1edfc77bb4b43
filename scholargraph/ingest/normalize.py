"""Raw source records -> graph records (PaperBundle); bad ones raise InvalidRecord, skipped ones Dropped."""

from __future__ import annotations

import datetime
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator

from scholargraph.errors import InvalidRecord, UsageError
from scholargraph.graph.records import (
    Author,
    Authorship,
    Citation,
    Paper,
    PaperBundle,
    RawRecord,
    Venue,
    affiliation_entry,
    author_name_key,
    fold_id,
    normalize_doi,
    normalize_orcid,
    venue_key,
)
from scholargraph.ingest.formats import aminer, bibtex, openalex, openreview, s2

PARSERS: dict[str, Callable[[str], Iterator[RawRecord]]] = {
    "aminer": aminer.iter_raw,
    "openalex": openalex.iter_raw,
    "s2": s2.iter_raw,
    "bibtex": bibtex.iter_raw,
    "openreview": openreview.iter_raw,
}
FORMATS = tuple(PARSERS)
MIN_YEAR = 1000
EXCERPT_CHARS = 300

_SESSION_HEADER = re.compile(r"\s*session details\s*:", re.I)
_SURROGATES = re.compile("[\ud800-\udfff]")
_OPENALEX_PREFIX = "https://openalex.org/"


class Dropped(Exception):
    """A record deliberately left out (not an error): counted by reason, never quarantined."""

    def __init__(self, source: str, line: int | None, reason: str):
        self.source = source
        self.line = line
        self.reason = reason
        super().__init__(f"{source}:{line}: dropped: {reason}")


def iter_raw(fmt: str, path: str) -> Iterator[RawRecord]:
    """The parser of format `fmt` over `path`; UsageError for an unknown format."""
    try:
        parser = PARSERS[fmt]
    except KeyError:
        raise UsageError(f"unknown format {fmt!r} (expected one of: {', '.join(FORMATS)})") from None
    return parser(path)


def normalize(fmt: str, raw: RawRecord, notes: list[tuple[str, str]] | None = None) -> PaperBundle:
    """The graph records of one raw record. Raises InvalidRecord (quarantine) or Dropped (skip). `notes`, when
    given, receives (kind, "file:line") for what was read in an unusual way but kept (NOTICES: a date given in
    seconds): the loader counts them in its summary, with examples.

    Outcomes:
    - a PaperBundle;
    - `InvalidRecord(source, line, reason, raw_excerpt)`: the record goes to quarantine. The reason
      starts with a stable category, then ': ' and details, so that `reason.split(':')[0]` counts
      them. From the parsers (RawRecord.error, passed on as is): "malformed JSON", "malformed
      BibTeX", "unbalanced braces", "invalid UTF-8", "read error" (truncated or corrupt input,
      always the last record of its file). From here: "missing id", "missing title", "invalid
      year", "no authors", "wrong type", "unknown record";
    - `Dropped(source, line, reason)`: a record deliberately left out, counted but not quarantined:
      "session header" (BibTeX "Session details: ..." without abstract), "proceedings volume"
      (@proceedings: a whole volume, not a paper), "unresolved citation" and "self citation" (S2
      citations rows), "empty abstract" (S2 abstracts rows without text).

    Identity:
    - Paper id = the lower-cased DOI when known, else a source-qualified id: "aminer:<id>",
      "openalex:W1", "s2:<paperId>" (Graph API sha), "s2corpus:<corpusid>" (datasets corpus id and
      S2ORC paper_id, which is a corpus id), "bibtex:<citation key>". Paper.sources holds the
      source-qualified ids (also when the id is a DOI; a Graph API record with a CorpusId carries
      both "s2:" and "s2corpus:").
    - Citations point at the id the citing record gives: a DOI when the reference carries one, else
      the reference's source-qualified id. A cited paper that was ingested under its DOI is therefore
      also reachable through its Paper.sources: the loader must resolve cited ids against the
      sources it has seen (an alias), or the stub and the paper stay two nodes. Self-references and
      duplicates are dropped.
    - Author id = "orcid:<ORCID>" when an ORCID is given, else the source's author id qualified
      ("aminer:<id>", "openalex:A1", "s2author:<authorId>"), else records.author_name_key(name)
      ("name:ann_lee").
    - No id contains whitespace: a source id with spaces (a BibTeX key, say) has them folded to '_'
      (records.fold_id), and name and venue keys join their words with '_'.
      Authorship positions are 1-based over the authors kept (nameless and repeated ones skipped).
    - Venue id = records.venue_key(name) for every source, so venues merge across sources. BibTeX
      prefers `series` ("SIGIR '20" -> venue:sigir) over `booktitle`/`journal`.

    Partial papers (Paper.partial): an S2 abstracts row gives Paper(id, title=None, abstract=...),
    a citations row Paper(id of the citing paper, title=None) plus the Citation. The loader updates
    only their non-None fields, creates them as stubs when new, and never changes stub status.

    Years: an int, or a string of digits, within MIN_YEAR..(current year + 1); anything else ("n/a",
    negative, future) quarantines the record rather than silently losing the year. A missing year is
    fine. Text: whitespace collapsed, ends stripped, empty -> None, abstracts rebuilt from inverted
    indexes (OpenAlex abstract_inverted_index, AMiner indexed_abstract).
    """
    try:
        mapper = _MAPPERS[fmt]
    except KeyError:
        raise UsageError(f"unknown format {fmt!r} (expected one of: {', '.join(FORMATS)})") from None
    if raw.error is not None:
        raise InvalidRecord(raw.source, raw.line, raw.error, raw.excerpt)
    if not isinstance(raw.data, dict):
        raise InvalidRecord(raw.source, raw.line, "malformed JSON: no record", raw.excerpt)
    return mapper(_Record(raw, notes))


# What normalize() notes (its `notes`: kind, where): kind -> (the summary's label, what the count is of).
DATE_IN_SECONDS = "date in seconds"
NOTICES: dict[str, tuple[str, str]] = {
    DATE_IN_SECONDS: ("dates", "publication(s) give their date in seconds, not OpenReview's milliseconds, and were "
                               "read as seconds"),
}


class _Record:
    """The raw record being mapped, and the one way to reject it."""

    __slots__ = ("raw", "data", "notes")

    def __init__(self, raw: RawRecord, notes: list[tuple[str, str]] | None = None):
        self.raw = raw
        self.data: dict = raw.data  # type: ignore[assignment]
        self.notes = notes

    def note(self, kind: str) -> None:
        """Say that this record was read in an unusual way (NOTICES), for the summary."""
        if self.notes is not None:
            self.notes.append((kind, f"{self.raw.source}:{self.raw.line}"))

    def invalid(self, reason: str) -> InvalidRecord:
        return InvalidRecord(self.raw.source, self.raw.line, reason, self.excerpt())

    def dropped(self, reason: str) -> Dropped:
        return Dropped(self.raw.source, self.raw.line, reason)

    def excerpt(self) -> str:
        if self.raw.excerpt:
            return self.raw.excerpt
        try:
            text = json.dumps(self.data, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            text = ""
        return text[:EXCERPT_CHARS].encode("utf-8", "replace").decode("utf-8")

    def text(self, field: str, value: object = None) -> str | None:
        value = self.data.get(field) if value is None else value
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.invalid(f"wrong type: {field} is {type(value).__name__}")
        return clean_text(value)

    def year(self, value: object) -> int | None:
        if value is None or value == "":
            return None
        if isinstance(value, bool):
            raise self.invalid(f"invalid year: {value!r}")
        if isinstance(value, int):
            year = value
        elif isinstance(value, float) and value.is_integer():
            year = int(value)
        elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            year = int(value.strip())
        else:
            raise self.invalid(f"invalid year: {str(value)[:40]!r}")
        if not MIN_YEAR <= year <= datetime.date.today().year + 1:
            raise self.invalid(f"invalid year: {year}")
        return year

    def list_of(self, field: str) -> list:
        value = self.data.get(field)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.invalid(f"wrong type: {field} is {type(value).__name__}")
        return value


def clean_text(value: str) -> str | None:
    """Whitespace collapsed and ends stripped; None when empty. Lone surrogates (invalid
    Unicode that JSON escapes can smuggle in) become U+FFFD so that the store can encode them."""
    text = " ".join(value.split())
    if not text:
        return None
    if not text.isascii() and _SURROGATES.search(text):
        text = _SURROGATES.sub("\ufffd", text)
    return text


def inverted_index_to_text(index: object) -> str | None:
    """{word: [positions]} (OpenAlex abstract_inverted_index, AMiner InvertedIndex) -> text."""
    if isinstance(index, str):
        try:
            index = json.loads(index)
        except ValueError:
            return None
    if isinstance(index, dict) and isinstance(index.get("InvertedIndex"), dict):
        index = index["InvertedIndex"]
    if not isinstance(index, dict):
        return None
    slots: dict[int, str] = {}
    for word, positions in index.items():
        if isinstance(word, str) and isinstance(positions, list):
            for position in positions:
                if type(position) is int and position >= 0:
                    slots[position] = word
    if not slots:
        return None
    return clean_text(" ".join(slots[p] for p in sorted(slots)))


def _local_id(value: object) -> str | None:
    """A source's own id as the local part of a graph id: whitespace folded to '_' (a BibTeX key or an id
    with spaces), None when empty."""
    if isinstance(value, str):
        return fold_id(value) or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _paper_local_id(record: _Record, field: str, value: object = None) -> str | None:
    value = record.data.get(field) if value is None else value
    if value is not None and not isinstance(value, (str, int)) or isinstance(value, bool):
        raise record.invalid(f"wrong type: {field} is {type(value).__name__}")
    return _local_id(value)


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return None


@functools.lru_cache(maxsize=1 << 16)
def _venue(name: str) -> Venue | None:
    try:
        return Venue(id=venue_key(name), name=name)
    except ValueError:
        return None


@functools.lru_cache(maxsize=1 << 18)
def _name_key(name: str) -> str | None:
    try:
        return author_name_key(name)
    except ValueError:
        return None


def _cited_id(source: str, value: object) -> str | None:
    """A reference given as a source id (or a DOI) -> the cited paper's id."""
    local = _local_id(value)
    if local is None:
        return None
    if "/" in local:
        doi = normalize_doi(local)
        if doi:
            return doi
    return f"{source}:{local}"


# One author as a source gives it: (source-qualified author id or None, name, raw ORCID or None), and
# optionally a fourth item, the institution names the record gives for that author (S2 affiliations,
# OpenAlex institutions): stored with the paper's year (records.affiliation_entry).
_AuthorEntry = tuple


def _bundle(record: _Record, *, source: str, local_id: str | None, doi: object, title: str | None,
            abstract: str | None, year: int | None, venue_name: str | None,
            authors: Iterable[_AuthorEntry], cited: Iterable[str | None] = (),
            citing: Iterable[str | None] = (), n_citation: int | None = None,
            extra_sources: tuple[str, ...] = (), partial: bool = False, untitled: bool = False) -> PaperBundle:
    doi = normalize_doi(doi) if isinstance(doi, str) else None
    if doi is None and local_id is None:
        raise record.invalid("missing id: neither a source id nor a DOI")
    own_source = f"{source}:{local_id}" if local_id is not None else None
    pid = doi or own_source
    sources = ((own_source,) if own_source else ()) + extra_sources
    if title is None and not partial and not untitled:  # untitled: the format keeps papers without one
        raise record.invalid("missing title")

    kept_authors: list[Author] = []
    authorships: list[Authorship] = []
    seen_authors: set[str] = set()
    for author_source_id, raw_name, raw_orcid, *institutions in authors:
        name = clean_text(raw_name) if isinstance(raw_name, str) else None
        if name is None:
            continue
        orcid = normalize_orcid(raw_orcid) if raw_orcid else None
        author_id = f"orcid:{orcid}" if orcid else author_source_id or _name_key(name)
        if author_id is None or author_id in seen_authors:
            continue
        seen_authors.add(author_id)
        affiliations = tuple(dict.fromkeys(
            affiliation_entry(inst, year, year) for inst in _institution_names(institutions)))
        kept_authors.append(Author(id=author_id, name=name, orcid=orcid,
                                   sources=(author_source_id,) if author_source_id else (),
                                   affiliations=affiliations))
        authorships.append(Authorship(author_id=author_id, paper_id=pid, position=len(authorships) + 1))
    if not kept_authors and not partial:
        raise record.invalid("no authors")

    own_ids = {pid, *sources}
    citations: list[Citation] = []
    seen_cited: set[str] = set()
    for cited_id in cited:
        if cited_id and cited_id not in own_ids and cited_id not in seen_cited:
            seen_cited.add(cited_id)
            citations.append(Citation(citing_id=pid, cited_id=cited_id))
    seen_citing: set[str] = set()
    for citing_id in citing:
        if citing_id and citing_id not in own_ids and citing_id not in seen_citing:
            seen_citing.add(citing_id)
            citations.append(Citation(citing_id=citing_id, cited_id=pid))

    venue = _venue(venue_name) if venue_name else None
    paper = Paper(id=pid, title=title, abstract=abstract, year=year, doi=doi,
                  venue_id=venue.id if venue else None, sources=sources, n_citation=n_citation,
                  partial=partial)
    return PaperBundle(paper=paper, authors=tuple(kept_authors), venue=venue,
                       authorships=tuple(authorships), citations=tuple(citations),
                       origin=record.raw.source, line=record.raw.line)


def _institution_names(institutions: list) -> list[str]:
    """The institution names of an author entry's optional fourth item: strings (S2 affiliations) or objects
    with a display_name (OpenAlex institutions); anything else is skipped."""
    names = []
    for item in institutions[0] if institutions and isinstance(institutions[0], list) else ():
        name = _name_of(item)
        if name:
            names.append(name)
    return names


def _qualified(source: str, value: object) -> str | None:
    local = _local_id(value)
    return f"{source}:{local}" if local is not None else None


def _name_of(value: object) -> str | None:
    """A venue given as a string or as an object with a name."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        for key in ("raw", "display_name", "name"):
            if isinstance(value.get(key), str):
                return clean_text(value[key])
    return None


# --- AMiner ------------------------------------------------------------------------------------


def _aminer(record: _Record) -> PaperBundle:
    data = record.data
    authors: list[_AuthorEntry] = []
    for author in record.list_of("authors"):
        if isinstance(author, str):  # v10: names only
            authors.append((None, author, None))
        elif isinstance(author, dict):
            authors.append((_qualified("aminer", author.get("id")), author.get("name"), author.get("orcid")))
    abstract = record.text("abstract") or inverted_index_to_text(data.get("indexed_abstract"))
    return _bundle(
        record, source="aminer", local_id=_paper_local_id(record, "id"), doi=data.get("doi"),
        title=record.text("title"), abstract=abstract, year=record.year(data.get("year")),
        venue_name=_name_of(data.get("venue")), authors=authors,
        cited=(_cited_id("aminer", ref) for ref in record.list_of("references")),
        n_citation=_count(data.get("n_citation")))


# --- OpenAlex ----------------------------------------------------------------------------------


def _openalex_local(value: object) -> str | None:
    local = _local_id(value)
    if local is not None and local.startswith(_OPENALEX_PREFIX):
        local = local[len(_OPENALEX_PREFIX):] or None
    return local


def _openalex(record: _Record) -> PaperBundle:
    data = record.data
    if data.get("id") is not None and not isinstance(data.get("id"), str):
        raise record.invalid(f"wrong type: id is {type(data.get('id')).__name__}")
    authors: list[_AuthorEntry] = []
    for authorship in record.list_of("authorships"):
        if not isinstance(authorship, dict):
            continue
        author = authorship.get("author") if isinstance(authorship.get("author"), dict) else {}
        local = _openalex_local(author.get("id"))
        authors.append((f"openalex:{local}" if local else None,
                        author.get("display_name") or authorship.get("raw_author_name"), author.get("orcid"),
                        authorship.get("institutions")))
    location = data.get("primary_location") if isinstance(data.get("primary_location"), dict) else {}
    venue_name = _name_of(location.get("source")) or _name_of(data.get("host_venue"))
    title = record.text("title") or record.text("display_name")
    return _bundle(
        record, source="openalex", local_id=_openalex_local(data.get("id")), doi=data.get("doi"),
        title=title, abstract=inverted_index_to_text(data.get("abstract_inverted_index")),
        year=record.year(data.get("publication_year")), venue_name=venue_name, authors=authors,
        cited=(_qualified("openalex", _openalex_local(w)) for w in record.list_of("referenced_works")),
        n_citation=_count(data.get("cited_by_count")))


# --- Semantic Scholar --------------------------------------------------------------------------


def _s2(record: _Record) -> PaperBundle:
    kind = s2.record_kind(record.data)
    if kind is None:
        raise record.invalid("unknown record: not a Semantic Scholar paper, abstract or citation")
    return _S2_MAPPERS[kind](record)


def _s2_ref(item: object) -> str | None:
    """A Graph API reference/citation: {paperId, externalIds?} or a bare paperId."""
    if isinstance(item, dict):
        external = item.get("externalIds")
        if isinstance(external, dict) and isinstance(external.get("DOI"), str):
            doi = normalize_doi(external["DOI"])
            if doi:
                return doi
        return _qualified("s2", item.get("paperId"))
    return _qualified("s2", item)


def _s2_authors(record: _Record) -> list[_AuthorEntry]:
    return [(_qualified("s2author", a.get("authorId")), a.get("name"), None, a.get("affiliations"))
            for a in record.list_of("authors") if isinstance(a, dict)]


def _external_doi(value: object) -> object:
    return value.get("DOI") if isinstance(value, dict) else None


def _s2_graph(record: _Record) -> PaperBundle:
    data = record.data
    external = data.get("externalIds") if isinstance(data.get("externalIds"), dict) else {}
    corpus = _local_id(data.get("corpusId")) or _local_id(external.get("CorpusId"))
    venue_name = (_name_of(data.get("venue")) or _name_of(data.get("publicationVenue"))
                  or _name_of(data.get("journal")))
    return _bundle(
        record, source="s2", local_id=_paper_local_id(record, "paperId"), doi=external.get("DOI"),
        title=record.text("title"), abstract=record.text("abstract"), year=record.year(data.get("year")),
        venue_name=venue_name, authors=_s2_authors(record),
        cited=(_s2_ref(ref) for ref in record.list_of("references")),
        citing=(_s2_ref(ref) for ref in record.list_of("citations")),
        n_citation=_count(data.get("citationCount")),
        extra_sources=(f"s2corpus:{corpus}",) if corpus else ())


def _s2_paper(record: _Record) -> PaperBundle:
    data = record.data
    venue_name = _name_of(data.get("venue")) or _name_of(data.get("journal"))
    return _bundle(
        record, source="s2corpus", local_id=_paper_local_id(record, "corpusid"),
        doi=_external_doi(data.get("externalids")), title=record.text("title"),
        abstract=record.text("abstract"), year=record.year(data.get("year")), venue_name=venue_name,
        authors=_s2_authors(record), n_citation=_count(data.get("citationcount")))


def _s2_abstract(record: _Record) -> PaperBundle:
    abstract = record.text("abstract")
    if abstract is None:
        raise record.dropped("empty abstract")
    return _bundle(record, source="s2corpus", local_id=_paper_local_id(record, "corpusid"), doi=None,
                   title=None, abstract=abstract, year=None, venue_name=None, authors=(), partial=True)


def _s2_citation(record: _Record) -> PaperBundle:
    citing = _paper_local_id(record, "citingcorpusid")
    cited = _paper_local_id(record, "citedcorpusid")
    if citing is None or cited is None:
        raise record.dropped("unresolved citation")
    if citing == cited:
        raise record.dropped("self citation")
    return _bundle(record, source="s2corpus", local_id=citing, doi=None, title=None, abstract=None,
                   year=None, venue_name=None, authors=(), cited=(f"s2corpus:{cited}",), partial=True)


def _s2orc_name(author: dict) -> str | None:
    middle = author.get("middle")
    middle = " ".join(m for m in middle if isinstance(m, str)) if isinstance(middle, list) else middle
    parts = (author.get("first"), middle, author.get("last"), author.get("suffix"))
    return " ".join(p for p in parts if isinstance(p, str) and p.strip()) or None


def _s2orc(record: _Record) -> PaperBundle:
    data = record.data
    authors = [(None, _s2orc_name(a), None) for a in record.list_of("authors") if isinstance(a, dict)]
    venue_name = _name_of(data.get("venue")) or _name_of(data.get("journal"))
    return _bundle(
        record, source="s2corpus", local_id=_paper_local_id(record, "paper_id"), doi=data.get("doi"),
        title=record.text("title"), abstract=record.text("abstract"), year=record.year(data.get("year")),
        venue_name=venue_name, authors=authors,
        cited=(_qualified("s2corpus", c) for c in record.list_of("outbound_citations")),
        citing=(_qualified("s2corpus", c) for c in record.list_of("inbound_citations")))


_S2_MAPPERS = {s2.GRAPH: _s2_graph, s2.PAPER: _s2_paper, s2.ABSTRACT: _s2_abstract,
               s2.CITATION: _s2_citation, s2.S2ORC: _s2orc}


# --- BibTeX ------------------------------------------------------------------------------------


def _bibtex(record: _Record) -> PaperBundle:
    data = record.data
    # The parser already turned LaTeX into Unicode and collapsed whitespace: no clean_text here.
    title = data.get("title") or None
    abstract = data.get("abstract") or None
    if data.get(bibtex.ENTRY_TYPE) == "proceedings":
        raise record.dropped("proceedings volume")
    if title and not abstract and _SESSION_HEADER.match(title):
        raise record.dropped("session header")
    doi = normalize_doi(data.get("doi")) or normalize_doi(data.get("url"))
    venue_name = data.get("series") or data.get("booktitle") or data.get("journal") or None
    return _bundle(
        record, source="bibtex", local_id=_local_id(data.get(bibtex.CITE_KEY)), doi=doi, title=title,
        abstract=abstract, year=record.year(data.get("year")), venue_name=venue_name,
        authors=[(None, name, None) for name in data.get("author") or ()])


# --- OpenReview expertise archives ---------------------------------------------------------------------

# Ids the project itself qualifies: an archive written by `reviewers export-openreview` keeps the graph's ids
# (a round trip gives the same graph); any other id is OpenReview's own and is qualified "openreview:".
PAPER_ID_SOURCES = ("aminer", "openalex", "s2", "s2corpus", "bibtex", "openreview")
AUTHOR_ID_SOURCES = ("orcid", "aminer", "openalex", "s2author", "name", "openreview")


def split_qualified(value: str, known: tuple[str, ...]) -> tuple[str, str]:
    """(source, local id) of an OpenReview id: a project-qualified id ('s2author:123') keeps its source,
    anything else (a profile id '~Ann_Lee1', a note id) is OpenReview's."""
    source, sep, local = value.partition(":")
    if sep and source in known and local:
        return source, local
    return "openreview", value


def openreview_author_id(value: object) -> str | None:
    """The graph id of an OpenReview author id; None for an email address (authors without a profile are
    listed by email: personal data, never an id) and for anything not a string."""
    if not isinstance(value, str) or not value.strip() or "@" in value:
        return None
    source, local = split_qualified(value.strip(), AUTHOR_ID_SOURCES)
    return f"{source}:{fold_id(local)}"


def content_value(content: dict, field: str) -> object:
    """A note's content field, as API 1 gives it (the value) or API 2 ({"value": ...})."""
    value = content.get(field)
    return value.get("value") if isinstance(value, dict) and "value" in value else value


def profile_name(profile_id: str) -> str | None:
    """'~Ann_Lee1' -> 'Ann Lee': the name a tilde id spells (OpenReview's own convention)."""
    if not profile_id.startswith("~"):
        return None
    return re.sub(r"\d+$", "", profile_id[1:]).replace("_", " ").strip() or None


def _note_year(record: _Record, content: dict) -> int | None:
    """content.year when given, else the publication date (pdate), else the creation dates: milliseconds as
    OpenReview gives them, or seconds (openreview.note_date_ms tells them apart; noted as DATE_IN_SECONDS, which
    the ingest summary counts)."""
    year = content_value(content, "year")
    if year is not None:
        return record.year(year)
    found = openreview.note_date_ms(record.data)
    if found is None:
        return None
    field, ms, in_seconds = found
    try:
        year = record.year(datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).year)
    except (OverflowError, OSError, ValueError):
        raise record.invalid(f"invalid year: {field} {record.data.get(field)!r} is not a date") from None
    if in_seconds:
        record.note(DATE_IN_SECONDS)
    return year


def _openreview(record: _Record) -> PaperBundle:
    data = record.data
    content = data.get("content") if isinstance(data.get("content"), dict) else {}
    raw_id = data.get("id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise record.invalid("missing id" if raw_id is None else f"wrong type: id is {type(raw_id).__name__}")
    doi = normalize_doi(raw_id) or content_value(content, "doi")
    source, local = split_qualified(raw_id.strip(), PAPER_ID_SOURCES)
    local_id = None if normalize_doi(raw_id) else _local_id(local)  # a DOI id is the paper's id as it is
    names = content_value(content, "authors")
    ids = content_value(content, "authorids")
    names = names if isinstance(names, list) else []
    ids = ids if isinstance(ids, list) else []
    authors: list[_AuthorEntry] = []
    owner_id = openreview_author_id(data.get(openreview.OWNER))
    for k in range(max(len(names), len(ids))):
        author_id = openreview_author_id(ids[k]) if k < len(ids) else None
        name = names[k] if k < len(names) and isinstance(names[k], str) else None
        if name is None and k < len(ids) and isinstance(ids[k], str):
            name = profile_name(ids[k])
        authors.append((author_id, name, None))
    if owner_id is not None and all(a[0] != owner_id for a in authors):
        # The archive's reviewer is an author of each of its papers, listed or not.
        owner = str(data.get(openreview.OWNER))
        authors.append((owner_id, profile_name(owner) or owner, None))
    venue = content_value(content, "venue")
    title = record.text("title", content_value(content, "title"))
    abstract = record.text("abstract", content_value(content, "abstract"))
    if title is None and abstract is None:
        raise record.invalid("missing title: no title and no abstract")
    # openreview-expertise reads abstracts first (use_abstract, on by default): a publication with an abstract
    # and no title is expertise, and a paper of the graph here.
    return _bundle(
        record, source=source, local_id=local_id, doi=doi, title=title, abstract=abstract,
        year=_note_year(record, content), venue_name=venue if isinstance(venue, str) else None,
        authors=authors, untitled=True)


_MAPPERS: dict[str, Callable[[_Record], PaperBundle]] = {
    "aminer": _aminer, "openalex": _openalex, "s2": _s2, "bibtex": _bibtex, "openreview": _openreview}
