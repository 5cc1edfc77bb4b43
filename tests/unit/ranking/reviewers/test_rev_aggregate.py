"""One mean of a reviewer's best papers, and one reader of candidate files."""

import numpy as np

from scholargraph.conference.submissions import read_candidates
from scholargraph.ranking.reviewers.aggregate import top_mean


def test_top_mean_over_the_scores_an_owner_has():
    owner = np.array([0, 0, 0, 0, 2, 2])
    scores = np.array([0.1, 0.9, 0.5, 0.7, 0.4, 0.2])
    out = top_mean(owner, scores, 4, top=3)
    assert out[0] == (0.9 + 0.7 + 0.5) / 3
    assert out[2] == (0.4 + 0.2) / 2
    assert out[1] == -np.inf and out[3] == -np.inf
    assert (top_mean(np.zeros(0, np.int64), np.zeros(0), 2) == -np.inf).all()


def test_top_mean_zero_padded_counts_missing_papers_as_zero():
    owner = np.array([0, 0, 0, 0, 2, 2])
    scores = np.array([0.1, 0.9, 0.5, 0.7, 0.4, 0.2])
    out = top_mean(owner, scores, 4, top=3, zero_padded=True, empty=0.0)
    assert out[0] == (0.9 + 0.7 + 0.5) / 3
    assert out[2] == (0.4 + 0.2) / 3
    assert out[1] == 0.0 and out[3] == 0.0


def test_top_mean_sums_in_the_scores_dtype_best_first():
    scores = np.array([0.3, 0.1, 0.7], dtype=np.float32)
    out = top_mean(np.zeros(3, np.int64), scores, 1)
    assert out.dtype == np.float64
    assert out[0] == ((scores[2] + scores[0]) + scores[1]) / 3


def test_candidates_as_qrels_and_as_two_columns(tmp_path):
    qrels = tmp_path / "c.qrels"
    qrels.write_text("# judged\nq1 0 aminer:a 3\nq1 0 b 0\n\nq2 0 c 2\n", encoding="utf-8")
    pairs = tmp_path / "c.tsv"
    pairs.write_text("q1 aminer:a\nq1 b\n# comment\nq2 c\nq3 d 0.5\nlonely\n", encoding="utf-8")
    assert read_candidates(str(qrels)) == {"q1": ["aminer:a", "b"], "q2": ["c"]}
    assert read_candidates(str(pairs)) == {"q1": ["aminer:a", "b"], "q2": ["c"], "q3": ["d"]}
