"""The evaluation protocol: judged-candidate runs, Soft/Hard P@k, baselines, tables and the chart."""

import numpy as np
import pytest

from scholargraph.ranking.reviewers.evaluate import (
    BM25Ranker,
    EmbeddingRanker,
    Judgments,
    TfidfRanker,
    format_table,
    heldout_judgments,
    plot_results,
    read_candidates,
    run_experiment,
    run_metrics,
    run_ranker,
)
from scholargraph.ranking.reviewers.training import TrainingQuery

from .conftest import make_evidence, submission


def test_soft_and_hard_precision():
    run = {"q": [("a", 3.0), ("b", 2.0), ("c", 1.0), ("d", 0.5), ("e", 0.1)]}
    qrels = {"q": {"a": 3, "b": 2, "c": 1, "d": 3, "e": 0}}
    m = run_metrics(run, qrels)
    assert m["hard_p5"] == pytest.approx(2 / 5) and m["soft_p5"] == pytest.approx(3 / 5)
    assert m["soft_p10"] == pytest.approx(3 / 10) and m["hard_mrr"] == 1.0


def test_read_candidates(tmp_path):
    path = tmp_path / "c"
    path.write_text("q1 a\nq1 b\n# comment\nq2 c\n")
    assert read_candidates(str(path)) == {"q1": ["a", "b"], "q2": ["c"]}


def test_semantic_rankers_rank_only_the_candidates(world):
    q = submission(world)
    judg = Judgments([q], {q.id: {"E": 3, "O": 0, "X": 3}}, {q.id: ["O", "E", "X"]},
                     texts={q.id: "gradient boosting ensembles"})
    pool = judg.pool(world)
    for ranker in (TfidfRanker(world, pool, judg.texts), BM25Ranker(world, pool, judg.texts),
                   EmbeddingRanker(world, pool)):
        run = run_ranker(ranker, judg, pool)
        assert sorted(a for a, _ in run[q.id]) == ["E", "O", "X"]
        assert run[q.id][0][0] == "E"  # its titles are the query's words, its vectors the closest


def test_experiment_table_and_chart(world, tmp_path):
    q = submission(world)
    judg = Judgments([q], {q.id: {"E": 3, "X": 3, "O": 0, "N": 0, "J": 1}}, {q.id: ["O", "N", "J", "E", "X"]})
    training = [TrainingQuery(make_evidence([[dict(sem=0.9, top=0.9)], [dict(sem=0.1, top=0.1)]]),
                              np.array([3.0, 0.0], np.float32))] * 4
    exp = run_experiment(world, judg, title="tiny", training=training, model_params={"steps": 5},
                         semantic=("embedding",))
    assert {"RECO-Rank", "w/o calibration", "w/o compensation", "w/o gate & reliability", "w/o top-k loss", "CoF",
            "Embedding"} <= set(exp.results)
    table = exp.table()
    assert "Hard P@5" in table and "RECO-Rank" in table
    png = plot_results([exp], str(tmp_path / "chart.png"))
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "±" in format_table({"a": {"soft_p5": 0.5, "soft_p5_std": 0.1}})


def test_heldout_judgments_use_authors_of_the_test_year(world):
    judg, pool = heldout_judgments(world, 2019, n_queries=5, min_papers=1, hard_negatives=2, random_negatives=2)
    assert judg.queries
    for q in judg.queries:
        assert q.year == 2018
        rel = {a for a, g in judg.qrels[q.id].items() if g == 3}
        authors = set(q.author_ids)
        assert rel and rel <= authors and set(judg.candidates[q.id]) >= rel
