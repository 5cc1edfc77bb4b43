"""Pairwise and B3 F1 of a clustering of name occurrences against gold people: hand-counted cases, the gold
file's errors, and the one-name-one-person row of the real ArnetMiner and DBLP dev halves (issue 45's table)."""

from __future__ import annotations

import pytest

from scholargraph.errors import UsageError
from scholargraph.ranking.authors.metrics import (
    one_name_one_person,
    read_gold,
    score_clustering,
    score_name,
)
from tests.conftest import require_shared_data


def test_a_hand_counted_name():
    # Gold: a, b, c are X; d is Y. Predicted: {a, b} and {c, d}.
    gold = {"a": "X", "b": "X", "c": "X", "d": "Y"}
    predicted = {"a": "1", "b": "1", "c": "2", "d": "2"}
    s = score_name("N", gold, predicted)
    # Pairs: predicted (a,b), (c,d); gold (a,b), (a,c), (b,c); together (a,b): P 1/2, R 1/3, F1 0.4.
    assert s.pairwise_f1 == pytest.approx(0.4)
    # B3 precision per occurrence: a 1, b 1, c 1/2, d 1/2; recall: a 2/3, b 2/3, c 1/3, d 1.
    assert s.b3_precision_sum == pytest.approx(3.0) and s.b3_recall_sum == pytest.approx(8 / 3)
    assert (s.occurrences, s.people, s.clusters) == (4, 2, 2)


def test_perfect_and_merged_clusterings():
    gold = {("p1", "N", 0): "X", ("p2", "N", 0): "X", ("p3", "N", 0): "Y", ("p4", "M", 0): "Z"}
    perfect = score_clustering(gold, {k: v for k, v in gold.items()})
    assert perfect.macro_pairwise_f1 == 1.0 and perfect.b3_f1 == 1.0 and not perfect.missing
    merged = score_clustering(gold, one_name_one_person(gold))
    # N: 3 pairs predicted, 1 true -> P 1/3, R 1, F1 0.5; M: one occurrence, nothing wrong -> 1.
    assert merged.macro_pairwise_f1 == pytest.approx(0.75)
    # B3: N's occurrences have precision 2/3, 2/3, 1/3 and recall 1; M's 1 and 1 -> P 2.667/4, R 1.
    assert merged.b3_f1 == pytest.approx(2 * (8 / 12) / (8 / 12 + 1))


def test_a_name_twice_on_one_paper_is_two_occurrences_in_order(tmp_path):
    path = tmp_path / "gold.tsv"  # as in DBLP: two authors named Xin Dong on one paper, two people
    path.write_text("paper\tname\tperson\np1\tXin Dong\tA\np1\tXin Dong\tB\np2\tXin Dong\tA\n", encoding="utf-8")
    gold = read_gold(path)
    assert gold == {("p1", "Xin Dong", 0): "A", ("p1", "Xin Dong", 1): "B", ("p2", "Xin Dong", 0): "A"}
    assert score_clustering(gold, one_name_one_person(gold)).macro_pairwise_f1 == pytest.approx(0.5)


def test_occurrences_the_clustering_does_not_place_are_listed_not_scored():
    gold = {("p1", "N", 0): "X", ("p2", "N", 0): "X", ("p3", "N", 0): "Y"}
    score = score_clustering(gold, {("p1", "N", 0): "a", ("p2", "N", 0): "a"})
    assert score.missing == [("p3", "N", 0)]
    assert score.names[0].occurrences == 2 and score.macro_pairwise_f1 == 1.0


@pytest.mark.parametrize(("text", "says"), [
    ("paper\tname\n", ":1: expected the header line"),
    ("paper\tname\tperson\np1\tN\n", ":2: expected three non-empty tab-separated fields"),
    ("paper\tname\tperson\np1\t\tX\n", ":2: expected three non-empty"),
    ("paper\tname\tperson\n\n", "no occurrences under the header"),
])
def test_a_bad_gold_file_is_one_usage_error_naming_its_line(tmp_path, text, says):
    path = tmp_path / "gold.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as raised:
        read_gold(path)
    assert says in str(raised.value) and str(path) in str(raised.value)
    assert raised.value.exit_code == 2


def test_a_missing_gold_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read it"):
        read_gold(tmp_path / "absent.tsv")


@pytest.mark.parametrize(("dataset", "names", "macro", "b3"), [
    ("arnetminer-dev", 54, 0.475, 0.543),  # issue 45's table: one name = one person
    ("dblp-dev", 333, 0.848, 0.666),  # the issue gives 0.667 for B3 (its 340 names are the whole file's count)
])
def test_one_name_one_person_on_the_real_dev_halves(dataset, names, macro, b3):
    gold = read_gold(require_shared_data("authors", dataset, "gold.tsv"))
    score = score_clustering(gold, one_name_one_person(gold))
    assert len(score.names) == names and not score.missing
    assert round(score.macro_pairwise_f1, 3) == macro and round(score.b3_f1, 3) == b3
    intervals = score.intervals(samples=200)
    for metric, value in (("macro_pairwise_f1", score.macro_pairwise_f1), ("b3_f1", score.b3_f1)):
        low, high = intervals[metric]
        assert low <= value <= high and high - low > 0.01  # names differ: the interval has a width
