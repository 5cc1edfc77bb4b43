"""Citation batch scoring through a partition mapper: in process it is exactly the served recommender's own
recommend; in Spark partitions (SparkMapper) the same recommendations, from the trained Citeomatic model and
from the text-only rankers (BM25 alone, fused with an encoder's vectors, MiniLM's when installed)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from scholargraph.graph.encoders import minilm_available
from scholargraph.graph.vectors import make_encoder
from scholargraph.ranking.batch import IN_PROCESS
from scholargraph.ranking.citations.batch import CitationScoring, draft_rows, recommend_drafts, recommend_partition
from scholargraph.ranking.citations.nnrank import NNRank
from scholargraph.ranking.citations.nnselect import NNSelect
from scholargraph.ranking.citations.recommender import CitationRecommender, Query, time_split_queries
from scholargraph.ranking.citations.service import recommend_citations, registry
from scholargraph.ranking.citations.textonly import TextOnlyRecommender
from tests.conftest import SPARK_SLOW_TIER
from tests.unit.ranking.citations.conftest import make_world
from tests.unit.ranking.citations.test_recommender import SMALL_RANK, SMALL_SELECT


@pytest.fixture(scope="module")
def big_world():
    return make_world(papers_per_topic=60)


@pytest.fixture(scope="module")
def trained(big_world, tmp_path_factory):
    """Citeomatic (NNSelect + NNRank, fused with BM25) trained on the world before 2006 and saved as the
    current citation model of a models folder; the later papers are the drafts."""
    split = time_split_queries(big_world, 2006)
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK), fusion=10).fit(split.train)
    models = tmp_path_factory.mktemp("cit-batch-models")
    version, path = registry(models).claim()
    rec.save(path)
    registry(models).publish({"version": version, "path": str(path)})
    return split, rec, models


def drafts(split, n: int = 12) -> list[Query]:
    """Later papers as drafts, then an in-graph paper (excluded from its own results), one without a title
    or a year, one with no words the collection knows."""
    train = split.train
    return [*split.queries[:n], Query(train.paper_ids[5], train.titles[5], train.abstracts[5], None),
            Query("draft-a", None, split.queries[0].abstract, None), Query("draft-b", "zzz qqq", None, 2009)]


def assert_same(got, expected):
    """Same drafts, same papers in the same order, scores within 1e-6, same shared terms."""
    assert [q.id for q, _ in got] == [q.id for q, _ in expected]
    for (_, a), (_, b) in zip(got, expected):
        assert [r.paper_index for r in a] == [r.paper_index for r in b]
        assert [r.explanation for r in a] == [r.explanation for r in b]
        np.testing.assert_allclose([r.score for r in a], [r.score for r in b], rtol=0, atol=1e-6)


def test_in_process_is_the_recommenders_own_recommend(trained):
    split, rec, _ = trained
    queries = drafts(split)
    exclude = [(q.id,) for q in queries]
    expected = [rec.recommend(q.title, q.abstract, q.year, exclude_ids=ex, k=15) for q, ex in zip(queries, exclude)]
    assert recommend_drafts(rec, queries, exclude, 15) == expected
    assert len(expected[0]) == 15
    assert split.train.paper_ids[5] not in {split.train.paper_ids[r.paper_index] for r in expected[-3]}


def test_the_payloads_pickle(trained, big_world):
    split, rec, _ = trained
    text_only = TextOnlyRecommender().fit(big_world)
    q = split.queries[0]
    for served in (rec, text_only):
        payload = pickle.loads(pickle.dumps(CitationScoring(served, 10)))
        out = recommend_partition(payload, draft_rows([q], [(q.id,)]))
        assert list(out["paper_index"]) == [r.paper_index for r in served.recommend(q.title, q.abstract, q.year,
                                                                                      (q.id,), k=10)]
        assert list(out["source_row"]) == [0] * len(out)


@SPARK_SLOW_TIER
def test_spark_partitions_give_the_in_process_recommendations_of_the_trained_model(trained, spark):
    from scholargraph.spark.engine import SparkMapper

    split, _, models = trained
    mapper = SparkMapper(spark, partitions=3)
    queries = drafts(split)
    expected, served, _ = recommend_citations(None, models, queries, 20, snapshot=split.train)
    got, served_spark, note = recommend_citations(None, models, queries, 20, snapshot=split.train, mapper=mapper)
    assert served.ranker == served_spark.ranker == "citeomatic+bm25" and note == ""
    assert sum(len(r) == 20 for _, r in expected) >= len(queries) - 2
    assert_same(got, expected)
    assert len(mapper.last_partition_seconds) == 3


@SPARK_SLOW_TIER
def test_spark_partitions_give_the_in_process_text_only_recommendations(big_world, spark, tmp_path):
    from scholargraph.spark.engine import SparkMapper

    split = time_split_queries(big_world, 2006)
    queries = drafts(split)
    mapper = SparkMapper(spark, partitions=2)
    # No trained model in the models folder: the service serves BM25 over the snapshot's texts.
    expected, served, _ = recommend_citations(None, tmp_path, queries, 10, snapshot=big_world)
    got, _, _ = recommend_citations(None, tmp_path, queries, 10, snapshot=big_world, mapper=mapper)
    assert served.ranker == "bm25"
    assert_same(got, expected)
    encoder = make_encoder("tfidf-svd", dim=16).fit([big_world.text(i) for i in range(big_world.n_papers)])
    fused = TextOnlyRecommender(depth=30).fit(big_world, encoder.encode(
        [big_world.text(i) for i in range(big_world.n_papers)]), encoder)
    exclude = [(q.id,) for q in queries]
    expected_fused = recommend_drafts(fused, queries, exclude, 10)
    assert fused.name == "bm25+tfidf-svd" and expected_fused != [r for _, r in expected]
    assert_same(list(zip(queries, recommend_drafts(fused, queries, exclude, 10, mapper))),
                list(zip(queries, expected_fused)))


@SPARK_SLOW_TIER
@pytest.mark.skipif(not minilm_available(), reason="the minilm encoder's package is not installed")
def test_spark_partitions_load_minilm_where_they_run(spark):
    """The pretrained encoder pickles without its weights (a module, a tokenizer, a torch model): each
    Spark worker loads them on its first draft. The papers' vectors need not be MiniLM's for this."""
    from scholargraph.spark.engine import SparkMapper

    world = make_world(papers_per_topic=10)
    encoder = make_encoder("minilm").fit([])
    assert len(pickle.dumps(encoder)) < 10_000
    vectors = np.random.default_rng(0).normal(size=(world.n_papers, encoder.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rec = TextOnlyRecommender(depth=20).fit(world, vectors, encoder)
    queries = [Query(f"d{i}", world.titles[i], world.abstracts[i], None) for i in range(0, world.n_papers, 6)]
    exclude = [(q.id,) for q in queries]
    expected = recommend_drafts(rec, queries, exclude, 5, IN_PROCESS)
    got = recommend_drafts(rec, queries, exclude, 5, SparkMapper(spark, partitions=2))
    assert rec.name == "bm25+minilm"
    assert_same(list(zip(queries, got)), list(zip(queries, expected)))


@SPARK_SLOW_TIER
def test_no_drafts_no_recommendations(trained, spark):
    from scholargraph.spark.engine import SparkMapper

    split, rec, models = trained
    mapper = SparkMapper(spark)
    assert recommend_drafts(rec, [], [], 10, mapper) == [] == recommend_drafts(rec, [], [], 10)
    results, _, note = recommend_citations(None, models, [], 10, snapshot=split.train, mapper=mapper)
    assert results == [] and note == ""
