"""The 18 IIRL features of young researchers as of year T, their labels (citation increments) and topic groups."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from scholargraph.graph import networks
from scholargraph.graph.features import FeatureOptions, network_features
from scholargraph.graph.snapshot import NO_VENUE, NO_YEAR, GraphSnapshot

if TYPE_CHECKING:
    from scholargraph.graph.topics import TopicModel

FEATURE_NAMES: tuple[str, ...] = (
    # author
    "n_papers", "citations", "avg_citations",
    # social
    "n_coauthors", "coauthor_avg_citations", "pagerank_acn", "pagerank_accn",
    "coauthor_avg_pagerank_acn", "coauthor_avg_pagerank_accn",
    # venue
    "venue_avg_citations", "venue_avg_citations_recent", "venue_avg_pagerank",
    # content
    "topic_diversity", "topic_authority",
    # temporal
    "citation_increment_last_year", "citation_increment_avg_2y", "papers_last_year", "papers_avg_2y",
)

FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "author": FEATURE_NAMES[0:3],
    "social": FEATURE_NAMES[3:9],
    "venue": FEATURE_NAMES[9:12],
    "content": FEATURE_NAMES[12:14],
    "temporal": FEATURE_NAMES[14:18],
}

# Opt-in beyond the paper's 18 (`build_dataset(external_features=True)`): the temporal citation features
# with self-citations left out, so that an author cannot raise them by citing their own recent work.
EXTERNAL_FEATURE_NAMES: tuple[str, ...] = (
    "external_citation_increment_last_year", "external_citation_increment_avg_2y",
)
EXTENDED_FEATURE_NAMES: tuple[str, ...] = FEATURE_NAMES + EXTERNAL_FEATURE_NAMES
EXTENDED_FEATURE_GROUPS: dict[str, tuple[str, ...]] = {**FEATURE_GROUPS, "external": EXTERNAL_FEATURE_NAMES}

# How an explanation names each feature to a reader who has never seen the list.
FEATURE_LABELS: dict[str, str] = {
    "n_papers": "number of papers",
    "citations": "citations so far",
    "avg_citations": "citations per paper",
    "n_coauthors": "number of co-authors",
    "coauthor_avg_citations": "how cited their co-authors are",
    "pagerank_acn": "centrality in the collaboration network",
    "pagerank_accn": "standing in the author citation network",
    "coauthor_avg_pagerank_acn": "co-authors' centrality in the collaboration network",
    "coauthor_avg_pagerank_accn": "co-authors' standing in the citation network",
    "venue_avg_citations": "how cited their venues are",
    "venue_avg_citations_recent": "how cited their recent venues are",
    "venue_avg_pagerank": "prestige of their venues",
    "topic_diversity": "breadth of topics",
    "topic_authority": "authority in their topics",
    "citation_increment_last_year": "citations gained last year",
    "citation_increment_avg_2y": "recent citation growth",
    "papers_last_year": "papers last year",
    "papers_avg_2y": "recent publication rate",
    "external_citation_increment_last_year": "citations by others last year",
    "external_citation_increment_avg_2y": "recent citation growth from others",
}


def feature_indices(names: Sequence[str], feature_names: Sequence[str] = FEATURE_NAMES) -> np.ndarray:
    pos = {f: k for k, f in enumerate(feature_names)}
    return np.array([pos[n] for n in names], dtype=np.int64)


def transform(raw: np.ndarray) -> np.ndarray:
    """f = ln(f + 1), the paper's transform (features are non-negative)."""
    return np.log1p(np.maximum(np.asarray(raw, dtype=np.float64), 0.0))


# --- population and labels -------------------------------------------------------------------------


def first_lead_year(snapshot: GraphSnapshot) -> np.ndarray:
    """Per author of `snapshot`: the year of their first first-author (position 1) paper, NO_YEAR when none."""
    a = snapshot.authorship.tocsr()
    rows = np.repeat(np.arange(snapshot.n_authors), np.diff(a.indptr))
    years = snapshot.paper_year[a.indices]
    lead = (a.data == 1) & (years != NO_YEAR)
    out = np.full(snapshot.n_authors, np.iinfo(np.int32).max, dtype=np.int64)
    np.minimum.at(out, rows[lead], years[lead].astype(np.int64))
    out[out == np.iinfo(np.int32).max] = NO_YEAR
    return out


def young_authors(snapshot: GraphSnapshot, as_of: int, window: int = 5) -> list[str]:
    """Ids of the young researchers A*: first first-author paper published in [T − W + 1, T].

    The synthetic generator's definition (docs/synthetic.md): earlier co-authored papers do not
    disqualify, and a first-author paper after T does not count (so the full snapshot gives the same
    set as the snapshot as of T)."""
    first = first_lead_year(snapshot)
    young = np.flatnonzero((first >= as_of - window + 1) & (first <= as_of))
    return [snapshot.author_ids[a] for a in young]


