"""The citation service loads the current model from its registry record, old (parts named) or new (a path)."""

from __future__ import annotations

from scholargraph.ranking.citations.nnrank import NNRank
from scholargraph.ranking.citations.nnselect import NNSelect
from scholargraph.ranking.citations.recommender import CitationRecommender, time_split_queries
from scholargraph.ranking.citations.service import load_recommender, registry
from tests.unit.ranking.citations.test_recommender import SMALL_RANK, SMALL_SELECT


def test_current_model_loads_from_a_path_or_from_the_parts_an_older_record_names(tmp_path, world):
    train = time_split_queries(world, 2006).train
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK), fusion=10).fit(train)
    reg = registry(tmp_path)
    version, base = reg.claim()
    rec.save(base)
    draft = (world.titles[-1], world.abstracts[-1], None, (world.paper_ids[-1],))
    expected = [r.paper_index for r in rec.recommend(*draft)]
    reg.publish({"version": version, "path": str(base)})
    loaded, meta = load_recommender(tmp_path, train)
    assert meta["version"] == version and [r.paper_index for r in loaded.recommend(*draft)] == expected
    reg.publish({"version": version, "selector": str(base / "encoder" / "nnselect"), "ranker": str(base / "nnrank"),
                 "fusion": {"lexical": "bm25", "rrf_k": 10}})
    loaded, _ = load_recommender(tmp_path, train)
    assert loaded.name == "citeomatic+bm25" and [r.paper_index for r in loaded.recommend(*draft)] == expected
