"""Reviewers' own expertise settings (excluded papers, a minimum year, a recency window, weights per source or
venue): kept on the Author node, applied to the reviewer pool's papers before any reviewer is scored."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from scholargraph.conference.submissions import ReviewerPool
from scholargraph.errors import UsageError
from scholargraph.graph.ids import EXPECTED, IdResolver, output_id
from scholargraph.graph.snapshot import NO_VENUE, NO_YEAR, GraphSnapshot
from scholargraph.graph.store import EXPERTISE_PROPERTIES, to_camel
from scholargraph.user_files import MAX_EXAMPLES, Warn, no_warning, read_jsonl

# The Author properties (snake_case here; camelCase in the graph: expertiseExcluded, expertiseSince,
# expertiseRecentYears, expertiseWeights). Ingest never writes them, so a re-ingest keeps them.
PROPERTIES = ("expertise_excluded", "expertise_since", "expertise_recent_years", "expertise_weights")
assert tuple(to_camel(p) for p in PROPERTIES) == EXPERTISE_PROPERTIES, "the store reads what is written"
# What `profile clear --what` names.
PARTS = ("exclude", "since", "recent", "weights")
WEIGHT_KINDS = ("source", "venue")
_SOURCE = re.compile(r"[a-z][a-z0-9_-]{0,31}")  # a source prefix, as ids qualify them (s2, aminer, dblp)


def parse_weight(text: str) -> tuple[str, float]:
    """`source:dblp=0.5` or `venue:ID-or-name=2` -> ("source:dblp", 0.5); a ValueError says what is wrong."""
    key, sep, value = str(text).rpartition("=")
    kind, colon, name = key.partition(":")
    if not sep or not colon or kind not in WEIGHT_KINDS or not name.strip():
        raise ValueError(f"{text!r}: expected source:NAME=WEIGHT or venue:ID=WEIGHT (e.g. source:dblp=0.5)")
    if kind == "source" and not _SOURCE.fullmatch(name.strip()):
        raise ValueError(f"{text!r}: a source is a lower-case prefix of the graph's ids (s2, aminer, dblp, ...)")
    try:
        weight = float(value)
    except ValueError:
        weight = math.nan
    if not math.isfinite(weight) or weight < 0:
        raise ValueError(f"{text!r}: the weight must be a number >= 0 (0 leaves those papers out)")
    return f"{kind}:{name.strip()}", weight


@dataclass(frozen=True)
class ExpertiseSettings:
    """One reviewer's settings. `excluded`: paper node ids never taken as evidence; `since`: only papers of
    that year or later; `recent_years`: only papers of the last N years (up to the reference year: the
    evidence cut when a command gives a year, else the graph's latest year); `weights`: ("source:NAME" or
    "venue:VENUE_ID", weight) pairs multiplying a paper's evidence (1.0 where none applies)."""

    excluded: tuple[str, ...] = ()
    since: int | None = None
    recent_years: int | None = None
    weights: tuple[tuple[str, float], ...] = ()

    @property
    def empty(self) -> bool:
        return not self.excluded and self.since is None and self.recent_years is None and not self.weights

    @property
    def has_source_weights(self) -> bool:
        return any(key.startswith("source:") for key, _ in self.weights)

    def to_properties(self) -> dict[str, list]:
        """One value per PROPERTIES entry, as write_node_properties takes them (None removes a property)."""
        return {"expertise_excluded": [list(self.excluded) or None], "expertise_since": [self.since],
                "expertise_recent_years": [self.recent_years],
                "expertise_weights": [json.dumps(dict(self.weights), sort_keys=True) if self.weights else None]}

    @classmethod
    def from_properties(cls, values: Mapping[str, object]) -> ExpertiseSettings:
        """From the stored properties; a value that is not what `profile set` writes (a hand-edited node) is
        ignored rather than guessed at."""
        excluded = values.get("expertise_excluded")
        since, recent = values.get("expertise_since"), values.get("expertise_recent_years")
        weights: dict = {}
        raw = values.get("expertise_weights")
        if isinstance(raw, str):
            try:
                loaded = json.loads(raw)
            except ValueError:
                loaded = {}
            weights = loaded if isinstance(loaded, dict) else {}
        pairs = []
        for key, w in weights.items():
            try:
                pairs.append(parse_weight(f"{key}={w}"))
            except ValueError:
                continue
        return cls(excluded=tuple(str(p) for p in excluded) if isinstance(excluded, list) else (),
                   since=since if isinstance(since, int) else None,
                   recent_years=recent if isinstance(recent, int) and recent >= 1 else None,
                   weights=tuple(sorted(pairs)))

    def updated(self, *, exclude: Iterable[str] = (), include: Iterable[str] = (), since: int | None = None,
                recent_years: int | None = None, weights: Iterable[tuple[str, float]] = ()) -> ExpertiseSettings:
        """`profile set`: exclusions accumulate (minus `include`), a given year or window replaces the old
        one, a weight replaces the one of the same key."""
        dropped = set(include)
        excluded = tuple(p for p in dict.fromkeys([*self.excluded, *exclude]) if p not in dropped)
        merged = dict(self.weights)
        merged.update(dict(weights))
        return ExpertiseSettings(excluded=excluded, since=self.since if since is None else since,
                                 recent_years=self.recent_years if recent_years is None else recent_years,
                                 weights=tuple(sorted(merged.items())))

    def cleared(self, parts: Iterable[str] = PARTS) -> ExpertiseSettings:
        what = set(parts)
        return ExpertiseSettings(excluded=() if "exclude" in what else self.excluded,
                                 since=None if "since" in what else self.since,
                                 recent_years=None if "recent" in what else self.recent_years,
                                 weights=() if "weights" in what else self.weights)

    def to_dict(self) -> dict:
        """What is set, for JSON outputs (the keys of unset settings left out)."""
        out: dict = {}
        if self.excluded:
            out["excluded"] = [output_id(p) for p in self.excluded]
        if self.since is not None:
            out["since"] = self.since
        if self.recent_years is not None:
            out["recent_years"] = self.recent_years
        if self.weights:
            out["weights"] = dict(self.weights)
        if out:
            out["summary"] = self.describe()
        return out

    def describe(self) -> str:
        """A short line: `2 papers excluded; since 2015; last 5 years; source:dblp x0.5`."""
        parts = []
        if self.excluded:
            parts.append(f"{len(self.excluded)} paper{'s' if len(self.excluded) != 1 else ''} excluded")
        if self.since is not None:
            parts.append(f"since {self.since}")
        if self.recent_years is not None:
            parts.append(f"last {self.recent_years} years")
        parts += [f"{key} x{w:g}" for key, w in self.weights]
        return "; ".join(parts) or "none"