def _binary(m: sp.spmatrix) -> sp.csr_matrix:
    b = sp.csr_matrix(m, dtype=np.float64, copy=True)
    b.eliminate_zeros()
    b.data[:] = 1.0
    return b


def _cited_by(snapshot: GraphSnapshot, citer_mask: np.ndarray, citations: sp.spmatrix | None = None) -> np.ndarray:
    """Per paper: how many papers selected by `citer_mask` cite it (in `citations`, the snapshot's by default)."""
    c = snapshot.citations if citations is None else citations
    return np.asarray(c.T @ citer_mask.astype(np.float64)).ravel()


def _rows_of(snapshot: GraphSnapshot, author_ids: Sequence[str]) -> np.ndarray:
    index = snapshot.author_index
    return np.array([index.get(a, -1) for a in author_ids], dtype=np.int64)


def citation_increment(snapshot: GraphSnapshot, author_ids: Sequence[str], as_of: int, horizon: int,
                       exclude_self_citations: bool = False, cited_up_to: int | None = None) -> np.ndarray:
    """The label: citations from papers published in (T, T + D] to all of each author's papers.

    Computed on the full snapshot, so it counts citations to papers the author publishes after T
    too, and self-citations: exactly the generator's `future_increment`. A citing paper adds one per
    cited paper of the author. Authors absent from the snapshot get 0.
    `exclude_self_citations` drops citations between papers sharing an author
    (`networks.citations_without_shared_authors`);
    `cited_up_to` counts only citations to papers published up to that year (a hindsight ceiling)."""
    year = snapshot.paper_year
    citing = (year != NO_YEAR) & (year > as_of) & (year <= as_of + horizon)
    others = networks.citations_without_shared_authors(snapshot) if exclude_self_citations else None
    cites = _cited_by(snapshot, citing, others)
    if cited_up_to is not None:
        cites = np.where((year != NO_YEAR) & (year <= cited_up_to), cites, 0.0)
    per_author = _binary(snapshot.authorship) @ cites
    rows = _rows_of(snapshot, author_ids)
    return np.where(rows >= 0, per_author[np.maximum(rows, 0)], 0.0)


# --- features -------------------------------------------------------------------------------------


@dataclass
class RisingStarData:
    """Young researchers as of T: raw features (n x 18, before ln), labels when the horizon is known,
    and p(r|a) over research topics when paper topics were given."""

    author_ids: list[str]
    raw: np.ndarray
    as_of: int
    window: int
    labels: np.ndarray | None = None
    horizon: int | None = None
    author_topics: np.ndarray | None = None
    feature_names: tuple[str, ...] = FEATURE_NAMES
    labels_without_self_citations: bool = False
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def X(self) -> np.ndarray:
        """ln(f + 1) features: what the models see."""
        return transform(self.raw)

    def __len__(self) -> int:
        return len(self.author_ids)

    def topic_groups(self, top_m: int = 3) -> dict[str, np.ndarray]:
        """One task per research topic: topic key -> rows of the authors for whom it is among their top
        m topics of p(r|a). Authors with no topic mass belong to none. Empty when topics are unknown."""
        if self.author_topics is None or not len(self):
            return {}
        p = self.author_topics
        m = min(top_m, p.shape[1])
        top = np.argsort(-p, axis=1, kind="stable")[:, :m]
        has = p.sum(axis=1) > 0
        return {str(r): np.flatnonzero(has & (top == r).any(axis=1)) for r in range(p.shape[1])}


def _align_topics(paper_topics: np.ndarray, full: GraphSnapshot, past: GraphSnapshot) -> np.ndarray:
    """Paper topic distributions on the papers of `past`, given per paper of `past` or of `full`."""
    pt = np.asarray(paper_topics, dtype=np.float64)
    if len(pt) == past.n_papers:
        return pt
    if len(pt) == full.n_papers:
        index = full.paper_index
        return pt[np.array([index[p] for p in past.paper_ids], dtype=np.int64)]
    raise ValueError(f"paper_topics has {len(pt)} rows: expected one per paper of the snapshot as of T "
                     f"({past.n_papers}) or of the full snapshot ({full.n_papers})")


def _mean_over_neighbours(adj_binary: sp.csr_matrix, values: np.ndarray, degree: np.ndarray) -> np.ndarray:
    total = adj_binary @ values
    return np.divide(total, degree, out=np.zeros_like(total), where=degree > 0)


