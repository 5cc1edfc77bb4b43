"""A pairwise model of "these two occurrences of a name are one person", and clustering with it, trained and
scored on gold people with cross-validation over names (issue 45). Pure: papers as AMiner-shaped dicts in,
clusters out; no store.

For each pair of occurrences of one name, the features are what the papers hold: shared co-authors (by their
block keys, so `A. Smith` and `Alan Smith` count as one), the same venue, the years apart, the TF-IDF cosine of
title and abstract, shared keywords, shared affiliation words, and how many occurrences the name has in the
collection (a common name is more often several people). A LightGBM classifier gives the probability that a
pair is one person; average-linkage clustering on 1 - probability cuts at a threshold. `cross_validate` chooses
the threshold for each fold of names on the other folds' names only, so no name is scored with a threshold or
a model that saw it."""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse import csr_matrix

from scholargraph.ranking.authors.metrics import ClusteringScore, Occurrence, score_clustering, score_name
from scholargraph.ranking.authors.names import block_key, fold, parse_name

FEATURES = ("shared_coauthors", "coauthor_jaccard", "shared_coauthor_names", "shared_coauthor_idf", "same_venue",
            "same_venue_idf", "venue_word_jaccard",
            "years_apart", "year_known", "text_cosine", "shared_title_words", "shared_keywords",
            "shared_affiliation_words", "log_name_occurrences")
THRESHOLDS = tuple(np.round(np.arange(0.05, 1.0, 0.05), 2))


def _key(name: str) -> str | None:
    parsed = parse_name(name)
    return block_key(parsed) if parsed else None


@dataclass
class Occurrences:
    """The occurrences of one name, with what their papers hold (rows in the order of `occurrences`)."""

    name: str
    occurrences: list[Occurrence]
    coauthors: csr_matrix  # occurrence x co-author key, binary
    coauthor_names: csr_matrix  # occurrence x co-author name as written (folded)
    venues: csr_matrix
    venue_words: csr_matrix
    title_words: csr_matrix
    keywords: csr_matrix
    affiliation: csr_matrix
    text: csr_matrix  # L2-normalised TF-IDF rows
    years: np.ndarray  # float, nan where unknown
    idf: dict[str, np.ndarray] = field(default_factory=dict)  # per kind: log inverse occurrence frequency of a column


class _Vocabulary:
    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def rows(self, items: Sequence[Sequence[str]]) -> csr_matrix:
        indptr, indices = [0], []
        for row in items:
            cols = sorted({self.index.setdefault(x, len(self.index)) for x in row if x})
            indices.extend(cols)
            indptr.append(len(indices))
        return csr_matrix((np.ones(len(indices), dtype=np.float32), indices, indptr),
                          shape=(len(items), max(len(self.index), 1)))


def _words(text: str | None) -> list[str]:
    return [w for w in "".join(ch.lower() if ch.isalnum() else " " for ch in text or "").split() if len(w) > 2]


def read_papers(path: str | Path) -> dict[str, dict]:
    """The papers of an AMiner-shaped JSON-lines file (the gold sets' `papers.aminer.jsonl`), by id."""
    papers = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            papers[record["id"]] = record
    return papers