# --- applied to papers ---------------------------------------------------------------------------------


def source_names(paper_id: str, sources: Iterable[str]) -> set[str]:
    """The sources a paper came from: the prefixes of its source-qualified ids (s2:..., aminer:...)."""
    names = set()
    for sid in [paper_id, *sources]:
        head, sep, _ = str(sid).partition(":")
        if sep and _SOURCE.fullmatch(head):
            names.add(head)
    return names


@dataclass
class ProfileBook:
    """The settings of the reviewers that have some, ready to apply to a snapshot's papers: `excluded` holds
    each reviewer's excluded papers as snapshot indices (resolved through the graph's ids, so a paper id
    migrated or merged since still names its paper); `sources[i]` the source names of paper i (filled only
    when some reviewer weights a source); `reference_year` ends the recency windows."""

    snapshot: GraphSnapshot
    settings: dict[str, ExpertiseSettings]
    excluded: dict[str, set[int]]
    reference_year: int
    sources: dict[int, set[str]] | None = None

    def paper_weights(self, author_id: str, papers: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Each paper's weight for this reviewer (0: not evidence) and, for those left out, why."""
        papers = np.asarray(papers, dtype=np.int64)
        weights = np.ones(len(papers), dtype=np.float32)
        why = [""] * len(papers)
        s = self.settings.get(author_id)
        if s is None:
            return weights, why
        snap = self.snapshot
        years = snap.paper_year[papers]
        excluded = self.excluded.get(author_id, set())
        first = s.since
        if s.recent_years is not None:
            window = self.reference_year - s.recent_years + 1
            first = window if first is None else max(first, window)
        # Folded as the id migration folds a venue id with whitespace, so a weight set before it still applies.
        venue_weights = {output_id(key[len("venue:"):]): w for key, w in s.weights if key.startswith("venue:")}
        source_weights = {key[len("source:"):]: w for key, w in s.weights if key.startswith("source:")}
        for j, p in enumerate(papers.tolist()):
            if p in excluded:
                weights[j], why[j] = 0.0, "excluded"
                continue
            if first is not None and (years[j] == NO_YEAR or years[j] < first):
                weights[j] = 0.0
                why[j] = "no year" if years[j] == NO_YEAR else f"before {first}"
                continue
            w = 1.0
            if source_weights and self.sources is not None:
                # A paper several sources hold counts with its largest weight among those set.
                hits = [source_weights[n] for n in self.sources.get(p, ()) if n in source_weights]
                if hits:
                    w *= max(hits)
            v = snap.paper_venue[p]
            if venue_weights and v != NO_VENUE and snap.venue_ids[v] in venue_weights:
                w *= venue_weights[snap.venue_ids[v]]
            weights[j] = w
            if w == 0.0:
                why[j] = "weight 0"
        return weights, why

    def apply(self, pool: ReviewerPool) -> tuple[ReviewerPool, list[str]]:
        """The pool with each reviewer's settings applied to their papers (left-out papers dropped, weights as
        the matrix values, which the evidence multiplies a paper's calibrated evidence by), and the reviewers
        whose settings leave no paper."""
        csr = pool.papers.tocsr()
        data = csr.data.astype(np.float32, copy=True)
        emptied = []
        for author_id in self.settings:  # few reviewers have settings: only their rows are touched
            r = pool.row(author_id)
            if r < 0:
                continue
            lo, hi = csr.indptr[r], csr.indptr[r + 1]
            data[lo:hi] *= self.paper_weights(author_id, csr.indices[lo:hi])[0]
            if hi > lo and not (data[lo:hi] > 0).any():
                emptied.append(author_id)
        papers = sp.csr_matrix((data, csr.indices.copy(), csr.indptr.copy()), shape=csr.shape)
        papers.eliminate_zeros()  # left-out papers are no evidence at all, not evidence weighing 0
        return replace(pool, papers=papers), emptied


def emptied_warning(emptied: Iterable[str]) -> str:
    """One line on the reviewers whose own settings leave no paper as evidence (they are not scored)."""
    emptied = sorted(emptied)
    if not emptied:
        return ""
    shown = ", ".join(output_id(a) for a in emptied[:MAX_EXAMPLES])
    more = f" and {len(emptied) - MAX_EXAMPLES} more" if len(emptied) > MAX_EXAMPLES else ""
    return (f"{len(emptied):,} reviewer(s) have expertise settings that leave no eligible paper: they get no "
            f"score (e.g. {shown}{more}; see `scholargraph reviewers profile show`)")


# --- the store -------------------------------------------------------------------------------------------


def read_settings(store) -> dict[str, ExpertiseSettings]:
    """Every reviewer with settings, by author node id (one read that returns only those authors)."""
    out = {}
    for rec in store.stream("store/expertise_settings"):
        s = ExpertiseSettings.from_properties({p: rec[to_camel(p)] for p in PROPERTIES})
        if not s.empty:
            out[rec["id"]] = s
    return out


def write_settings(store, settings: Mapping[str, ExpertiseSettings]) -> int:
    """Store each reviewer's settings on their Author node (empty settings remove the properties)."""
    ids = list(settings)
    if not ids:
        return 0
    props: dict[str, list] = {p: [] for p in PROPERTIES}
    for author_id in ids:
        for p, v in settings[author_id].to_properties().items():
            props[p] += v
    return store.write_node_properties("Author", ids, props)


def read_paper_sources(store, snapshot: GraphSnapshot) -> dict[int, set[str]]:
    """The source names of every snapshot paper (the snapshot does not carry `Paper.sources`)."""
    index = snapshot.paper_index
    ids, values = store.read_nodes("Paper", ("sources",))
    return {index[pid]: source_names(pid, src or ()) for pid, src in zip(ids, values["sources"]) if pid in index}


def load_book(store, snapshot: GraphSnapshot, reference_year: int | None = None,
              resolver: IdResolver | None = None) -> ProfileBook | None:
    """The settings in the graph, resolved against `snapshot`; None when no reviewer has any (then nothing
    changes, to the last bit). `reference_year` ends the recency windows (default: the graph's latest year)."""
    settings = read_settings(store) if store is not None else {}
    if not settings:
        return None
    resolver = resolver or IdResolver.for_snapshot(snapshot, lookup=store.lookup_ids)
    wanted = sorted({p for s in settings.values() for p in s.excluded})
    ids = resolver.resolve("paper", wanted, bare=False).ids if wanted else {}
    index = snapshot.paper_index
    excluded = {a: {index[ids[p]] for p in s.excluded if p in ids and ids[p] in index} for a, s in settings.items()}
    sources = read_paper_sources(store, snapshot) if any(s.has_source_weights for s in settings.values()) else None
    year = reference_year if reference_year is not None else snapshot.max_year
    return ProfileBook(snapshot, settings, excluded, year, sources)


def with_profiles(book: ProfileBook | None, pool: ReviewerPool, emptied: set[str] | None = None) -> ReviewerPool:
    """The pool with the reviewers' settings applied (as is, the same object, without any); the reviewers
    left with no paper are added to `emptied` (for one emptied_warning over every pool of a command)."""
    if book is None or not any(a in book.settings for a in pool.author_ids):
        return pool
    applied, left_empty = book.apply(pool)
    if emptied is not None:
        emptied.update(left_empty)
    return applied


def settings_notes(book: ProfileBook | None, pool: ReviewerPool, emptied: Iterable[str] = ()) -> list[str]:
    """A summary's lines: how many pool reviewers' own settings were applied, and those left with no paper."""
    if book is None:
        return []
    applied = [a for a in pool.author_ids if a in book.settings]
    if not applied:
        return []
    shown = ", ".join(f"{output_id(a)} ({book.settings[a].describe()})" for a in applied[:3])
    lines = [f"expertise settings of {len(applied):,} reviewer(s) applied (e.g. {shown})"]
    return lines + list(filter(None, [emptied_warning(emptied)]))


def settings_shown(book: ProfileBook | None, suggestions: Iterable) -> None:
    """Each suggestion of a reviewer with settings carries them (Suggestion.expertise_settings)."""
    if book is None:
        return
    for s in suggestions:
        if s.reviewer_id in book.settings:
            s.expertise_settings = book.settings[s.reviewer_id].to_dict()


# --- the profile commands ----------------------------------------------------------------------------------


def resolve_reviewer(store, given: str, what: str = "REVIEWER") -> str:
    """The author node id of a reviewer id as the user's data has it (qualified or bare); exit 2 if unknown."""
    return IdResolver(lookup=store.lookup_ids).resolve("author", [given]).require(what).ids[given.strip()]


def resolve_papers(store, given: Sequence[str], what: str = "--exclude") -> list[str]:
    """Paper node ids of the given ids; any unknown one is a UsageError (exit 2) naming it."""
    if not given:
        return []
    res = IdResolver(lookup=store.lookup_ids).resolve("paper", given).require(what)
    if res.unknown:
        shown = ", ".join(res.unknown[:MAX_EXAMPLES])
        raise UsageError(f"{what}: {len(res.unknown)} of {len(res.given)} paper ids are not in the graph "
                         f"({shown}); expected {EXPECTED['paper']}")
    return res.node_ids()


def read_venues(store) -> list[tuple[str, str | None]]:
    """(venue id, name) of every venue: what a venue weight may name."""
    return [(rec["id"], rec["name"]) for rec in store.stream("store/snapshot_venues")]


def resolve_venue_weights(store, weights: Sequence[tuple[str, float]], what: str = "--weight",
                          venues: list[tuple[str, str | None]] | None = None) -> list[tuple[str, float]]:
    """Venue weights keyed by the venue's node id (given as its id, bare or qualified, or its name, any
    case); an unknown venue is a UsageError. Source weights pass as they are."""
    if not any(key.startswith("venue:") for key, _ in weights):
        return list(weights)
    venues = read_venues(store) if venues is None else venues
    ids = {v for v, _ in venues}
    by_name: dict[str, set[str]] = {}
    for v, name in venues:
        if name:
            by_name.setdefault(name.strip().lower(), set()).add(v)
    out = []
    for key, w in weights:
        if not key.startswith("venue:"):
            out.append((key, w))
            continue
        name = key[len("venue:"):]
        hit = name if name in ids else f"venue:{name}" if f"venue:{name}" in ids else None
        named = by_name.get(name.strip().lower(), set())
        if hit is None and len(named) == 1:
            hit = next(iter(named))
        if hit is None:
            example = f" (e.g. venue:{venues[0][0]}=2)" if venues else ""
            why = f"names {len(named)} venues" if named else "is no venue id or name in the graph"
            raise UsageError(f"{what} {key}={w:g}: {name!r} {why}{example}")
        out.append((f"venue:{hit}", w))
    return out


def set_profile(store, reviewer: str, *, exclude: Sequence[str] = (), include: Sequence[str] = (),
                since: int | None = None, recent_years: int | None = None,
                weights: Sequence[tuple[str, float]] = ()) -> tuple[str, ExpertiseSettings]:
    """`profile set`: the reviewer's settings updated (ExpertiseSettings.updated) and stored; every id is
    checked first, so that a bad one changes nothing."""
    author_id = resolve_reviewer(store, reviewer)
    old = read_settings(store).get(author_id, ExpertiseSettings())
    excluded = resolve_papers(store, exclude, "--exclude")
    # An id to take back is matched as stored (a paper gone from the graph since) or as it resolves now.
    stored = set(old.excluded)
    taken_back = [p for p in include if p in stored]
    taken_back += resolve_papers(store, [p for p in include if p not in stored], "--include")
    weights = resolve_venue_weights(store, weights)
    new = old.updated(exclude=excluded, include=taken_back, since=since, recent_years=recent_years, weights=weights)
    write_settings(store, {author_id: new})
    return author_id, new


def clear_profile(store, reviewer: str, parts: Iterable[str] = PARTS) -> tuple[str, ExpertiseSettings]:
    """`profile clear`: the named parts of the reviewer's settings removed (all by default)."""
    author_id = resolve_reviewer(store, reviewer)
    new = read_settings(store).get(author_id, ExpertiseSettings()).cleared(parts)
    write_settings(store, {author_id: new})
    return author_id, new


def read_settings_file(path: str, what: str = "FILE", warn: Warn = no_warning) -> list[tuple[str, ExpertiseSettings]]:
    """A JSONL of settings, one reviewer per line: {"reviewer": ID, "exclude": [paper ids], "since": YEAR,
    "recent_years": N, "weights": {"source:dblp": 0.5, "venue:ID": 2}} (every field but `reviewer` optional).
    Ids are as the user's data has them; a bad line is a UsageError naming the file and line, a reviewer given
    twice the same way is kept once (`warn` says so), given two ways a UsageError."""
    def weights_ok(v: object) -> bool:
        if not isinstance(v, dict):
            return False
        try:
            for key, w in v.items():
                if isinstance(w, bool) or not isinstance(w, (int, float)):
                    return False
                parse_weight(f"{key}={w}")
        except ValueError:
            return False
        return True

    def year(v: object) -> bool:
        return v is None or (isinstance(v, int) and not isinstance(v, bool))

    fields = {
        "reviewer": (lambda v: (isinstance(v, str) and bool(v.strip())) or (isinstance(v, int) and not isinstance(
            v, bool)), "a reviewer id"),
        "exclude": (lambda v: v is None or (isinstance(v, list) and all(isinstance(x, (str, int)) for x in v)),
                    "a list of paper ids"),
        "since": (year, "an integer year"),
        "recent_years": (lambda v: v is None or (year(v) and v >= 1), "a positive integer"),
        "weights": (lambda v: v is None or weights_ok(v),
                    'an object {"source:NAME": weight, "venue:ID": weight} with weights >= 0'),
    }
    out = []
    for record in read_jsonl(path, what, fields, required=("reviewer",), warn=warn):
        out.append((str(record["reviewer"]), ExpertiseSettings(
            excluded=tuple(str(p) for p in record.get("exclude") or ()), since=record.get("since"),
            recent_years=record.get("recent_years"),
            weights=tuple(sorted(parse_weight(f"{k}={w}") for k, w in (record.get("weights") or {}).items())))))
    return out


@dataclass
class ImportReport:
    """What `profile import` did: reviewers written, and what it left out (count and examples)."""

    written: int
    unknown_reviewers: list[str]
    unknown_papers: list[str]
    unknown_venues: list[str]

    def warnings(self) -> list[str]:
        lines = []
        for items, what in ((self.unknown_reviewers, "reviewer ids are not in the graph; their lines were skipped"),
                            (self.unknown_papers, "excluded paper ids are not in the graph and were left out"),
                            (self.unknown_venues, "venue weights name no venue of the graph and were left out")):
            if items:
                shown = ", ".join(output_id(x) for x in items[:MAX_EXAMPLES])
                lines.append(f"{len(items):,} {what} (e.g. {shown})")
        return lines


def import_settings(store, records: Sequence[tuple[str, ExpertiseSettings]]) -> ImportReport:
    """Each listed reviewer's settings replaced by the file's (read_settings_file keeps each reviewer once)."""
    resolver = IdResolver(lookup=store.lookup_ids)
    authors = resolver.resolve("author", [r for r, _ in records]).require("profile import")
    papers = resolver.resolve("paper", [p for _, s in records for p in s.excluded])
    unknown_venues: list[str] = []
    venues = read_venues(store) if any(k.startswith("venue:") for _, s in records for k, _ in s.weights) else []
    out: dict[str, ExpertiseSettings] = {}
    for given, s in records:
        node = authors.ids.get(given.strip())
        if node is None:
            continue
        kept = []
        for key, w in s.weights:
            try:
                kept += resolve_venue_weights(store, [(key, w)], venues=venues)
            except UsageError:
                unknown_venues.append(key)
        out[node] = ExpertiseSettings(excluded=tuple(dict.fromkeys(papers.ids[p.strip()] for p in s.excluded
                                                                   if p.strip() in papers.ids)),
                                      since=s.since, recent_years=s.recent_years, weights=tuple(sorted(kept)))
    write_settings(store, out)
    return ImportReport(len(out), authors.unknown, papers.unknown, unknown_venues)


@dataclass
class ProfileView:
    """`profile show`: the settings and, per paper of the reviewer, its weight or why it is left out."""

    reviewer_id: str
    name: str | None
    settings: ExpertiseSettings
    reference_year: int
    papers: list[dict]

    @property
    def n_eligible(self) -> int:
        return sum(1 for p in self.papers if p["weight"] > 0)


def show_profile(store, snapshot: GraphSnapshot, reviewer_id: str, reference_year: int | None = None) -> ProfileView:
    """The reviewer's settings and what they leave as evidence (every non-stub paper of theirs)."""
    s = read_settings(store).get(reviewer_id, ExpertiseSettings())
    book = load_book(store, snapshot, reference_year) or ProfileBook(
        snapshot, {}, {}, reference_year if reference_year is not None else snapshot.max_year)
    row = snapshot.author_index.get(reviewer_id)
    papers: list[dict] = []
    if row is not None:
        auth = snapshot.authorship.tocsr()
        mine = auth.indices[auth.indptr[row]:auth.indptr[row + 1]]
        mine = np.sort(mine[~snapshot.paper_stub[mine]])
        weights, why = book.paper_weights(reviewer_id, mine)
        titles = snapshot.titles
        for p, w, reason in zip(mine.tolist(), weights.tolist(), why):
            year = int(snapshot.paper_year[p])
            papers.append({"paper_id": snapshot.paper_ids[p], "year": year if year != NO_YEAR else None,
                           "title": titles[p] if titles is not None else None, "weight": float(w),
                           "left_out": reason or None})
    names = snapshot.author_names
    return ProfileView(reviewer_id, names[row] if names is not None and row is not None else None, s,
                       book.reference_year, papers)
