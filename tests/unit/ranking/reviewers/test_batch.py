"""RECO-Rank batch scoring through a partition mapper: in process it is exactly the model's own recommend; in
Spark partitions (SparkMapper) the same suggestions; the service gives the same results either way, the
candidate-list (CoF) queries included."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest

from scholargraph.conference.submissions import ReviewerPool, evidence_as_of
from scholargraph.ingest.offline import snapshot_from_files
from scholargraph.ranking.batch import IN_PROCESS
from scholargraph.ranking.reviewers import service
from scholargraph.ranking.reviewers.batch import (
    ReviewerScoring,
    query_rows,
    recommend_partition,
    recommend_queries,
    row_query,
)
from scholargraph.ranking.reviewers.evidence import EvidenceIndex
from scholargraph.ranking.reviewers.reco_rank import RecoRank
from scholargraph.synth import SynthParams, generate
from tests.conftest import SPARK_SLOW_TIER


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A synthetic world (1,000 requested papers, its submissions file), its evidence, a RECO-Rank trained
    on it and saved as the current reviewer model of a models folder."""
    out = tmp_path_factory.mktemp("rev-batch-world")
    generate(SynthParams(papers=1000, seed=1, reviewer_queries=12, citation_queries=0), out)
    snapshot = snapshot_from_files("aminer", [str(out / "corpus.aminer.jsonl")], with_text=True)
    index = EvidenceIndex.build(snapshot, num_topics=8, citation_dim=16)
    pool = ReviewerPool.from_snapshot(snapshot, min_papers=3)
    model = RecoRank(self_supervised=30, reviewer_centric=10, steps=20, recent_years=6).fit(index, pool)
    models = out / "models"
    version, path = service.registry(models).claim()
    model.save(path)
    service.registry(models).publish({"path": str(path), "version": version, "min_papers": 3})
    return index, pool, service.load_model(models)[0], models, out / "reviewers.queries.jsonl"


