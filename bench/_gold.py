"""The reviewer gold standard's dev half as the benches read it: the corpus snapshot, the ratings, the resolved
reviewer ids and the rated papers' texts; `judgments(index)` builds the expertise protocol's judgments on an
evidence index over that snapshot."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

GOLD = Path(__file__).resolve().parents[2] / "shared" / "data" / "goldstandard-dev"


@dataclass
class GoldStandard:
    snapshot: object
    ratings: dict
    ids: list
    texts: dict[str, str]

    @classmethod
    def load(cls) -> GoldStandard:
        from scholargraph.graph.ids import IdResolver
        from scholargraph.graph.records import paper_text
        from scholargraph.ingest.offline import snapshot_from_files
        from scholargraph.ranking.reviewers import expertise as ex

        snap = snapshot_from_files("s2", [str(GOLD / "corpus.s2.jsonl")])
        ratings = ex.read_expertise_qrels(str(GOLD / "qrels.txt"))
        ids = IdResolver.for_snapshot(snap).resolve("author", list(ratings)).ids
        with open(GOLD / "queries.jsonl", encoding="utf-8") as fh:
            records = [json.loads(line) for line in fh if line.strip()]
        texts = {str(r["id"]): paper_text(r.get("title"), r.get("abstract")) for r in records}
        return cls(snap, ratings, ids, texts)

    def judgments(self, index):
        from scholargraph.ranking.reviewers import expertise as ex

        return ex.ExpertiseJudgments.build(index, index.read_queries(str(GOLD / "queries.jsonl")), self.ratings,
                                           self.ids, self.texts)
