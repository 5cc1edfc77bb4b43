"""RECO-Rank batch scoring as a partition function (scholargraph.ranking.batch): one input row per submission
(its Query in plain columns), one output row per suggestion; the trained model, the evidence index and the
reviewer pool are the payload, broadcast once by a Spark mapper."""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from scholargraph.conference.conflicts import ConflictChecker
from scholargraph.conference.submissions import Query, ReviewerPool
from scholargraph.ranking.batch import IN_PROCESS, SOURCE_ROW, PartitionMapper
from scholargraph.ranking.reviewers.evidence import EvidenceIndex
from scholargraph.ranking.reviewers.explain import EvidencePaper, Suggestion
from scholargraph.ranking.reviewers.reco_rank import RecoRank

QUERY = "query"  # the submission's position among the batch's, in its input row and in its suggestions' rows
_ARRAYS = ("text_vector", "topic_vector", "references", "citation_vector", "lexical_data", "lexical_indices")
SCHEMA = ("query long, reviewer string, name string, rank long, score double, main double, compensation double, "
          "gate double, reliability double, no_history boolean, other_main double, other_compensation double, "
          "evidence string")
"""The output of `recommend_partition` (Spark DDL), besides SOURCE_ROW: one row per suggestion, best first
within a submission; `evidence` is the JSON list of the suggestion's evidence papers."""
_DTYPES = {"query": "int64", "reviewer": object, "name": object, "rank": "int64", "score": "float64",
           "main": "float64", "compensation": "float64", "gate": "float64", "reliability": "float64",
           "no_history": "bool", "other_main": "float64", "other_compensation": "float64", "evidence": object,
           SOURCE_ROW: "int64"}


@dataclass
class ReviewerScoring:
    """What every partition reads: the model, the evidence, who may be suggested, how many, which conflicts
    rule a reviewer out (recommend's `coi`)."""

    model: RecoRank
    index: EvidenceIndex
    pool: ReviewerPool
    k: int
    coi: ConflictChecker | bool = True


# --- queries as rows --------------------------------------------------------------------------------


def _pack(array) -> bytes:
    """An array as .npy bytes (dtype and shape kept, bit for bit); b"" for None (a .npy is never empty)."""
    if array is None:
        return b""
    buf = io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    return buf.getvalue()


def _unpack(data) -> np.ndarray | None:
    return None if data is None or len(data) == 0 else np.load(io.BytesIO(bytes(data)), allow_pickle=False)


def _optional_int(value) -> int | None:
    return None if value is None else int(value)


def query_rows(queries: Sequence[Query]) -> pd.DataFrame:
    """The partition function's input: one row per query with what rebuilds it (`row_query`): QUERY, its id,
    its scalars and names as JSON (`meta`), and each array as .npy bytes (the lexical row as its data and
    column indices, `lexical_dim` its width, -1 without one)."""
    cols: dict[str, list] = {QUERY: list(range(len(queries))), "id": [], "meta": [], "lexical_dim": []}
    cols.update({name: [] for name in _ARRAYS})
    for q in queries:
        lex = q.lexical_vector.tocsr() if q.lexical_vector is not None else None
        cols["id"].append(q.id)
        cols["meta"].append(json.dumps({"year": _optional_int(q.year),
                                        "submission_year": _optional_int(q.submission_year),
                                        "paper_index": _optional_int(q.paper_index),
                                        "author_names": list(q.author_names), "author_ids": list(q.author_ids),
                                        "author_emails": list(q.author_emails),
                                        "author_affiliations": list(q.author_affiliations),
                                        "title": q.title}))
        cols["lexical_dim"].append(-1 if lex is None else int(lex.shape[1]))
        for name, value in (("text_vector", q.text_vector), ("topic_vector", q.topic_vector),
                            ("references", q.references), ("citation_vector", q.citation_vector),
                            ("lexical_data", None if lex is None else lex.data),
                            ("lexical_indices", None if lex is None else lex.indices)):
            cols[name].append(_pack(value))
    frame = pd.DataFrame({name: pd.Series(values, dtype=object) for name, values in cols.items()})
    return frame.astype({QUERY: "int64", "lexical_dim": "int64"})


