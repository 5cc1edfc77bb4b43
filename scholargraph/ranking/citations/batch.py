"""Citation recommendation batch scoring as a partition function (scholargraph.ranking.batch): one input row per
draft, one output row per recommended paper; the served recommender (the trained Citeomatic model or the
text-only ranker) is the payload, broadcast once by a Spark mapper."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from scholargraph.ranking.batch import IN_PROCESS, SOURCE_ROW, PartitionMapper
from scholargraph.ranking.citations.recommender import CitationRecommender, Query, Recommendation
from scholargraph.ranking.citations.textonly import TextOnlyRecommender

QUERY = "query"  # the draft's position among the batch's, in its input row and in its recommendations' rows
SCHEMA = "query long, paper_index long, score double, explanation string"
"""The output of `recommend_partition` (Spark DDL), besides SOURCE_ROW: one row per recommended paper, best
first within a draft; `explanation` is the JSON list of the terms it shares with the draft."""
_DTYPES = {QUERY: "int64", "paper_index": "int64", "score": "float64", "explanation": object, SOURCE_ROW: "int64"}


@dataclass
class CitationScoring:
    """What every partition reads: the served recommender and how many papers a draft gets."""

    recommender: CitationRecommender | TextOnlyRecommender
    k: int


def draft_rows(queries: Sequence[Query], exclude: Sequence[Sequence[str]]) -> pd.DataFrame:
    """The partition function's input: one row per draft, QUERY and the draft as JSON (title, abstract and
    year, each possibly null, and the ids excluded from its results, `exclude[i]` in its order)."""
    drafts = [json.dumps({"title": q.title, "abstract": q.abstract, "year": None if q.year is None else int(q.year),
                          "exclude": list(ex)}) for q, ex in zip(queries, exclude, strict=True)]
    return pd.DataFrame({QUERY: pd.Series(range(len(queries)), dtype="int64"),
                         "draft": pd.Series(drafts, dtype=object)})


def recommend_partition(payload: CitationScoring, rows: pd.DataFrame) -> pd.DataFrame:
    """`recommender.recommend` of each row's draft: its top k, one output row each (a draft scores alone, so
    a partition gives the recommendations the whole batch would)."""
    cols: dict[str, list] = {c: [] for c in _DTYPES}
    for position, (query, draft) in enumerate(zip(rows[QUERY].tolist(), rows["draft"].tolist())):
        d = json.loads(draft)
        for r in payload.recommender.recommend(d["title"], d["abstract"], d["year"], exclude_ids=tuple(d["exclude"]),
                                               k=payload.k):
            for c, v in ((QUERY, query), ("paper_index", r.paper_index), ("score", r.score),
                         ("explanation", json.dumps(list(r.explanation))), (SOURCE_ROW, position)):
                cols[c].append(v)
    return pd.DataFrame({c: pd.Series(v, dtype=_DTYPES[c]) for c, v in cols.items()})


def recommend_drafts(recommender: CitationRecommender | TextOnlyRecommender, queries: Sequence[Query],
                     exclude: Sequence[Sequence[str]], k: int,
                     mapper: PartitionMapper = IN_PROCESS) -> list[list[Recommendation]]:
    """The recommendations of each draft (`recommender.recommend(q.title, q.abstract, q.year,
    exclude_ids=exclude[i], k=k)`), through `mapper`."""
    out = mapper.map_partitions(recommend_partition, CitationScoring(recommender, k), draft_rows(queries, exclude),
                                SCHEMA)
    results: list[list[Recommendation]] = [[] for _ in queries]
    for query, paper, score, explanation in zip(out[QUERY].tolist(), out["paper_index"].tolist(),
                                                out["score"].tolist(), out["explanation"].tolist()):
        results[int(query)].append(Recommendation(int(paper), float(score), tuple(json.loads(explanation))))
    return results


__all__ = ["QUERY", "SCHEMA", "CitationScoring", "draft_rows", "recommend_drafts", "recommend_partition"]
