"""LDA topics on Spark: the vocabulary counted in partitions, the topics trained by Spark MLlib's online variational
Bayes (the algorithm family of gensim's LdaModel), and every paper's and author's topic outputs computed in
partitions and written through the connector.

- **The same vocabulary as in process.** gensim's `Phrases` and `Dictionary` are counts: each partition counts
  its papers' unigrams and phrase candidates (gensim's `_learn_vocab` loop, connector words inside phrases), the
  counts are summed by key and scored with gensim's scorer; the dictionary's document frequencies and first
  appearances are summed the same way, and `filter_extremes` is applied to the summed table. Papers are in id
  order in a snapshot, so "first appearance" is the smallest paper id: the surviving words get the ids an
  in-process fit gives them (tested on NIPS: the same phrases, words and ids). One difference: gensim prunes
  its phrase counts above 40M distinct keys (`max_vocab_size`), which makes them depend on the order of the
  documents; the distributed count does not prune.
- **The topics** are MLlib's `LDA(optimizer="online")` over the bags of words, with gensim's priors (symmetric
  alpha = eta = 1/K, fixed) and its schedule: the same number of document updates (passes x papers), in
  min(passes x ceil(papers / chunksize), MAX_UPDATES) mini-batches sampled from the whole corpus, learning
  rate (1 + t)^-0.51. The learnt topic-word parameters (lambda) become a `TopicModel` (`with_topics`): saved,
  loaded, inferring and versioned in the model registry as one `fit` trained.
- **Inference and the author features** run in partitions: each paper's mixture by `TopicModel.transform`
  (one model load per Python worker; a row depends on its text only, so it is the in-process row), then the
  authors' diversity and authority as joins and aggregations with the citation counts, the in-process
  definitions of graph/topics.py.
"""

from __future__ import annotations

import math
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from scholargraph.errors import UsageError
from scholargraph.graph import text as textlib
from scholargraph.graph.records import paper_text
from scholargraph.graph.topics import TopicModel, in_fit_sample

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from scholargraph.spark.graph import SparkGraph

# Mini-batches of one training: each is a Spark job over the cached bags, so a million papers in gensim's
# chunks of 2,000 (1,000 updates) would be 1,000 jobs; the same document updates come in fewer, larger batches.
MAX_UPDATES = 200
DELIMITER = "_"  # gensim's phrase delimiter (textlib.words never yields it)

THETA_SCHEMA = "id string, theta array<double>, empty boolean, entropy double"


def spark_schedule(n_docs: int, passes: int, chunksize: int) -> tuple[int, float]:
    """(MLlib iterations, mini-batch fraction) for gensim's `passes` over `n_docs` in chunks of `chunksize`:
    the same document updates in at most MAX_UPDATES mini-batches."""
    updates = max(1, passes * math.ceil(max(n_docs, 1) / max(chunksize, 1)))
    iterations = min(updates, MAX_UPDATES)
    return iterations, min(1.0, passes / iterations)


def _texts(batch: pd.DataFrame) -> list[str]:
    return [paper_text(t if isinstance(t, str) else None, a if isinstance(a, str) else None)
            for t, a in zip(batch["title"], batch["abstract"])]


# --- the vocabulary ---------------------------------------------------------------------------------------


