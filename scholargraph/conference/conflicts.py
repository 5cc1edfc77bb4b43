"""Conflicts of interest: a submission's own authors, their recent co-authors, colleagues at one institution
and people of one email domain cannot review it; each conflict says why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from scholargraph.conference.submissions import Query, ReviewerPool
from scholargraph.graph.ids import output_id
from scholargraph.graph.records import fold_name, parse_affiliation
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot

AUTHOR = "author"
COAUTHOR = "coauthor"
INSTITUTION = "institution"
EMAIL_DOMAIN = "email domain"
KINDS = (AUTHOR, COAUTHOR, INSTITUTION, EMAIL_DOMAIN)

# Mail providers anyone can sign up with: sharing one says nothing about two people (docs/reviewers.md).
PUBLIC_MAIL_DOMAINS = frozenset({
    "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com", "yahoo.com",
    "yahoo.co.uk", "yahoo.co.jp", "ymail.com", "aol.com", "icloud.com", "me.com", "mac.com", "protonmail.com",
    "proton.me", "pm.me", "gmx.com", "gmx.de", "gmx.net", "web.de", "mail.com", "mail.ru", "yandex.ru",
    "yandex.com", "zoho.com", "fastmail.com", "hey.com", "tutanota.com", "qq.com", "foxmail.com", "163.com",
    "126.com", "yeah.net", "sina.com", "sohu.com", "aliyun.com", "naver.com", "daum.net", "hanmail.net",
    "rediffmail.com", "orange.fr", "free.fr", "laposte.net", "t-online.de", "libero.it", "seznam.cz",
    "users.noreply.github.com"})
# Second-level labels under a country code that are not an organisation's own name (ox.ac.uk, u-tokyo.ac.jp).
_GENERIC_SECOND_LEVEL = frozenset({"ac", "co", "com", "edu", "gov", "net", "org", "or", "ne", "go"})


def mail_domain(email: str) -> str | None:
    """The organisation's domain of an address: 'ann@cs.cmu.edu' -> 'cmu.edu', 'bo@ox.ac.uk' -> 'ox.ac.uk'
    (subdomains of one organisation meet); None for a public mail provider or a malformed address."""
    _, at, host = email.strip().lower().rpartition("@")
    labels = [part for part in host.split(".") if part]
    if not at or len(labels) < 2:
        return None
    keep = 3 if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in _GENERIC_SECOND_LEVEL else 2
    domain = ".".join(labels[-keep:])
    if domain in PUBLIC_MAIL_DOMAINS or host in PUBLIC_MAIL_DOMAINS:
        return None
    return domain


def conflict_kind(why: str) -> str:
    """The kind (KINDS) of an `explain` reason: 'institution Carnegie Mellon University' -> 'institution'."""
    return next((kind for kind in (EMAIL_DOMAIN, *KINDS) if why == kind or why.startswith(kind + " ")), why)


def conflicts_note(ruled_out: dict[str, list[tuple[str, str, str]]], examples: int = 3) -> str:
    """One line on the (submission, reviewer) pairs ruled out as conflicts: their count by kind, a few
    examples with the reason ({kind: [(submission, reviewer, why)]})."""
    total = sum(len(v) for v in ruled_out.values())
    kinds = ", ".join(f"{kind} {len(ruled_out[kind]):,}" for kind in KINDS if ruled_out.get(kind))
    shown = "; ".join(f"{output_id(p)} {output_id(r)} ({why})" for kind in KINDS
                      for p, r, why in ruled_out.get(kind, [])[:1])
    more = [x for kind in KINDS for x in ruled_out.get(kind, [])[1:examples]]
    if more and shown.count(";") < examples - 1:
        shown += "; " + "; ".join(f"{output_id(p)} {output_id(r)} ({why})"
                                  for p, r, why in more[:examples - 1 - shown.count(";")])
    return f"{total:,} conflict(s) of interest ruled out ({kinds}), e.g. {shown}"


@dataclass
class AuthorDetails:
    """What the store holds about authors beyond the snapshot: institutions with their years (from
    `Author.affiliations`, records.affiliation_entry strings) and organisation email domains (from
    `Author.emails`). The service reads it (`from_nodes(*store.read_nodes("Author", PROPS))`); the checker
    only sees this."""

    PROPS = ("affiliations", "emails")
    # author id -> [(folded institution, its name, first year or None, last year or None)]
    institutions: dict[str, list[tuple[str, str, int | None, int | None]]] = field(default_factory=dict)
    domains: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def from_nodes(cls, ids: Sequence[str], props: dict[str, list]) -> AuthorDetails:
        details = cls()
        for aid, affiliations, emails in zip(ids, props.get("affiliations") or [None] * len(ids),
                                             props.get("emails") or [None] * len(ids)):
            for entry in affiliations or ():
                parsed = parse_affiliation(entry)
                if parsed is not None and fold_name(parsed[0]):
                    details.institutions.setdefault(aid, []).append((fold_name(parsed[0]), *parsed))
            domains = {d for d in (mail_domain(e) for e in emails or ()) if d}
            if domains:
                details.domains[aid] = domains
        return details


@dataclass
class ConflictChecker:
    """Finds the submission's authors in the snapshot by id, or by folded name (so 'José Pérez' and
    'jose perez' meet; two people with one name also meet, which errs on the safe side), then everyone who
    co-authored a paper with them in the `coauthor_years` years up to the submission year (None: ever;
    0: only the authors themselves). Papers without a year count as recent. `enabled=False` finds nothing.

    With `details` (AuthorDetails), also everyone at an institution of one of the authors in the
    `institution_years` years up to the submission year (None: ever; an affiliation without years counts),
    matched by folded name, and everyone with an email at one of the authors' organisation domains (public
    mail providers do not count); the submission's own author emails and affiliations (Query.author_emails,
    author_affiliations) count the same way, so new authors the graph does not know meet their colleagues.
    `explain` says why for each conflict."""

    snapshot: GraphSnapshot
    coauthor_years: int | None = 5
    enabled: bool = True
    details: AuthorDetails | None = None
    institution_years: int | None = 3

    def __post_init__(self) -> None:
        self._csr = self.snapshot.authorship.tocsr()
        self._csc = self.snapshot.authorship.tocsc()
        self._by_name: dict[str, list[int]] | None = None
        self._by_institution: dict[str, list[tuple[str, int | None, int | None]]] | None = None
        self._by_domain: dict[str, list[str]] | None = None

    def _name_index(self) -> dict[str, list[int]]:
        if self._by_name is None:
            index: dict[str, list[int]] = {}
            for a, name in enumerate(self.snapshot.author_names or ()):
                if name:
                    index.setdefault(fold_name(name), []).append(a)
            for a, aid in enumerate(self.snapshot.author_ids):
                # Name-keyed ids (sources without author ids) carry the folded name after 'name:', its
                # words joined by '_' ('name:ann_lee'; 'name:ann lee' in a graph not migrated yet).
                if aid.startswith("name:"):
                    rows = index.setdefault(aid[5:].replace("_", " "), [])
                    if a not in rows:
                        rows.append(a)
            self._by_name = index
        return self._by_name

    def authors(self, query: Query) -> np.ndarray:
        """Snapshot author rows of the submission's authors."""
        rows: set[int] = set()
        index = self.snapshot.author_index
        for aid in query.author_ids:
            if aid in index:
                rows.add(index[aid])
        names = self._name_index()
        for name in query.author_names:
            key = fold_name(name) if name else ""
            if key:
                rows.update(names.get(key, ()))
        if query.paper_index is not None:
            p = query.paper_index
            rows.update(self._csc.indices[self._csc.indptr[p]:self._csc.indptr[p + 1]].tolist())
        return np.array(sorted(rows), dtype=np.int64)

    def conflicts(self, query: Query) -> dict[str, str]:
        """{author id: its kind of conflict (KINDS)} of everyone in conflict with the submission."""
        return {aid: conflict_kind(reason) for aid, reason in self.explain(query).items()}

    def explain(self, query: Query) -> dict[str, str]:
        """{author id: why} of everyone in conflict: 'author', 'coauthor 2019' (the latest joint paper's year;
        'coauthor' when it has none), 'institution Carnegie Mellon University', 'email domain cmu.edu'. The
        first reason found wins, in that order."""
        if not self.enabled:
            return {}
        own = self.authors(query)
        out = {self.snapshot.author_ids[a]: AUTHOR for a in own}
        if len(own) and self.coauthor_years != 0:
            self._coauthors(query, own, out)
        if self.details is not None:
            # The submission's own emails and affiliations count even when none of its authors is in the graph.
            year = next((y for y in (query.year, query.submission_year) if y is not None), None)
            self._colleagues(query, [self.snapshot.author_ids[a] for a in own], year, out)
        return out

    def _latest_year(self) -> int:
        """The window's end for a submission without a year: the data's latest, affiliations included (a PC
        list's affiliations start at the year it was imported, often after the latest paper)."""
        assert self.details is not None
        years = [y for entries in self.details.institutions.values() for _, _, first, last in entries
                 for y in (first, last) if y is not None]
        return max([self.snapshot.max_year + 1, *years])

    def _colleagues(self, query: Query, own_ids: list[str], year: int | None, out: dict[str, str]) -> None:
        """Institution and email-domain conflicts of the submission's authors (`own_ids`, and the emails and
        affiliations the submission gives) as of `year` (the data's latest when None)."""
        assert self.details is not None
        if year is None:
            year = self._latest_year()
        if self._by_institution is None:
            self._by_institution, self._by_domain = {}, {}
            for aid, entries in self.details.institutions.items():
                for key, _, first, last in entries:
                    self._by_institution.setdefault(key, []).append((aid, first, last))
            for aid, domains in self.details.domains.items():
                for domain in domains:
                    self._by_domain.setdefault(domain, []).append(aid)
        assert self._by_domain is not None
        start = None if self.institution_years is None else year - self.institution_years

        def in_window(first: int | None, last: int | None) -> bool:
            return (first is None or first <= year) and (last is None or start is None or last >= start)

        # The submission's own affiliations are as of its year: always inside the window.
        institutions = [entry for aid in own_ids for entry in self.details.institutions.get(aid, ())
                        if in_window(entry[2], entry[3])]
        institutions += [(fold_name(name), name, None, None) for name in query.author_affiliations if fold_name(name)]
        for key, name, _, _ in institutions:
            for other, o_first, o_last in self._by_institution.get(key, ()):
                if in_window(o_first, o_last):
                    out.setdefault(other, f"{INSTITUTION} {name}")
        own_domains = [d for aid in own_ids for d in sorted(self.details.domains.get(aid, ()))]
        own_domains += sorted({d for d in (mail_domain(e) for e in query.author_emails) if d})
        for domain in own_domains:
            for other in self._by_domain.get(domain, ()):
                out.setdefault(other, f"{EMAIL_DOMAIN} {domain}")

    def _coauthors(self, query: Query, own: np.ndarray, out: dict[str, str]) -> None:
        papers = np.unique(self._csr[own].indices)
        if self.coauthor_years is not None:
            # The window ends at the as-of year when the evidence is cut, else at the submission's own year.
            year = next((y for y in (query.year, query.submission_year) if y is not None), self.snapshot.max_year + 1)
            py = self.snapshot.paper_year[papers]
            papers = papers[(py == NO_YEAR) | ((py >= year - self.coauthor_years) & (py <= year))]
        if query.paper_index is not None:
            papers = papers[papers != query.paper_index]
        if len(papers):
            # Each co-author with the year of the latest paper shared with an author of the submission.
            sub = self._csc[:, papers].tocoo()
            years = self.snapshot.paper_year[papers][sub.col]
            latest: dict[int, int] = {}
            for a, y in zip(sub.row.tolist(), years.tolist()):
                latest[a] = max(latest.get(a, NO_YEAR), int(y))
            for a, y in sorted(latest.items()):
                out.setdefault(self.snapshot.author_ids[a], COAUTHOR if y == NO_YEAR else f"{COAUTHOR} {y}")

    def pool_conflicts(self, pool: ReviewerPool, query: Query) -> dict[int, str]:
        """{pool row: why} of the pool's reviewers in conflict; reviewers unknown to the snapshot match the
        submission's author names ('author')."""
        found = {pool.row(a): why for a, why in self.explain(query).items()}
        if self.enabled and query.author_names:
            keys = {fold_name(n) for n in query.author_names if n}
            for r in np.flatnonzero(pool.author_rows < 0):
                name = pool.names[r]
                if name and fold_name(name) in keys:
                    found.setdefault(int(r), AUTHOR)
        found.pop(-1, None)
        return found

    def pool_rows(self, pool: ReviewerPool, query: Query) -> np.ndarray:
        """Pool rows in conflict (to pass as `exclude`)."""
        return np.array(sorted(self.pool_conflicts(pool, query)), dtype=np.int64)
