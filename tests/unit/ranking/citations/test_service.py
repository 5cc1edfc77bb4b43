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


def test_bm25_is_indexed_once_per_texts_and_read_back_exactly(tmp_path, world, monkeypatch):
    import dataclasses

    import numpy as np

    from scholargraph.ranking.citations.bm25 import BM25
    from scholargraph.ranking.citations.service import cached_bm25

    fits = []
    real = BM25.fit
    monkeypatch.setattr(BM25, "fit", lambda self, *a, **kw: fits.append(1) or real(self, *a, **kw))
    built = cached_bm25(tmp_path, world)
    loaded = cached_bm25(tmp_path, world)
    assert len(fits) == 1 and loaded is not built
    for title, abstract in ((world.titles[3], world.abstracts[3]), ("an unseen word", None)):
        np.testing.assert_array_equal(built.scores(title, abstract), loaded.scores(title, abstract))
    assert built.recommend(world.titles[3], world.abstracts[3], k=10) == \
        loaded.recommend(world.titles[3], world.abstracts[3], k=10)
    assert loaded.vocabulary_.words == built.vocabulary_.words
    np.testing.assert_array_equal(loaded.vocabulary_.idf, built.vocabulary_.idf)
    np.testing.assert_array_equal(loaded.has_text_, built.has_text_)

    abstracts = list(world.abstracts)
    abstracts[0] = "a changed abstract"
    cached_bm25(tmp_path, dataclasses.replace(world, abstracts=abstracts))
    assert len(fits) == 2  # other texts: indexed again