def _paper_mean(b: sp.csr_matrix, paper_values: np.ndarray, paper_mask: np.ndarray) -> np.ndarray:
    """Per author: mean of paper_values over their papers selected by paper_mask (0 when none)."""
    m = paper_mask.astype(np.float64)
    count = b @ m
    total = b @ (np.where(paper_mask, paper_values, 0.0))
    return np.divide(total, count, out=np.zeros_like(total), where=count > 0)


def compute_features(past: GraphSnapshot, as_of: int, paper_topics: np.ndarray | None = None,
                     timings: dict[str, float] | None = None, external_features: bool = False) -> np.ndarray:
    """The 18 raw features (before ln) of every author of `past`, a snapshot already cut at T
    (`snapshot.as_of(T)`): nothing published after T can reach them. `paper_topics` (papers of
    `past` x R) feeds the two content features, which are 0 without it. `external_features` appends
    the two columns of EXTERNAL_FEATURE_NAMES (F15 and F16 without self-citations).

    PageRank scores are multiplied by the number of nodes (mean 1), so that ln(f + 1) does not
    flatten them to ~0 (raw PageRank of one node among 10^5 is ~10^-5)."""
    timings = {} if timings is None else timings
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = timings.get(name, 0.0) + now - clock
        clock = now

    n_a = past.n_authors
    year = past.paper_year
    dated = year != NO_YEAR
    b = _binary(past.authorship)
    out = np.zeros((n_a, len(FEATURE_NAMES)), dtype=np.float64)
    col = {f: k for k, f in enumerate(FEATURE_NAMES)}

    # author
    cites = _cited_by(past, dated)  # every citing paper of `past` is dated and <= T
    n_papers = np.asarray(b.sum(axis=1)).ravel()
    citations = b @ cites
    out[:, col["n_papers"]] = n_papers
    out[:, col["citations"]] = citations
    out[:, col["avg_citations"]] = np.divide(citations, n_papers, out=np.zeros(n_a), where=n_papers > 0)
    lap("author")

    # social: the networks and their PageRank are the feature pipeline's (graph.features), as of T
    net = network_features(past, FeatureOptions(only=("networks", "pagerank"), strict=False))
    assert (net.acn is not None and net.author_pagerank_coauthor is not None and net.venue_pagerank is not None
            and net.author_pagerank_citation is not None and net.venue_avg_citation is not None), \
        "the networks and pagerank steps fill every network feature"
    lap("social: networks and PageRank")
    co = sp.csr_matrix(net.acn, dtype=np.float64, copy=True)
    co.setdiag(0)
    co = _binary(co)
    degree = np.asarray(co.sum(axis=1)).ravel()
    out[:, col["n_coauthors"]] = degree
    out[:, col["coauthor_avg_citations"]] = _mean_over_neighbours(co, citations, degree)
    # Scaled to mean 1 (see above); the pipeline stores them unscaled.
    pr_acn = net.author_pagerank_coauthor * n_a if n_a else np.zeros(0)
    pr_accn = net.author_pagerank_citation * n_a if n_a else np.zeros(0)
    out[:, col["pagerank_acn"]] = pr_acn
    out[:, col["pagerank_accn"]] = pr_accn
    out[:, col["coauthor_avg_pagerank_acn"]] = _mean_over_neighbours(co, pr_acn, degree)
    out[:, col["coauthor_avg_pagerank_accn"]] = _mean_over_neighbours(co, pr_accn, degree)
    del co
    lap("social")

    # venue
    venue = past.paper_venue
    has_venue = venue != NO_VENUE
    v = np.where(has_venue, venue, 0)
    if past.n_venues:
        venue_avg = np.asarray(net.venue_avg_citation, dtype=np.float64)
        venue_pr = net.venue_pagerank * past.n_venues
    else:
        venue_avg = venue_pr = np.zeros(1)
    recent = dated & (year >= as_of - 1) & (year <= as_of)
    out[:, col["venue_avg_citations"]] = _paper_mean(b, venue_avg[v], has_venue)
    out[:, col["venue_avg_citations_recent"]] = _paper_mean(b, venue_avg[v], has_venue & recent)
    out[:, col["venue_avg_pagerank"]] = _paper_mean(b, venue_pr[v], has_venue)
    lap("venue")

    # content
    if paper_topics is not None and n_a:
        from scholargraph.graph import topics  # gensim behind it: imported only when topics are given

        pt = np.asarray(paper_topics, dtype=np.float64)
        out[:, col["topic_diversity"]] = topics.topic_diversity(past.authorship, pt)
        out[:, col["topic_authority"]] = topics.topic_authority(past.authorship, pt, cites)
    lap("content")

    # temporal: citations received from the papers of year T (of years T-1..T), papers written then
    last = dated & (year == as_of)
    out[:, col["citation_increment_last_year"]] = b @ _cited_by(past, last)
    out[:, col["citation_increment_avg_2y"]] = (b @ _cited_by(past, recent)) / 2.0
    out[:, col["papers_last_year"]] = b @ last.astype(np.float64)
    out[:, col["papers_avg_2y"]] = (b @ recent.astype(np.float64)) / 2.0
    lap("temporal")
    if not external_features:
        return out
    others = networks.citations_without_shared_authors(past)
    external = np.column_stack([b @ _cited_by(past, last, others), (b @ _cited_by(past, recent, others)) / 2.0])
    lap("external")
    return np.hstack([out, external])