def phrase_key_counts(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """mapInPandas: the partition's counts of unigrams and phrase candidates, keyed as gensim's Phrases keys
    them (`Phrases._learn_vocab`: a word not a connector counts, and so does the candidate joining it to the
    previous such word with the connector words between)."""
    counts: Counter[str] = Counter()
    connectors = textlib.CONNECTOR_WORDS
    for batch in batches:
        for text in _texts(batch):
            start, between = None, []
            for word in textlib.words(text):
                if word not in connectors:
                    counts[word] += 1
                    if start is not None:
                        counts[DELIMITER.join([start, *between, word])] += 1
                    start, between = word, []
                elif start is not None:
                    between.append(word)
    if counts:
        yield pd.DataFrame({"key": list(counts), "n": np.fromiter(counts.values(), dtype=np.int64)})


def learn_phrases(papers: DataFrame, model: TopicModel, min_count: int) -> Any:
    """gensim's FrozenPhrases of `papers` (id, title, abstract), from distributed counts: a candidate's score
    is gensim's `original_scorer`, (count - min_count) / (count(a) x count(b)) x distinct keys."""
    from pyspark.sql import functions as F

    counts = (papers.select("title", "abstract").mapInPandas(phrase_key_counts, "key string, n long")
              .groupBy("key").agg(F.sum("n").alias("n")).persist())
    try:
        distinct_keys = counts.count()
        unigrams = counts.where(~F.col("key").contains(DELIMITER))
        first = unigrams.select(F.col("key").alias("a"), F.col("n").alias("na"))
        last = unigrams.select(F.col("key").alias("b"), F.col("n").alias("nb"))
        candidates = (counts.where(F.col("key").contains(DELIMITER))
                      .withColumn("a", F.substring_index("key", DELIMITER, 1))
                      .withColumn("b", F.substring_index("key", DELIMITER, -1))
                      .join(first, "a").join(last, "b"))
        score = (F.col("n") - F.lit(min_count)) / (F.col("na") * F.col("nb")).cast("double") * F.lit(distinct_keys)
        kept = candidates.select("key", score.alias("score")).where(F.col("score") > F.lit(model.phrase_threshold))
        phrasegrams = {row["key"]: float(row["score"]) for row in kept.collect()}
    finally:
        counts.unpersist()
    return model.frozen_phrases(phrasegrams, min_count)


def token_stats(phrases: Any) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """mapInPandas: per token of the partition's papers (TopicModel's tokens: phrases joined, stop words
    dropped) its document frequency, count and smallest paper id (the first paper it appears in)."""
    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        dfs: Counter[str] = Counter()
        cfs: Counter[str] = Counter()
        first: dict[str, str] = {}
        for batch in batches:
            for pid, text in zip(batch["id"], _texts(batch)):
                bag = Counter(TopicModel._tokens(text, phrases))
                for token, n in bag.items():
                    dfs[token] += 1
                    cfs[token] += n
                    if token not in first or pid < first[token]:
                        first[token] = pid
        if dfs:
            tokens = list(dfs)
            yield pd.DataFrame({"token": tokens, "dfs": [dfs[t] for t in tokens], "cfs": [cfs[t] for t in tokens],
                                "first": [first[t] for t in tokens]})

    return run


def learn_dictionary(papers: DataFrame, phrases: Any, no_below: int, no_above: float, keep_n: int | None) -> Any:
    """gensim's Dictionary of `papers` after `filter_extremes(no_below, no_above, keep_n)`, from distributed
    counts: the words it keeps and the ids it gives them (in order of first appearance, ties within a paper by
    the word), their document frequencies and counts."""
    from gensim.corpora import Dictionary
    from pyspark.sql import functions as F

    n_docs = papers.count()
    stats = (papers.select("id", "title", "abstract")
             .mapInPandas(token_stats(phrases), "token string, dfs long, cfs long, first string")
             .groupBy("token").agg(F.sum("dfs").alias("dfs"), F.sum("cfs").alias("cfs"), F.min("first").alias("first"))
             .persist())
    try:
        totals = stats.agg(F.sum("cfs").alias("pos"), F.sum("dfs").alias("nnz")).first()
        kept = stats.where((F.col("dfs") >= no_below) & (F.col("dfs") <= int(no_above * n_docs)))
        if keep_n is not None:
            kept = kept.orderBy(F.col("dfs").desc(), "first", "token").limit(keep_n)
        rows = sorted((r["first"], r["token"], int(r["dfs"]), int(r["cfs"])) for r in kept.collect())
    finally:
        stats.unpersist()
    dictionary = Dictionary()
    dictionary.token2id = {token: i for i, (_, token, _, _) in enumerate(rows)}
    dictionary.dfs = {i: dfs for i, (_, _, dfs, _) in enumerate(rows)}
    dictionary.cfs = {i: cfs for i, (_, _, _, cfs) in enumerate(rows)}
    dictionary.num_docs = n_docs
    dictionary.num_pos = int(totals["pos"] or 0)
    dictionary.num_nnz = int(totals["nnz"] or 0)
    return dictionary


# --- training ---------------------------------------------------------------------------------------------


def _priors(model: TopicModel) -> tuple[list[float], float]:
    """MLlib's docConcentration and topicConcentration for the model's alpha and eta (gensim's meanings)."""
    k = model.num_topics
    if model.alpha == "symmetric":
        alpha = 1.0 / k
    elif isinstance(model.alpha, (int, float)):
        alpha = float(model.alpha)
    else:
        raise UsageError(f"--engine spark trains LDA with a fixed alpha: 'symmetric' or a number, not {model.alpha!r}")
    if model.eta is None or model.eta == "symmetric":
        eta = 1.0 / k
    elif isinstance(model.eta, (int, float)):
        eta = float(model.eta)
    else:
        raise UsageError(f"--engine spark trains LDA with a fixed eta: None or a number, not {model.eta!r}")
    return [alpha] * k, eta


def fit_sample(papers: DataFrame, fraction: float, seed: int) -> DataFrame:
    """The papers a fit on a sample reads: graph/topics.in_fit_sample per partition (the same papers as in
    process)."""
    def keep(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            yield batch[in_fit_sample(batch["id"].tolist(), fraction, seed)]

    return papers.mapInPandas(keep, papers.schema)


def fit_topic_model(spark: SparkSession, papers: DataFrame, model: TopicModel,
                    log: Callable[[str], None] = lambda _: None) -> tuple[TopicModel, dict[str, float]]:
    """`model` (unfitted: its hyperparameters) fitted on `papers` (id, title, abstract) on Spark; returns it
    and the stage timings."""
    from pyspark.ml.clustering import LDA
    from pyspark.ml.linalg import SparseVector, VectorUDT
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    timings: dict[str, float] = {}
    papers = papers.select("id", "title", "abstract").persist()
    try:
        n_docs = papers.count()
        no_below, phrase_min_count, passes, chunksize = model.resolved(n_docs)
        t0 = time.perf_counter()
        phrases = learn_phrases(papers, model, phrase_min_count)
        timings["phrases"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        dictionary = learn_dictionary(papers, phrases, no_below, model.no_above, model.keep_n)
        timings["vocabulary"] = time.perf_counter() - t0
        if len(dictionary) == 0:
            raise ValueError("no word survives the vocabulary filter: too few or too short documents "
                             f"(no_below={no_below}, no_above={model.no_above})")
        log(f"LDA vocabulary (spark): {len(phrases.phrasegrams):,} phrases, {len(dictionary):,} words "
            f"in {timings['phrases'] + timings['vocabulary']:.1f}s")
        size = len(dictionary)
        shared = spark.sparkContext.broadcast((phrases, dictionary))

        def bags(rows):
            frozen, vocab = shared.value
            for row in rows:
                bag = vocab.doc2bow(TopicModel._tokens(paper_text(row["title"], row["abstract"]), frozen))
                if bag:
                    yield row["id"], SparseVector(size, [i for i, _ in bag], [float(c) for _, c in bag])

        schema = StructType([StructField("id", StringType()), StructField("features", VectorUDT())])
        corpus = spark.createDataFrame(papers.rdd.mapPartitions(bags), schema).persist()
        t0 = time.perf_counter()
        n_bags = corpus.count()
        iterations, fraction = spark_schedule(n_docs, passes, chunksize)
        alpha, eta = _priors(model)
        lda = LDA(k=model.num_topics, maxIter=iterations, optimizer="online", subsamplingRate=fraction,
                  learningOffset=1.0, learningDecay=0.51, optimizeDocConcentration=False, docConcentration=alpha,
                  topicConcentration=eta, seed=model.random_state, featuresCol="features")
        fitted = lda.fit(corpus.where(F.lit(n_bags > 0)))
        timings["lda"] = time.perf_counter() - t0
        log(f"LDA fit (spark, MLlib online): {n_bags:,} documents, {iterations} mini-batches of "
            f"{fraction:.1%}, {timings['lda']:.1f}s")
        lam = fitted.topicsMatrix().toArray().T  # online VB: the topic-word parameters themselves (K x V)
        corpus.unpersist()
        shared.unpersist()
    finally:
        papers.unpersist()
    return model.with_topics(lam, dictionary, phrases, n_docs), timings


# --- inference and the author features --------------------------------------------------------------------

_LOADED: dict[str, TopicModel] = {}  # per Python worker: directory -> the model loaded from it


def infer_partition(directory: str) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """mapInPandas: each paper's topic mixture (TopicModel.transform: uniform for a paper without a known word,
    `empty` then) and its entropy (nats), the model loaded once per Python worker."""
    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        model = _LOADED.get(directory)
        if model is None:
            model = _LOADED[directory] = TopicModel.load(directory)
        for batch in batches:
            if batch.empty:
                continue
            theta, empty = model.transform(_texts(batch), return_empty=True)
            safe = np.where(theta > 0, theta, 1.0)
            entropy = -(theta * np.log(safe)).sum(axis=1)
            yield pd.DataFrame({"id": batch["id"].tolist(), "theta": list(theta), "empty": empty,
                                "entropy": entropy})

    return run


def paper_topics(spark: SparkSession, papers: DataFrame, model: TopicModel, work_dir: Path) -> tuple[DataFrame, Path]:
    """(id, theta, empty, entropy) of every paper, and the directory the model was saved to for the executors
    (the caller removes it when the frame has been used)."""
    work_dir.mkdir(parents=True, exist_ok=True)
    saved = Path(tempfile.mkdtemp(dir=work_dir, prefix="topics-"))
    model.save(saved)
    frame = papers.select("id", "title", "abstract").mapInPandas(infer_partition(str(saved)), THETA_SCHEMA)
    return frame, saved


def author_topic_features(g: SparkGraph, theta: DataFrame, citations: DataFrame) -> DataFrame:
    """(id, topic_diversity, topic_authority) of every author, as graph/topics.py defines them: the mean
    entropy of the author's papers' mixtures, and sum_r p(r|a) ln(1 + A_ar) with p(r|a) the mean mixture
    and A_ar = sum over the author's papers of theta_pr x citations_p; 0 for an author without papers."""
    from pyspark.sql import functions as F

    written = g.authorships.select(F.col("author_id"), F.col("paper_id").alias("id")).join(theta, "id")
    diversity = written.groupBy("author_id").agg(F.count(F.lit(1)).alias("n"),
                                                 F.sum("entropy").alias("entropy"))
    shares = (written.join(citations, "id").select("author_id", "n_citation", F.posexplode("theta").alias("k", "t"))
              .groupBy("author_id", "k").agg(F.sum("t").alias("s"),
                                             F.sum(F.col("t") * F.col("n_citation")).alias("a")))
    authority = (shares.join(diversity.select("author_id", "n"), "author_id")
                 .groupBy("author_id").agg(F.sum(F.col("s") / F.col("n") * F.log1p("a")).alias("authority")))
    per_author = diversity.join(authority, "author_id").select(
        F.col("author_id").alias("id"), (F.col("entropy") / F.col("n")).alias("topic_diversity"),
        F.col("authority").alias("topic_authority"))
    return (g.authors.join(per_author, "id", "left")
            .select("id", F.coalesce("topic_diversity", F.lit(0.0)).alias("topic_diversity"),
                    F.coalesce("topic_authority", F.lit(0.0)).alias("topic_authority")))


def topic_edges(theta: DataFrame, threshold: float) -> DataFrame:
    """HAS_TOPIC rows (src paper, dst topic:k, weight) where a paper's share is at least `threshold` (papers
    with a known word only), as graph/topics.paper_topic_edges."""
    from pyspark.sql import functions as F

    return (theta.where(~F.col("empty")).select("id", F.posexplode("theta").alias("k", "weight"))
            .where(F.col("weight") >= F.lit(threshold))
            .select(F.col("id").alias("src"), F.concat(F.lit("topic:"), F.col("k").cast("string")).alias("dst"),
                    "weight"))


def remove_saved(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
