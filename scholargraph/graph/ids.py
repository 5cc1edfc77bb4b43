"""Ids as users give them and as outputs print them: one resolver, and whitespace-free ids for every output."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scholargraph.errors import UsageError
from scholargraph.graph.records import author_name_key, fold_id, has_whitespace, normalize_doi
from scholargraph.user_files import MAX_EXAMPLES, examples

KINDS = ("paper", "author", "topic", "venue")

# The sources ingestion qualifies ids with, per kind: what a bare id may stand for when the store is asked
# (a snapshot knows its own ids and reads the prefixes off them).
PREFIXES = {
    "paper": ("aminer", "openalex", "s2", "s2corpus", "bibtex", "openreview"),
    "author": ("s2author", "aminer", "openalex", "orcid", "name", "openreview"),
    "topic": ("topic",),
    "venue": ("venue",),
}

EXPECTED = {
    "paper": "a paper id as the graph has it: a lower-cased DOI (10.1145/3336191.3371770) or a "
             "source-qualified id (aminer:<id>, s2:<paperId>, s2corpus:<corpusId>, openalex:W1, bibtex:<key>), "
             "or the source's bare id when exactly one paper has it",
    "author": "an author id as the graph has it: source-qualified (s2author:1737249, aminer:<id>, openalex:A1, "
              "orcid:0000-0002-1825-0097, name:ann_lee), or the source's bare id (1737249) when exactly one "
              "author has it",
    "topic": "a topic id such as topic:3 (or the topic's number, 3)",
    "venue": "a venue id such as venue:sigir",
}

# A source prefix is a short lower-case word; a DOI's '10.1023/a' before its first ':' is not one.
_PREFIX = re.compile(r"[a-z][a-z0-9_-]{0,31}")

# lookup(kind, {given: [forms]}) -> {given: [node ids]}: the nodes of `kind` that one of the forms names
# (the node id itself, a paper alias, an author's source id). The store answers it with one query.
Lookup = Callable[[str, Mapping[str, Sequence[str]]], Mapping[str, Sequence[str]]]


def output_id(value: object) -> str:
    """An id as TREC, TSV and CSV lines print it: whitespace-free, folded the way the id policy folds
    ('name:ann lee', an id of a graph not migrated yet, prints as 'name:ann_lee', the id it migrates to)."""
    text = str(value)
    return fold_id(text) if has_whitespace(text) else text


OPENREVIEW_PREFIX = "openreview:"


def openreview_id(value: object) -> str:
    """An id as a file handed to OpenReview names it: OpenReview's own ids bare ('openreview:~Ann_Lee1' ->
    '~Ann_Lee1', the profile id its API and openreview-expertise know); any other id as output_id prints it."""
    return output_id(value).removeprefix(OPENREVIEW_PREFIX)


def is_openreview_id(node_id: str) -> bool:
    """Whether a node id is one of OpenReview's own (a profile or a note), as ingestion qualifies them."""
    return node_id.startswith(OPENREVIEW_PREFIX)


def direct_forms(given: str, kind: str) -> list[str]:
    """The spellings that name a node directly: as given, whitespace folded (the old id of a name key or of
    a source id with spaces), a DOI in any spelling, a name id re-keyed, a topic by its number."""
    g = given.strip()
    forms = [g, fold_id(g)]
    if kind == "paper":
        doi = normalize_doi(g)
        if doi:
            forms.append(doi)
    elif kind == "author" and g.lower().startswith("name:"):
        try:
            forms.append(author_name_key(g[len("name:"):]))
        except ValueError:
            pass
    elif kind == "topic" and g.isdigit():
        forms.append(f"topic:{g}")
    return list(dict.fromkeys(f for f in forms if f))


def qualified_forms(given: str, kind: str, prefixes: Iterable[str] | None = None) -> list[str]:
    """A bare id qualified with each source prefix ('1737249' -> 's2author:1737249', 'aminer:1737249', ...)."""
    bare = fold_id(given)
    return [f"{p}:{bare}" for p in (PREFIXES[kind] if prefixes is None else prefixes)] if bare else []