def fit_paper_topics(past: GraphSnapshot, num_topics: int = 10, fitted: TopicModel | None = None,
                     **topic_model_params) -> np.ndarray:
    """Per-paper topic distributions (papers of `past` x R) from a TopicModel fitted on the titles and
    abstracts of `past` (cut at T, so the topics know nothing later), or from `fitted`, a model the caller
    trained on them elsewhere (on Spark: spark/topics.py). Papers without usable text (stubs) get a row of
    zeros: no topic mass, rather than the uniform row LDA would give them."""
    from scholargraph.graph.topics import TopicModel

    if past.titles is None and past.abstracts is None:
        raise ValueError("the snapshot has no texts: pull it with titles and abstracts to fit topics")
    texts = [past.text(i) for i in range(past.n_papers)]
    if fitted is None:
        theta, empty = TopicModel(num_topics=num_topics, **topic_model_params).fit_transform(texts, return_empty=True)
    else:
        theta, empty = fitted.transform(texts, return_empty=True)
    theta[empty] = 0.0
    return theta


def build_dataset(snapshot: GraphSnapshot, as_of: int, horizon: int | None = None,
                  paper_topics: np.ndarray | None = None, window: int = 5,
                  author_ids: Sequence[str] | None = None, past: GraphSnapshot | None = None,
                  external_features: bool = False, labels_without_self_citations: bool = False) -> RisingStarData:
    """Features as of T for the young researchers (or `author_ids`), and their labels in (T, T + D]
    when `horizon` is given (the full `snapshot` must then reach T + D).

    `paper_topics`: per-paper topic distributions (R columns) computed by the caller as of T, one row
    per paper of `snapshot.as_of(T)` or of `snapshot` (rows are then matched by paper id); it feeds
    the content features and the topic groups p(r|a) (`fit_paper_topics` makes one); a row of zeros
    means "no text". `past`: `snapshot.as_of(T)` if already cut. `external_features`: the 20 features of
    EXTENDED_FEATURE_NAMES instead of the paper's 18. `labels_without_self_citations`: labels count
    only citations between papers that share no author (`citation_increment(exclude_self_citations=True)`)."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    if past is None:
        past = snapshot.as_of(as_of)
    timings["as_of cut"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    ids = young_authors(past, as_of, window) if author_ids is None else list(author_ids)
    rows = _rows_of(past, ids)
    timings["population"] = time.perf_counter() - t0
    pt = _align_topics(paper_topics, snapshot, past) if paper_topics is not None else None
    all_raw = compute_features(past, as_of, pt, timings, external_features=external_features)
    raw = np.where(rows[:, None] >= 0, all_raw[np.maximum(rows, 0)], 0.0) if len(rows) else all_raw[:0]
    author_topics = None
    if pt is not None:
        from scholargraph.graph import topics

        t0 = time.perf_counter()
        dist = np.asarray(topics.author_topic_distribution(past.authorship, pt), dtype=np.float64)
        author_topics = np.where(rows[:, None] >= 0, dist[np.maximum(rows, 0)], 0.0)
        timings["topic groups"] = time.perf_counter() - t0
    labels = None
    if horizon is not None:
        t0 = time.perf_counter()
        if snapshot.max_year < as_of + horizon:
            raise ValueError(f"labels need papers up to {as_of + horizon}; the snapshot ends in {snapshot.max_year}")
        labels = citation_increment(snapshot, ids, as_of, horizon, exclude_self_citations=labels_without_self_citations)
        timings["labels"] = time.perf_counter() - t0
    names = EXTENDED_FEATURE_NAMES if external_features else FEATURE_NAMES
    return RisingStarData(author_ids=ids, raw=raw, as_of=as_of, window=window, labels=labels, horizon=horizon,
                          author_topics=author_topics, feature_names=names,
                          labels_without_self_citations=labels_without_self_citations, timings=timings)