def paper_queries(index: EvidenceIndex, n: int = 10):
    step = max(1, index.snapshot.n_papers // n)
    return [index.query_for_paper(i) for i in range(0, step * n, step)]


def test_queries_travel_as_rows_bit_for_bit(world):
    index, _, _, _, queries_file = world
    queries = paper_queries(index, 4) + index.read_queries(str(queries_file))[:4]
    rows = query_rows(queries)
    assert list(rows["query"]) == list(range(len(queries))) and rows["query"].dtype == np.int64
    assert any(q.lexical_vector is not None for q in queries) and any(q.paper_index is None for q in queries)
    for q, row in zip(queries, rows.to_dict("records")):
        back = row_query(row)
        for name in ("id", "year", "author_names", "author_ids", "paper_index", "title"):
            assert getattr(back, name) == getattr(q, name), name
        for name in ("text_vector", "topic_vector", "references", "citation_vector"):
            a, b = getattr(q, name), getattr(back, name)
            assert (a is None and b is None) or (a.dtype == b.dtype and np.array_equal(a, b)), name
        if q.lexical_vector is None:
            assert back.lexical_vector is None
        else:
            assert back.lexical_vector.shape == q.lexical_vector.shape
            assert (back.lexical_vector != q.lexical_vector).nnz == 0


def test_in_process_is_the_models_own_recommend(world):
    index, pool, model, _, queries_file = world
    queries = paper_queries(index, 6) + index.read_queries(str(queries_file))[:3]
    expected = [model.recommend(index, q, pool, k=7) for q in queries]
    assert recommend_queries(model, index, queries, pool, 7) == expected  # the same objects' values, exactly
    assert all(len(s) == 7 for s in expected)


def test_the_payload_pickles_without_the_text_models(world):
    index, pool, model, _, _ = world
    shared = copy.copy(index)
    shared.encoder = shared.topic_model = None
    payload = pickle.loads(pickle.dumps(ReviewerScoring(model, shared, pool, 5, True)))
    q = paper_queries(index, 1)[0]
    rows = query_rows([q])
    out = recommend_partition(payload, rows)
    assert list(out["reviewer"]) == [s.reviewer_id for s in model.recommend(index, q, pool, k=5)]
    assert list(out["source_row"]) == [0] * 5 and all(isinstance(json.loads(e), list) for e in out["evidence"])


def assert_same(got, expected):
    """Same queries, same reviewers in the same order, scores within 1e-6, same evidence papers."""
    assert [q.id for q, _ in got] == [q.id for q, _ in expected]
    for (_, a), (_, b) in zip(got, expected):
        assert [s.reviewer_id for s in a] == [s.reviewer_id for s in b]
        assert [s.rank for s in a] == [s.rank for s in b]
        for x, y in zip(a, b):
            for name in ("score", "main", "compensation", "gate", "reliability"):
                assert getattr(x, name) == pytest.approx(getattr(y, name), abs=1e-6), name
            assert [p.paper_id for p in x.papers] == [p.paper_id for p in y.papers]
            assert (x.name, x.no_history) == (y.name, y.no_history)


@SPARK_SLOW_TIER
def test_spark_partitions_give_the_in_process_suggestions(world, spark):
    from scholargraph.spark.engine import SparkMapper

    index, _, _, models, queries_file = world
    ids = [q.id for q in paper_queries(index, 10)]
    mapper = SparkMapper(spark, partitions=3)
    args = {"paper_ids": ids, "queries_file": str(queries_file), "k": 8, "index": index}
    expected, _ = service.recommend(None, models, **args)
    got, note = service.recommend(None, models, mapper=mapper, **args)
    assert note == "" and len(expected) == 10 + 12 and all(len(s) == 8 for _, s in expected)
    assert_same(got, expected)
    assert len(mapper.last_partition_seconds) == 3 and all(t > 0 for t in mapper.last_partition_seconds)


@SPARK_SLOW_TIER
def test_candidate_lists_are_ranked_in_process_beside_the_spark_batch(world, spark, tmp_path):
    from scholargraph.spark.engine import SparkMapper

    index, pool, model, models, _ = world
    # recommend judges reviewers on all their papers (no evidence cut unless asked)
    queries = evidence_as_of(paper_queries(index, 6), None)
    listed = pool.author_ids[:4]
    cands = tmp_path / "candidates.txt"
    cands.write_text("".join(f"{queries[1].id} {a}\n" for a in listed) + f"{queries[4].id} {listed[0]}\n")
    args = {"paper_ids": [q.id for q in queries], "candidates_file": str(cands), "k": 5, "index": index}
    expected, _ = service.recommend(None, models, **args)
    got, _ = service.recommend(None, models, mapper=SparkMapper(spark), **args)
    assert_same(got, expected)
    by_id = {q.id: s for q, s in expected}
    assert {s.reviewer_id for s in by_id[queries[1].id]} <= set(listed) and len(by_id[queries[4].id]) <= 1
    cof = ReviewerPool.from_snapshot(index.snapshot, author_ids=listed)
    assert by_id[queries[1].id] == model.recommend(index, queries[1], cof, k=len(cof), shortlist=None)
    assert by_id[queries[0].id] == model.recommend(index, queries[0], pool, k=5)


@SPARK_SLOW_TIER
def test_no_queries_no_suggestions(world, spark):
    from scholargraph.spark.engine import SparkMapper

    index, pool, model, models, _ = world
    mapper = SparkMapper(spark)
    assert recommend_queries(model, index, [], pool, 5, mapper=mapper) == []
    assert recommend_queries(model, index, [], pool, 5, mapper=IN_PROCESS) == []
    assert service.recommend(None, models, index=index, mapper=mapper) == ([], "")
    # A pool that nobody can be suggested from: every query in the batch gets an empty list.
    queries = paper_queries(index, 3)
    empty = ReviewerPool.from_snapshot(index.snapshot, author_ids=[])
    assert recommend_queries(model, index, queries, empty, 5, mapper=mapper) == [[], [], []]


def test_a_set_of_submissions_is_encoded_once_and_read_back_bit_for_bit(world, tmp_path):
    from scholargraph.graph.snapshot_cache import StateCache

    index, _, _, _, queries_file = world
    plain = [q.text_vector for q in index.read_queries(str(queries_file))]
    remembering = copy.copy(index)
    calls: list[int] = []
    encoder = copy.copy(index.encoder)
    encode = encoder.encode
    encoder.encode = lambda texts, *a, **k: calls.append(len(texts)) or encode(texts, *a, **k)
    remembering.encoder = encoder
    remembering.remember_encodings(StateCache(tmp_path / "vectors", keep=2))
    for _ in range(2):
        again = [q.text_vector for q in remembering.read_queries(str(queries_file))]
        assert all(np.array_equal(a, b) for a, b in zip(plain, again))
    assert len(calls) == 1  # the second read is the first one's vectors
    fewer = remembering.queries_from_records([json.loads(line) for line in queries_file.read_text().splitlines()][:3])
    assert len(calls) == 2 and calls[1] == 3  # another set of texts is another key
    assert fewer