@dataclass
class Resolution:
    """What the given ids of one option name: `ids[given]` is the node id; the rest are unknown
    (`ambiguous[given]` lists the nodes a bare id could be)."""

    kind: str
    given: list[str]
    ids: dict[str, str] = field(default_factory=dict)
    ambiguous: dict[str, list[str]] = field(default_factory=dict)
    example: str | None = None  # an id of this kind that the graph has, for messages

    @property
    def unknown(self) -> list[str]:
        return [g for g in self.given if g not in self.ids]

    def node_ids(self) -> list[str]:
        """The known ids' node ids, in the order given, each once."""
        return list(dict.fromkeys(self.ids[g] for g in self.given if g in self.ids))

    def given_forms(self) -> dict[str, str]:
        """node id -> the form it was given in, where the two differ (outputs answer in the caller's ids)."""
        return {node: g for g, node in self.ids.items() if node != g}

    def _examples(self) -> str:
        def shown(g: str) -> str:
            nodes = self.ambiguous.get(g)
            return f"{g} (ambiguous: {', '.join(nodes[:3])}{', ...' if len(nodes) > 3 else ''})" if nodes else g

        unknown = self.unknown
        return examples([shown(g) for g in unknown[:MAX_EXAMPLES]] + unknown[MAX_EXAMPLES:], lead="")

    def warning(self, what: str) -> str | None:
        """One line for stderr when some ids are unknown (None when all are known)."""
        unknown = self.unknown
        if not unknown:
            return None
        noun = f"{self.kind} id{'s' if len(self.given) != 1 else ''}"
        return (f"warning: {what}: {len(unknown)} of {len(self.given)} {noun} "
                f"{'are' if len(unknown) != 1 else 'is'} not in the graph and left out: {self._examples()}")

    def require(self, what: str) -> Resolution:
        """Raise UsageError (exit 2) when ids were given and none of them is known, with the form expected."""
        if self.given and not self.ids:
            example = f"; this graph has e.g. {self.example}" if self.example else ""
            if len(self.given) == 1:
                g = self.given[0]
                if g in self.ambiguous:
                    head = (f"{what}: {g} names more than one {self.kind} ({', '.join(self.ambiguous[g][:5])}); "
                            f"give the qualified id")
                else:
                    head = f"{what}: no {self.kind} in the graph has the id {g}"
            else:
                head = (f"{what}: none of the {len(self.given)} {self.kind} ids given is in the graph "
                        f"(e.g. {self._examples()})")
            raise UsageError(f"{head}; expected {EXPECTED[self.kind]}{example}")
        return self


