"""Ranking metrics on hand-computed cases."""

import numpy as np
import pytest

from scholargraph.ranking import metrics as m


def test_precision_recall_f1_mrr():
    rel = {"a": 3, "b": 2, "c": 1}
    ranked = ["x", "a", "b", "y"]
    assert m.precision_at_k(ranked, rel, 2) == 0.5
    assert m.precision_at_k(ranked, rel, 4, min_grade=2) == 0.5
    assert m.precision_at_k(ranked, rel, 4, min_grade=3) == 0.25
    assert m.recall_at_k(ranked, rel, 3) == pytest.approx(2 / 3)
    assert m.f1_at_k(ranked, rel, 4) == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert m.reciprocal_rank(ranked, rel) == 0.5 and m.reciprocal_rank(["x"], rel) == 0.0


def test_pre_at_k_percent_and_kendall():
    truth = np.array([10, 9, 8, 7, 6, 5, 4, 3, 2, 1])
    assert m.precision_at_k_percent(truth, truth, 20) == 1.0
    assert m.precision_at_k_percent(-truth, truth, 20) == 0.0
    assert m.precision_at_k_percent(np.array([9, 10, 0, 0, 0, 0, 0, 0, 0, 1]), truth, 30) == pytest.approx(2 / 3)
    assert m.weighted_kendall_loss(truth, truth) == 0.0
    assert m.weighted_kendall_loss(-truth, truth) == 1.0


def test_qrels(tmp_path):
    path = tmp_path / "q"
    path.write_text("q1 0 d1 3\nq1 0 d2 0\nq2 d9\n")
    assert m.read_qrels(str(path)) == {"q1": {"d1": 3, "d2": 0}, "q2": {"d9": 1}}
