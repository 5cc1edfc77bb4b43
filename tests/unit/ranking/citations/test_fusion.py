"""Fusion of the re-ranked candidates with BM25: reciprocal rank fusion, the held-out drafts `fit` chooses
the fusion on (their references leave the graph), the choice itself, and what the recommender serves."""

from __future__ import annotations

import click
import numpy as np
import pytest

from scholargraph.ranking.citations import recommender as rec_module
from scholargraph.ranking.citations.cli import parse_fusion
from scholargraph.ranking.citations.nnrank import NNRank
from scholargraph.ranking.citations.nnselect import NNSelect
from scholargraph.ranking.citations.recommender import (
    CitationRecommender,
    hold_out_drafts,
    reciprocal_rank_fusion,
)
from tests.unit.ranking.citations.conftest import make_world
from tests.unit.ranking.citations.test_recommender import SMALL_RANK, SMALL_SELECT


@pytest.fixture(scope="module")
def bigger():
    return make_world(papers_per_topic=120, seed=3)


def test_reciprocal_rank_fusion_sums_reciprocal_ranks():
    fused = reciprocal_rank_fusion([[7, 3, 5], [3, 9]], k=10)
    assert fused[0] == (3, pytest.approx(1 / 12 + 1 / 11))  # second and first: ahead of a single first
    assert dict(fused)[7] == pytest.approx(1 / 11) and dict(fused)[9] == pytest.approx(1 / 12)
    assert [i for i, _ in fused] == [3, 7, 9, 5]  # 7 and 9 differ; ties would go by index
    assert reciprocal_rank_fusion([[1, 2], [2, 1]], k=60, depth=1) == [(1, pytest.approx(1 / 61 + 1 / 62))]


def test_held_out_drafts_lose_their_references_and_keep_their_text(bigger):
    keep_out = {int(np.flatnonzero(bigger.paper_year == bigger.max_year)[0])}
    held, (queries, qrels) = hold_out_drafts(bigger, 10, keep_out)
    cit, held_cit = bigger.citations.tocsr(), held.citations.tocsr()
    assert 0 < len(queries) <= 10 and set(qrels) == {q.id for q in queries}
    for q in queries:
        i = bigger.paper_index[q.id]
        assert bigger.paper_year[i] == bigger.max_year and i not in keep_out
        refs = {bigger.paper_ids[j] for j in cit.indices[cit.indptr[i]:cit.indptr[i + 1]]}
        assert set(qrels[q.id]) == refs and held_cit[i].nnz == 0
        assert q.title == bigger.titles[i] and held.text(i) == bigger.text(i)
    others = [i for i in range(bigger.n_papers) if bigger.paper_ids[i] not in qrels]
    assert held_cit[others].nnz == cit[others].nnz  # nobody else loses a citation


def test_auto_fusion_is_chosen_on_held_out_drafts(bigger, monkeypatch):
    monkeypatch.setattr(rec_module, "MIN_VALIDATION_QUERIES", 5)
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK), ranker_years=2, min_ranker_queries=5,
                              validation_queries=20, validation="held-out").fit(bigger)
    val = rec.fusion_validation_
    assert "model_as_of" not in val
    assert val["queries"] >= 5 and set(val["scores"]) == {str(c) for c in rec_module.FUSION_CHOICES}
    fused = {c: m["f1@20"] + m["mrr"] for c, m in val["scores"].items() if c != "None"}
    alone = val["scores"]["None"]["f1@20"] + val["scores"]["None"]["mrr"]
    assert val["alone_minus_fused"] == pytest.approx(alone - max(fused.values()), abs=1e-9)
    if round(val["alone_minus_fused"], 9) > 0:  # the best on the drafts, neither side favoured
        assert val["choice"] is None
    else:
        assert fused[str(val["choice"])] == pytest.approx(max(fused.values()), abs=1e-9)
    assert rec.rrf_k == val["choice"]
    assert (rec.lexical is None) == (val["choice"] is None)
    assert rec.name == ("citeomatic" if val["choice"] is None else "citeomatic+bm25")


def test_auto_fusion_is_chosen_on_a_model_of_the_previous_year(bigger, monkeypatch):
    monkeypatch.setattr(rec_module, "MIN_VALIDATION_QUERIES", 5)
    drafts = rec_module.time_split_queries(bigger, bigger.max_year - 1)
    seen = []
    original = CitationRecommender.choose_fusion

    def spy(self, queries, qrels, *args, **kwargs):
        seen.append((self.snapshot.max_year, [q.id for q in queries]))
        return original(self, queries, qrels, *args, **kwargs)

    monkeypatch.setattr(CitationRecommender, "choose_fusion", spy)
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK), validation_queries=20).fit(bigger)
    val = rec.fusion_validation_
    # One choice, made by a model of the year before over the last year's papers as drafts (at most 20).
    assert seen == [(bigger.max_year - 1, seen[0][1])] and 5 <= len(seen[0][1]) <= 20
    assert set(seen[0][1]) <= {q.id for q in drafts.queries}
    assert val["model_as_of"] == bigger.max_year - 1 and val["queries"] == len(seen[0][1])
    assert rec.rrf_k == val["choice"] and (rec.lexical is None) == (val["choice"] is None)
    # The served model itself trains on the whole graph: no draft lost its references.
    assert rec.snapshot.citations.nnz == bigger.citations.nnz
    # Too few drafts in the last year: nothing chosen, nothing fused.
    monkeypatch.setattr(rec_module, "MIN_VALIDATION_QUERIES", 10_000)
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK)).fit(bigger)
    assert not hasattr(rec, "fusion_validation_") and rec.lexical is None and rec.name == "citeomatic"


def test_fixed_fusion_serves_both_rankers_and_never_the_draft(bigger):
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK), fusion=10).fit(bigger)
    assert rec.name == "citeomatic+bm25" and not hasattr(rec, "fusion_validation_")
    i = bigger.n_papers - 1
    me, year = bigger.paper_ids[i], int(bigger.paper_year[i])
    recs = rec.recommend(bigger.titles[i], bigger.abstracts[i], year, exclude_ids=(me,), k=15)
    assert len(recs) == 15 and me not in {bigger.paper_ids[r.paper_index] for r in recs}
    assert all(bigger.paper_year[r.paper_index] <= year for r in recs)
    ranked, _ = rec._ranked(bigger.titles[i], bigger.abstracts[i], year, (me,), use_ranker=True)
    lexical = [j for j, _ in rec.lexical.recommend(bigger.titles[i], bigger.abstracts[i], year, (me,), 200)]
    expected = reciprocal_rank_fusion([ranked[:200].tolist(), lexical], 10, 15)
    assert [r.paper_index for r in recs] == [j for j, _ in expected]
    # Never fused: the re-ranked list alone.
    alone = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK), fusion=None).fit(bigger)
    assert alone.lexical is None and alone.name == "citeomatic"


@pytest.mark.parametrize(("given", "taken"), [("auto", "auto"), ("none", None), ("None", None), ("10", 10), (" 5 ", 5)])
def test_train_fusion_option_takes_auto_none_or_k(given, taken):
    assert parse_fusion(given) == taken


@pytest.mark.parametrize("given", ["0", "-3", "1.5", "bm25", ""])
def test_train_fusion_option_refuses_anything_else(given):
    with pytest.raises(click.BadParameter, match="expected auto, none or a positive number"):
        parse_fusion(given)