class IdResolver:
    """Maps the ids a user gives to the node ids of the graph: the qualified id (`s2author:1737249`), the
    source's bare id (`1737249`) when exactly one node has it, a DOI in any spelling, a paper's other source
    ids (aliases), and an id in its old whitespace form (`name:ann lee` -> `name:ann_lee`).

    Pure over the node ids it is given (a GraphSnapshot's); ids it does not find go to `lookup` (the
    store's aliases) when one is given. With no node ids at all, the lookup answers everything."""

    def __init__(self, node_ids: Mapping[str, Collection[str]] | None = None,
                 aliases: Mapping[str, Mapping[str, str]] | None = None, lookup: Lookup | None = None):
        # kind -> the node ids of that kind: a sequence, or a dict/set (a snapshot's index) used as is.
        self._ids = dict(node_ids or {})
        self._aliases = {kind: dict(a) for kind, a in (aliases or {}).items()}
        self._lookup = lookup
        self._sets: dict[str, Collection[str]] = {}
        self._prefixes: dict[str, tuple[str, ...]] = {}

    @classmethod
    def for_snapshot(cls, snapshot, lookup: Lookup | None = None) -> IdResolver:
        """Over a snapshot's papers and authors (venues too); `snapshot.extra['aliases']`, when present,
        maps a paper's other source ids to its id."""
        aliases = snapshot.extra.get("aliases") if isinstance(getattr(snapshot, "extra", None), dict) else None
        return cls({"paper": snapshot.paper_index, "author": snapshot.author_index, "venue": snapshot.venue_index},
                   aliases={"paper": aliases} if aliases else None, lookup=lookup)

    def _known(self, kind: str) -> Collection[str] | None:
        if kind not in self._ids:
            return None
        if kind not in self._sets:
            ids = self._ids[kind]
            self._sets[kind] = ids if isinstance(ids, (dict, set, frozenset)) else set(ids)
        return self._sets[kind]

    def _source_prefixes(self, kind: str) -> tuple[str, ...]:
        """The prefixes the graph's own ids carry (one pass, kept): what a bare id is tried with."""
        if kind not in self._prefixes:
            seen: dict[str, None] = {}
            for node in self._ids.get(kind, ()):
                head, sep, _ = node.partition(":")
                if sep and head not in seen and _PREFIX.fullmatch(head):
                    seen[head] = None
            for alias in self._aliases.get(kind, {}):
                head, sep, _ = alias.partition(":")
                if sep and head not in seen and _PREFIX.fullmatch(head):
                    seen[head] = None
            self._prefixes[kind] = tuple(seen)
        return self._prefixes[kind]

    def example(self, kind: str) -> str | None:
        ids = self._ids.get(kind)
        if not ids:
            return None
        clean = (i for i in ids if not has_whitespace(i))
        return next(clean, None)

    def resolve(self, kind: str, given: Iterable[str], bare: bool = True) -> Resolution:
        """Each given id (blank ones skipped, repeats once) to its node id, when it names exactly one.
        `bare=False` takes only the forms that name a node directly (no source prefix added): for ids that
        are labels as often as node ids, such as a draft's id in a queries file."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
        wanted = list(dict.fromkeys(g.strip() for g in given if g and g.strip()))
        res = Resolution(kind, wanted, example=self.example(kind))
        known = self._known(kind)
        aliases = self._aliases.get(kind, {})
        left: list[str] = []
        for g in wanted:
            forms = direct_forms(g, kind)
            hit = None
            if known is not None:
                hit = next((f for f in forms if f in known), None)
                if hit is None:
                    hit = next((aliases[f] for f in forms if f in aliases and aliases[f] in known), None)
            if hit is not None:
                res.ids[g] = hit
                continue
            if known is not None and bare:
                qualified = qualified_forms(g, kind, self._source_prefixes(kind))
                nodes = {f for f in qualified if f in known}
                nodes |= {aliases[f] for f in qualified if f in aliases and aliases[f] in known}
                if len(nodes) == 1:
                    res.ids[g] = nodes.pop()
                    continue
                if len(nodes) > 1:
                    res.ambiguous[g] = sorted(nodes)
                    continue
            left.append(g)
        if left and self._lookup is not None:
            self._ask_store(res, kind, left, known, bare)
        return res

    def _ask_store(self, res: Resolution, kind: str, left: list[str], known: Collection[str] | None,
                   bare: bool) -> None:
        """Ids the node ids do not name: the store's aliases and source ids, then the bare id qualified."""
        def usable(nodes: Sequence[str]) -> list[str]:
            return sorted({n for n in nodes if known is None or n in known})

        lookup = self._lookup
        assert lookup is not None, "resolve asks the store only when it has a lookup"

        def settle(given: list[str], forms) -> list[str]:
            """Ask the store for these forms of each id; return the ids that named no node."""
            found = lookup(kind, {g: forms(g, kind) for g in given})
            unnamed = []
            for g in given:
                nodes = usable(found.get(g, ()))
                if len(nodes) == 1:
                    res.ids[g] = nodes[0]
                elif nodes:
                    res.ambiguous[g] = nodes
                else:
                    unnamed.append(g)
            return unnamed

        rest = settle(left, direct_forms)
        if rest and bare:
            settle(rest, qualified_forms)