def row_query(row) -> Query:
    """The Query of one `query_rows` row."""
    meta = json.loads(row["meta"])
    lexical = None
    if int(row["lexical_dim"]) >= 0:
        data, indices = _unpack(row["lexical_data"]), _unpack(row["lexical_indices"])
        assert data is not None and indices is not None, "a lexical row has its data and indices"
        lexical = sp.csr_matrix((data, indices, np.array([0, len(data)], dtype=indices.dtype)),
                                shape=(1, int(row["lexical_dim"])))
    references = _unpack(row["references"])
    return Query(id=str(row["id"]), text_vector=_unpack(row["text_vector"]), topic_vector=_unpack(row["topic_vector"]),
                 references=references if references is not None else np.zeros(0, dtype=np.int64),
                 year=meta["year"], submission_year=meta.get("submission_year"),
                 author_names=tuple(meta["author_names"]), author_ids=tuple(meta["author_ids"]),
                 author_emails=tuple(meta.get("author_emails", ())),
                 author_affiliations=tuple(meta.get("author_affiliations", ())),
                 paper_index=meta["paper_index"], citation_vector=_unpack(row["citation_vector"]), title=meta["title"],
                 lexical_vector=lexical)


# --- suggestions as rows ----------------------------------------------------------------------------


def _frame(records: list[dict]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([r[c] for r in records], dtype=dt) for c, dt in _DTYPES.items()})


def recommend_partition(payload: ReviewerScoring, rows: pd.DataFrame) -> pd.DataFrame:
    """`model.recommend` of each row's query against the payload's pool: its top k, one output row each (a
    query scores alone, so a partition gives the suggestions the whole batch would)."""
    records = []
    for position, row in enumerate(rows.to_dict("records")):
        for s in payload.model.recommend(payload.index, row_query(row), payload.pool, k=payload.k, coi=payload.coi):
            records.append({"query": int(row[QUERY]), "reviewer": s.reviewer_id, "name": s.name, "rank": s.rank,
                            "score": s.score, "main": s.main, "compensation": s.compensation, "gate": s.gate,
                            "reliability": s.reliability, "no_history": s.no_history, "other_main": s.other_main,
                            "other_compensation": s.other_compensation,
                            "evidence": json.dumps([asdict(p) for p in s.papers]), SOURCE_ROW: position})
    return _frame(records)


def row_suggestion(row) -> Suggestion:
    """The Suggestion of one output row (null strings come back from pandas as NaN)."""
    name = row["name"]
    return Suggestion(reviewer_id=str(row["reviewer"]), name=name if isinstance(name, str) else None,
                      rank=int(row["rank"]), score=float(row["score"]), main=float(row["main"]),
                      compensation=float(row["compensation"]), gate=float(row["gate"]),
                      reliability=float(row["reliability"]), no_history=bool(row["no_history"]),
                      papers=[EvidencePaper(**p) for p in json.loads(row["evidence"])],
                      other_main=float(row["other_main"]), other_compensation=float(row["other_compensation"]))


def recommend_queries(model: RecoRank, index: EvidenceIndex, queries: Sequence[Query], pool: ReviewerPool, k: int,
                      coi: ConflictChecker | bool = True,
                      mapper: PartitionMapper = IN_PROCESS) -> list[list[Suggestion]]:
    """The suggestions of each query (`model.recommend(index, q, pool, k=k, coi=coi)`), through `mapper`.
    The payload carries the index without its text encoder and topic model: they turn submission texts into
    vectors, which the queries already hold."""
    shared = copy.copy(index)
    shared.encoder = shared.topic_model = None
    out = mapper.map_partitions(recommend_partition, ReviewerScoring(model, shared, pool, k, coi),
                                query_rows(queries), SCHEMA)
    results: list[list[Suggestion]] = [[] for _ in queries]
    for row in out.to_dict("records"):
        results[int(row[QUERY])].append(row_suggestion(row))
    return results


__all__ = ["QUERY", "SCHEMA", "ReviewerScoring", "query_rows", "recommend_partition", "recommend_queries",
           "row_query", "row_suggestion"]
