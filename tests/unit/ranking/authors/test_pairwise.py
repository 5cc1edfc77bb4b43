"""The pairwise model and its clustering: a hand-made block of two people, and on real ArnetMiner dev names a
model trained on some names that tells people apart on others (a cheap, stable property; the cross-validated
table is bench/authors.py's)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from scholargraph.ranking.authors.metrics import read_gold
from scholargraph.ranking.authors.pairwise import (
    FEATURES,
    PairwiseModel,
    cluster,
    collect,
    cross_validate,
    pair_features,
    pair_labels,
    read_papers,
)
from tests.conftest import require_shared_data


def _papers():
    def paper(pid, coauthor, venue, year, title):
        return pid, {"id": pid, "title": title, "year": year, "venue": {"raw": venue},
                     "authors": [{"name": "Jun Wang"}, {"name": coauthor}]}
    return dict([paper("p1", "Ann Lee", "SIGIR", 2001, "ranking documents with language models"),
                 paper("p2", "A. Lee", "SIGIR", 2002, "language models for ranking"),
                 paper("p3", "Bo Chen", "VLDB", 2010, "query processing in column stores"),
                 paper("p4", "Bo Chen", "VLDB", 2011, "column stores and query plans")])


def test_features_read_coauthors_by_block_venues_and_years():
    occurrences = [(p, "Jun Wang", 0) for p in ("p1", "p2", "p3", "p4")]
    (group,) = collect(_papers(), occurrences)
    x = pair_features(group)
    assert x.shape == (6, len(FEATURES))
    column = dict(zip(FEATURES, x.T))
    # Pairs in order (p1,p2), (p1,p3), (p1,p4), (p2,p3), (p2,p4), (p3,p4): `Ann Lee` and `A. Lee` share a block.
    assert column["shared_coauthors"].tolist() == [1, 0, 0, 0, 0, 1]
    assert column["shared_coauthor_names"].tolist() == [0, 0, 0, 0, 0, 1]
    # Weighted by rarity among the occurrences: each shared co-author is on 2 of 4, log(5/3).
    assert column["shared_coauthor_idf"] == pytest.approx([np.log(5 / 3), 0, 0, 0, 0, np.log(5 / 3)])
    assert column["same_venue"].tolist() == [1, 0, 0, 0, 0, 1]
    assert column["years_apart"].tolist() == [1, 9, 10, 8, 9, 1]
    gold = {o: ("A" if o[0] in ("p1", "p2") else "B") for o in occurrences}
    assert pair_labels(group, gold).tolist() == [1, 0, 0, 0, 0, 1]


def test_average_linkage_cuts_two_people_apart():
    occurrences = [(p, "Jun Wang", 0) for p in ("p1", "p2", "p3", "p4")]
    (group,) = collect(_papers(), occurrences)
    probabilities = np.array([0.9, 0.1, 0.2, 0.1, 0.1, 0.8])
    labels = cluster(group, probabilities, threshold=0.5)
    assert labels[occurrences[0]] == labels[occurrences[1]] != labels[occurrences[2]] == labels[occurrences[3]]
    assert len(set(cluster(group, probabilities, threshold=0.05).values())) == 1  # everything merges
    assert all(label.startswith("Jun Wang#") for label in labels.values())


@pytest.fixture(scope="module")
def arnetminer():
    data = require_shared_data("authors", "arnetminer-dev")
    papers = read_papers(data / "papers.aminer.jsonl")
    gold = read_gold(data / "gold.tsv")
    # The 24 names with the fewest occurrences (the test's time; the whole set is the bench's).
    groups = sorted(collect(papers, list(gold)), key=lambda g: len(g.occurrences))[:24]
    return groups, gold


def test_a_model_trained_on_some_real_names_tells_people_apart_on_others(arnetminer):
    groups, gold = arnetminer
    train, test = groups[0::2], groups[1::2]
    model = PairwiseModel(n_estimators=100).fit(train, gold)
    y = np.concatenate([pair_labels(g, gold) for g in test])
    p = np.concatenate([model.probabilities(g) for g in test])
    assert 0 < y.mean() < 1 and roc_auc_score(y, p) > 0.6  # 0.5 is chance; 0.71 when written


def test_cross_validation_places_every_occurrence_once(arnetminer):
    groups, gold = arnetminer
    small = {o: gold[o] for g in groups for o in g.occurrences}
    cv = cross_validate(groups, small, folds=3, model=PairwiseModel(n_estimators=50))
    assert len(cv.thresholds) == 3 and not cv.score.missing
    assert sum(n.occurrences for n in cv.score.names) == len(small)