def collect(papers: Mapping[str, dict], occurrences: Sequence[Occurrence]) -> list[Occurrences]:
    """Group the occurrences by name and read each one's paper: co-authors (every other author), venue,
    keywords, the affiliation of the occurrence's own author where the source gives one, text and year."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = {pid: f"{p.get('title') or ''} {p.get('abstract') or ''}" for pid, p in papers.items()}
    tfidf = TfidfVectorizer(min_df=2, max_df=0.5, stop_words="english", sublinear_tf=True).fit(texts.values())
    by_name: dict[str, list[Occurrence]] = defaultdict(list)
    for occurrence in occurrences:
        by_name[occurrence[1]].append(occurrence)
    vocab = {kind: _Vocabulary() for kind in ("coauthors", "coauthor_names", "venues", "venue_words", "title_words",
                                              "keywords", "affiliation")}
    out = []
    for name, occ in sorted(by_name.items()):
        rows: dict[str, list[list[str]]] = {kind: [] for kind in vocab}
        years = []
        for paper_id, written, nth in occ:
            paper = papers[paper_id]
            authors = [a if isinstance(a, dict) else {"name": a} for a in paper.get("authors") or []]
            own = [i for i, a in enumerate(authors) if (a.get("name") or "").strip() == written]
            mine = own[nth] if nth < len(own) else (own[0] if own else -1)
            others = [a.get("name") or "" for i, a in enumerate(authors) if i != mine]
            rows["coauthors"].append([k for k in map(_key, others) if k])
            rows["coauthor_names"].append([" ".join(fold(n).replace(".", " ").split()) for n in others])
            venue = ((paper.get("venue") or {}).get("raw") or "").strip().lower()
            rows["venues"].append([venue] if venue else [])
            rows["venue_words"].append(_words(venue))
            rows["title_words"].append(_words(paper.get("title")))
            rows["keywords"].append([k.strip().lower() for k in paper.get("keywords") or [] if k])
            rows["affiliation"].append(_words(authors[mine].get("org")) if mine >= 0 else [])
            years.append(float(paper["year"]) if paper.get("year") else np.nan)
        out.append(Occurrences(name, list(occ), **{k: vocab[k].rows(v) for k, v in rows.items()},
                               text=tfidf.transform([texts[o[0]] for o in occ]).tocsr(),
                               years=np.array(years)))
    # How rare each co-author and venue is among all the occurrences: a shared rare co-author says more.
    total = sum(len(g.occurrences) for g in out)
    for kind in ("coauthors", "venues"):
        df = np.zeros(max(len(vocab[kind].index), 1))
        for g in out:
            np.add.at(df, getattr(g, kind).indices, 1)
        idf = np.log((total + 1) / (df + 1))
        for g in out:
            g.idf[kind] = idf[:getattr(g, kind).shape[1]]
    return out


def pair_features(group: Occurrences) -> np.ndarray:
    """[n_pairs, len(FEATURES)] for the pairs (i < j) in squareform order."""
    n = len(group.occurrences)
    iu = np.triu_indices(n, k=1)

    def overlap(m: csr_matrix, weights: np.ndarray | None = None) -> np.ndarray:
        left = m if weights is None else csr_matrix(m.multiply(weights[None, :]))
        return np.asarray((left @ m.T).todense())[iu]

    shared = overlap(group.coauthors)
    sizes = np.asarray(group.coauthors.sum(axis=1)).ravel()
    union = sizes[iu[0]] + sizes[iu[1]] - shared
    years = group.years
    apart = np.abs(years[iu[0]] - years[iu[1]])
    known = ~np.isnan(apart)
    venue_shared = overlap(group.venue_words)
    venue_sizes = np.asarray(group.venue_words.sum(axis=1)).ravel()
    venue_union = venue_sizes[iu[0]] + venue_sizes[iu[1]] - venue_shared
    return np.column_stack([
        shared, np.divide(shared, union, out=np.zeros_like(shared), where=union > 0), overlap(group.coauthor_names),
        overlap(group.coauthors, group.idf.get("coauthors")), overlap(group.venues),
        overlap(group.venues, group.idf.get("venues")),
        np.divide(venue_shared, venue_union, out=np.zeros_like(venue_shared), where=venue_union > 0),
        np.where(known, apart, -1.0), known.astype(float), overlap(group.text), overlap(group.title_words),
        overlap(group.keywords), overlap(group.affiliation), np.full(len(shared), np.log1p(n)),
    ]).astype(np.float32)


def pair_labels(group: Occurrences, gold: Mapping[Occurrence, str]) -> np.ndarray:
    people = np.array([gold[o] for o in group.occurrences])
    iu = np.triu_indices(len(people), k=1)
    return (people[iu[0]] == people[iu[1]]).astype(np.int8)


class PairwiseModel:
    """fit(groups, gold) on the pairs of the groups' names; probabilities(group) for a name's pairs. fit_pairs and
    pair_probabilities take the feature rows already computed (cross-validation computes each name's once)."""

    def __init__(self, max_pairs_per_name: int = 20_000, seed: int = 0, n_estimators: int = 300):
        self.max_pairs_per_name = max_pairs_per_name
        self.seed = seed
        self.n_estimators = n_estimators

    def fit(self, groups: Sequence[Occurrences], gold: Mapping[Occurrence, str]) -> PairwiseModel:
        return self.fit_pairs([(pair_features(g), pair_labels(g, gold)) for g in groups if len(g.occurrences) > 1])

    def fit_pairs(self, pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> PairwiseModel:
        """Each name's (features, labels)."""
        from lightgbm import LGBMClassifier

        rng = np.random.default_rng(self.seed)
        xs, ys = [], []
        for x, y in pairs:
            if len(y) > self.max_pairs_per_name:  # a common name must not outweigh every other one
                keep = rng.choice(len(y), self.max_pairs_per_name, replace=False)
                x, y = x[keep], y[keep]
            xs.append(x)
            ys.append(y)
        self.model_ = LGBMClassifier(n_estimators=self.n_estimators, learning_rate=0.05, num_leaves=31,
                                     min_child_samples=50, subsample=0.8, subsample_freq=1, colsample_bytree=0.9,
                                     random_state=self.seed, n_jobs=1, deterministic=True, verbose=-1)
        self.model_.fit(np.concatenate(xs), np.concatenate(ys))
        return self

    def probabilities(self, group: Occurrences) -> np.ndarray:
        return self.pair_probabilities(pair_features(group))

    def pair_probabilities(self, features: np.ndarray) -> np.ndarray:
        if not len(features):
            return np.zeros(0, dtype=np.float32)
        return np.asarray(self.model_.predict_proba(features))[:, 1]


def linkage_tree(probabilities: np.ndarray) -> np.ndarray | None:
    """Average linkage on 1 - p (None for a name with one occurrence): one tree, cut at any threshold."""
    if not len(probabilities):
        return None
    return linkage(1.0 - np.asarray(probabilities, dtype=float), method="average")


def cut(group: Occurrences, tree: np.ndarray | None, threshold: float) -> dict[Occurrence, str]:
    """The clusters where the mean distance between two clusters reaches 1 - threshold."""
    if tree is None:
        return {o: f"{group.name}#1" for o in group.occurrences}
    labels = fcluster(tree, t=1.0 - threshold, criterion="distance")
    return {o: f"{group.name}#{label}" for o, label in zip(group.occurrences, labels)}


def cluster(group: Occurrences, probabilities: np.ndarray, threshold: float) -> dict[Occurrence, str]:
    """Average linkage on 1 - p, cut where the mean distance between two clusters reaches 1 - threshold."""
    return cut(group, linkage_tree(probabilities), threshold)


@dataclass
class CrossValidation:
    score: ClusteringScore
    thresholds: list[float]  # the threshold chosen for each fold


def cross_validate(groups: Sequence[Occurrences], gold: Mapping[Occurrence, str], folds: int = 5, seed: int = 0,
                   model: PairwiseModel | None = None) -> CrossValidation:
    """Names split into folds. Each fold's pairs are scored by a model trained on the other folds; each fold is
    clustered at the threshold that gave the best mean of macro pairwise F1 and B3 F1 on the other folds' names
    (out-of-fold probabilities too). The clusters of every name are then scored together."""
    model = model or PairwiseModel(seed=seed)
    order = np.random.default_rng(seed).permutation(len(groups))
    fold_of = {int(g): i % folds for i, g in enumerate(order)}
    pairs = [(pair_features(g), pair_labels(g, gold)) for g in groups]  # once per name, for every fold
    trees: dict[int, np.ndarray | None] = {}
    for k in range(folds):
        fitted = copy.copy(model).fit_pairs([pairs[i] for i, g in enumerate(groups)
                                             if fold_of[i] != k and len(g.occurrences) > 1])
        for i in range(len(groups)):
            if fold_of[i] == k:
                trees[i] = linkage_tree(fitted.pair_probabilities(pairs[i][0]))
    truth = [{o: gold[o] for o in g.occurrences} for g in groups]
    scored = {t: {i: score_name(g.name, truth[i], cut(g, trees[i], t)) for i, g in enumerate(groups)}
              for t in THRESHOLDS}
    predicted: dict[Occurrence, str] = {}
    chosen = []

    def on(t: float, names: list[int]) -> float:  # both metrics count: their mean on those names
        s = ClusteringScore([scored[t][i] for i in names], [])
        return (s.macro_pairwise_f1 + s.b3_f1) / 2

    for k in range(folds):
        others = [i for i in range(len(groups)) if fold_of[i] != k]
        best = max(THRESHOLDS, key=lambda t: (on(t, others), -abs(t - 0.5)))
        chosen.append(float(best))
        for i, g in enumerate(groups):
            if fold_of[i] == k:
                predicted.update(cut(g, trees[i], best))
    return CrossValidation(score_clustering(gold, predicted), chosen)
