"""LDA topics on Spark (spark/topics.py) with local[2], on real abstracts: the vocabulary is gensim's, the
topics' quality is within a stated tolerance of an in-process gensim fit on the same papers, and the
partitioned inference is the model's own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scholargraph.graph.records import paper_text
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.topics import TopicModel, held_out_perplexity, umass_coherence
from scholargraph.ingest.loader import ingest
from tests.conftest import SPARK_SLOW_TIER, require_shared_data

# Spark's held-out perplexity over gensim's, same papers and seed: measured 1.038, 0.989, 1.021 on hep-th for
# seeds 0-2 (bench/spark_topics.py); gensim's own seed-to-seed spread there is 232-242 (4 %).
PERPLEXITY_TOLERANCE = 1.10
UMASS_TOLERANCE = 0.3  # UMass of Spark's topics at most this much below gensim's (measured: 0.07 below to 0.1 above)

pytestmark = SPARK_SLOW_TIER


def papers_of(path: str, tmp_path) -> pd.DataFrame:
    from scholargraph.graph.memory_store import InMemoryStore

    store = InMemoryStore()
    ingest(store, "aminer", [path], quarantine_path=tmp_path / "q", checkpoint_dir=tmp_path / "c", quiet=True)
    s = GraphSnapshot.from_store(store, with_text=True)
    return pd.DataFrame({"id": s.paper_ids, "title": s.titles, "abstract": s.abstracts})  # id order


@pytest.fixture(scope="module")
def nips(tmp_path_factory) -> pd.DataFrame:
    return papers_of(str(require_shared_data("nips", "nips-1987-1993.aminer.jsonl")), tmp_path_factory.mktemp("n"))


def texts(frame: pd.DataFrame) -> list[str]:
    return [paper_text(t, a) for t, a in zip(frame["title"], frame["abstract"])]


def test_the_vocabulary_is_gensims(spark, nips):
    from scholargraph.spark import topics as st

    ours, _ = st.fit_topic_model(spark, spark.createDataFrame(nips), TopicModel(num_topics=10))
    ref = TopicModel(num_topics=10).fit(texts(nips))
    assert ours.phrases_.phrasegrams == ref.phrases_.phrasegrams and len(ref.phrases_.phrasegrams) > 100
    assert ours.dictionary_.token2id == ref.dictionary_.token2id
    assert (ours.dictionary_.dfs, ours.dictionary_.cfs) == (ref.dictionary_.dfs, ref.dictionary_.cfs)
    assert (ours.dictionary_.num_docs, ours.dictionary_.num_pos, ours.dictionary_.num_nnz) == (
        ref.dictionary_.num_docs, ref.dictionary_.num_pos, ref.dictionary_.num_nnz)
    assert (ours.no_below_, ours.passes_, ours.chunksize_) == (ref.no_below_, ref.passes_, ref.chunksize_)


def test_a_fit_on_a_sample_reads_the_in_process_sample(spark, nips):
    from scholargraph.graph.topics import in_fit_sample
    from scholargraph.spark import topics as st

    sample = st.fit_sample(spark.createDataFrame(nips).repartition(3), 0.3, seed=5)
    keep = in_fit_sample(nips["id"].tolist(), 0.3, seed=5)
    assert sorted(r["id"] for r in sample.select("id").collect()) == sorted(nips["id"][keep])
    ours, _ = st.fit_topic_model(spark, sample, TopicModel(num_topics=10))
    ref = TopicModel(num_topics=10).fit(texts(nips[keep]))
    assert ours.n_docs_ == ref.n_docs_ == int(keep.sum())
    assert ours.dictionary_.token2id == ref.dictionary_.token2id


def test_partitioned_inference_is_the_models(spark, nips, tmp_path):
    from scholargraph.spark import topics as st

    model = TopicModel(num_topics=8).fit(texts(nips))
    frame, saved = st.paper_topics(spark, spark.createDataFrame(nips).repartition(3), model, tmp_path)
    rows = {r["id"]: r for r in frame.collect()}
    st.remove_saved(saved)
    theta, empty = model.transform(texts(nips), return_empty=True)
    got = np.array([rows[i]["theta"] for i in nips["id"]])
    np.testing.assert_allclose(got, theta, rtol=0, atol=1e-12)
    assert [rows[i]["empty"] for i in nips["id"]] == empty.tolist()
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-6)


def test_topic_quality_is_within_tolerance_of_gensim_on_hepth(spark, tmp_path):
    from scholargraph.spark import topics as st

    papers = papers_of(str(require_shared_data("hepth", "hepth-1992-2000.aminer.jsonl")), tmp_path)
    held = np.random.default_rng(0).random(len(papers)) < 0.1
    train, test = papers[~held], texts(papers[held])
    ref = TopicModel(num_topics=10, random_state=0).fit(texts(train))
    ours, stages = st.fit_topic_model(spark, spark.createDataFrame(train), TopicModel(num_topics=10, random_state=0))
    assert set(stages) == {"phrases", "vocabulary", "lda"}
    ratio = held_out_perplexity(ours, test) / held_out_perplexity(ref, test)
    assert ratio <= PERPLEXITY_TOLERANCE, ratio
    assert umass_coherence(ours, texts(train)) >= umass_coherence(ref, texts(train)) - UMASS_TOLERANCE
    theta = ours.transform(test)
    assert theta.shape == (len(test), 10) and (theta >= 0).all()
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, atol=1e-6)
    # A model that was not trained (its random start) is far worse: the measure tells topics apart.
    start = np.random.default_rng(1).gamma(100, 0.01, (10, len(ours.dictionary_)))
    untrained = TopicModel(num_topics=10).with_topics(start, ours.dictionary_, ours.phrases_, len(train))
    assert held_out_perplexity(untrained, test) > 1.5 * held_out_perplexity(ref, test)
