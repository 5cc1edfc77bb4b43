"""IIRL batch scoring as a partition function (scholargraph.ranking.batch): raw scores and percentiles per
(author, topic) row, run in process or in Spark partitions; the ranks, global per topic, stay in the driver."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scholargraph.ranking.batch import IN_PROCESS, PartitionMapper
from scholargraph.ranking.rising_stars.features import RisingStarData
from scholargraph.ranking.rising_stars.iirl import ALL, IIRL

AUTHOR = "author"
TOPIC = "topic"  # ALL or a topic key ("0", "1", ...)
SCHEMA = "score double, percentile double"
"""The output of `score_partition` (Spark DDL): output row i scores input row i."""


def feature_columns(n_features: int) -> list[str]:
    """The input rows' feature columns: one double per feature (ln(f + 1)), by position, so that 18 or 20
    features go through Spark and Arrow as plain doubles, bit for bit."""
    return [f"x{k}" for k in range(n_features)]


def score_partition(model: IIRL, rows: pd.DataFrame) -> pd.DataFrame:
    """Score and percentile of each row by its topic's model. Both are row-local: the score is ω·f of the
    row's features, the percentile its place in the topic's stored training distribution (`quantiles_`),
    so a partition gives the same numbers as the whole batch. Rows of one topic are scored together, in
    their order, as one C-contiguous matrix: given every row, that is exactly the call `model.score(X[members],
    topic)` of the single-process scoring."""
    score = np.empty(len(rows), dtype=np.float64)
    percentile = np.empty(len(rows), dtype=np.float64)
    if len(rows):
        X = rows[feature_columns(len(model.feature_names_))].to_numpy(dtype=np.float64)
        topics = rows[TOPIC].to_numpy()
        for topic in pd.unique(topics):
            at = np.flatnonzero(topics == topic)
            s = model.score(np.ascontiguousarray(X[at]), str(topic))
            score[at] = s
            percentile[at] = model.percentile(s, str(topic))
    return pd.DataFrame({"score": score, "percentile": percentile})


@dataclass
class TopicScores:
    """One topic's authors (rows of the dataset, ascending), their scores and percentiles."""

    topic: str
    members: np.ndarray
    scores: np.ndarray
    percentiles: np.ndarray


@dataclass
class BatchScores:
    """The model applied to a dataset: the `all` model's score of every author, then each non-empty topic
    group (topic_groups(top_m), by topic number)."""

    overall: np.ndarray
    topics: list[TopicScores]


def _groups(data: RisingStarData, top_m: int) -> list[tuple[str, np.ndarray]]:
    groups = sorted(data.topic_groups(top_m).items(), key=lambda kv: int(kv[0]))
    return [(ALL, np.arange(len(data), dtype=np.int64))] + [(t, np.asarray(m, dtype=np.int64))
                                                              for t, m in groups if len(m)]


def scoring_rows(data: RisingStarData, top_m: int = 3) -> pd.DataFrame:
    """The partition function's input: one row per (author, ALL) in author order, then one per (author,
    topic) of each topic group; columns AUTHOR, TOPIC and the features (`feature_columns`)."""
    groups = _groups(data, top_m)
    index = np.concatenate([m for _, m in groups])
    X = data.X
    rows = pd.DataFrame(X[index], columns=feature_columns(X.shape[1]))
    rows.insert(0, TOPIC, np.repeat(np.array([t for t, _ in groups], dtype=object), [len(m) for _, m in groups]))
    rows.insert(0, AUTHOR, np.asarray(data.author_ids, dtype=object)[index] if len(index) else [])
    return rows


def score_dataset(model: IIRL, data: RisingStarData, mapper: PartitionMapper = IN_PROCESS,
                  top_m: int = 3) -> BatchScores:
    """Every author's `all` score and each topic group's scores and percentiles, through `mapper` (the
    trained model is the payload, broadcast once by a Spark mapper)."""
    groups = _groups(data, top_m)
    out = mapper.map_partitions(score_partition, model, scoring_rows(data, top_m), SCHEMA)
    score = out["score"].to_numpy(dtype=np.float64)
    percentile = out["percentile"].to_numpy(dtype=np.float64)
    bounds = np.cumsum([0] + [len(m) for _, m in groups])
    topics = [TopicScores(t, m, score[a:b], percentile[a:b])
              for (t, m), a, b in zip(groups[1:], bounds[1:-1], bounds[2:])]
    return BatchScores(score[:bounds[1]], topics)
