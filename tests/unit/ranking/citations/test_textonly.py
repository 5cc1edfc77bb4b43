"""The text-only citation ranker (a library without citations): when Citeomatic cannot be trained, BM25 alone
or fused with an encoder's vectors by reciprocal rank fusion, self and future exclusion, explanations,
evaluation of every text-only system."""

from __future__ import annotations

import numpy as np
import pytest

from scholargraph.errors import NotFitted
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.vectors import make_encoder, text_vectors
from scholargraph.ranking.citations.recommender import Query
from scholargraph.ranking.citations.textonly import (
    RRF_K,
    TextOnlyRecommender,
    citing_papers,
    too_few_citations,
)


@pytest.fixture(scope="module")
def encoded(world):
    encoder = make_encoder("tfidf-svd", dim=16).fit([world.text(i) for i in range(world.n_papers)])
    return encoder, text_vectors(world, encoder)


def test_too_few_citations_names_what_is_missing(world):
    citing = citing_papers(world)
    assert 0 < citing < world.n_papers  # the first papers of each topic cite nothing
    assert too_few_citations(world, minimum=citing) is None
    short = too_few_citations(world, minimum=citing + 1)
    assert f"only {citing:,} papers citing" in short and f"at least {citing + 1:,}" in short
    bare = GraphSnapshot.build([{"id": "x", "year": 2000, "title": "a title"}], [], [])
    assert "no citations" in too_few_citations(bare)


def test_bm25_alone_excludes_self_and_future_and_explains(world):
    rec = TextOnlyRecommender().fit(world)
    assert rec.name == "bm25"
    i = world.n_papers - 1
    me = world.paper_ids[i]
    year = int(world.paper_year[i])
    recs = rec.recommend(world.titles[i], world.abstracts[i], year - 1, exclude_ids=(me,), k=10)
    assert recs and all(world.paper_ids[r.paper_index] != me for r in recs)
    assert all(world.paper_year[r.paper_index] <= year - 1 for r in recs)
    assert [r.score for r in recs] == sorted((r.score for r in recs), reverse=True)
    draft = set((world.titles[i] + " " + world.abstracts[i]).split())
    assert all(r.explanation and set(r.explanation) <= draft for r in recs)
    # Without the exclusion the draft itself is the best match.
    assert rec.recommend(world.titles[i], world.abstracts[i], year, k=1)[0].paper_index == i


def test_fusion_is_reciprocal_rank_fusion_of_both_rankings(world, encoded):
    encoder, vectors = encoded
    rec = TextOnlyRecommender(depth=30).fit(world, vectors, encoder)
    assert rec.name == "bm25+tfidf-svd"
    i = 7
    runs = rec.rankings(world.titles[i], world.abstracts[i], None, (world.paper_ids[i],), k=30)
    assert set(runs) == {"bm25", "tfidf-svd", "bm25+tfidf-svd"}
    lexical = {p: r for r, (p, _) in enumerate(runs["bm25"], start=1)}
    dense = {p: r for r, (p, _) in enumerate(runs["tfidf-svd"], start=1)}
    for p, score in runs["bm25+tfidf-svd"]:
        expected = sum(1.0 / (RRF_K + ranks[p]) for ranks in (lexical, dense) if p in ranks)
        assert score == pytest.approx(expected)
    fused = [p for p, _ in runs["bm25+tfidf-svd"]]
    assert [s for _, s in runs["bm25+tfidf-svd"]] == sorted((s for _, s in runs["bm25+tfidf-svd"]), reverse=True)
    assert set(fused) <= set(lexical) | set(dense)
    assert world.paper_ids[i] not in {world.paper_ids[p] for p in fused}
    # A paper without a vector is never a dense candidate.
    best = runs["tfidf-svd"][0][0]
    holes = vectors.copy()
    holes[best] = 0
    rec_holes = TextOnlyRecommender(depth=30).fit(world, holes, encoder)
    again = rec_holes.rankings(world.titles[i], world.abstracts[i], None, (world.paper_ids[i],), k=30)
    assert best not in {p for p, _ in again["tfidf-svd"]}


def test_evaluate_reports_every_text_only_system(world, encoded):
    encoder, vectors = encoded
    rec = TextOnlyRecommender().fit(world, vectors, encoder)
    cites = world.citations.tocsr()
    queries, qrels = [], {}
    for i in range(world.n_papers - 15, world.n_papers):
        refs = cites.indices[cites.indptr[i]:cites.indptr[i + 1]]
        if len(refs):
            qid = world.paper_ids[i]
            queries.append(Query(qid, world.titles[i], world.abstracts[i], int(world.paper_year[i])))
            qrels[qid] = {world.paper_ids[j]: 1 for j in refs}
    res = rec.evaluate(queries, qrels)
    assert set(res) == {"bm25", "tfidf-svd", "bm25+tfidf-svd"}
    for metrics in res.values():
        assert metrics["queries"] == len(queries) and 0 < metrics["recall@100"] <= 1 and 0 <= metrics["mrr"] <= 1
        assert metrics["ms_per_query"] > 0


def test_not_fitted_and_vector_count_checked(world, encoded):
    with pytest.raises(NotFitted):
        TextOnlyRecommender().recommend("a", "b")
    encoder, vectors = encoded
    with pytest.raises(ValueError, match="vectors for"):
        TextOnlyRecommender().fit(world, vectors[:-1], encoder)
    assert np.all(np.isfinite(vectors))
