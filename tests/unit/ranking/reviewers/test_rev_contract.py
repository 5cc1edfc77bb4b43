"""RECO-Rank keeps the model contract (Ranker, params, save -> Path, load), and a model saved by the
earlier code still loads."""

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from scholargraph.conference.submissions import ReviewerPool
from scholargraph.ranking.contract import Ranker
from scholargraph.ranking.reviewers.evidence import QUERY_FEATURES
from scholargraph.ranking.reviewers.reco_rank import MODEL_NAME, MODEL_VERSION, RecoRank
from scholargraph.ranking.reviewers.reco_rank_net import RecoRankConfig

from .conftest import submission


def _fitted(world) -> RecoRank:
    pool = ReviewerPool.from_snapshot(world.snapshot, min_papers=1)
    return RecoRank(steps=10, self_supervised=10, reviewer_centric=5, recent_years=30, hard_negatives=3,
                    random_negatives=2).fit(world, pool)


def test_reco_rank_is_a_ranker_with_one_params_dataclass(world):
    model = _fitted(world)
    assert isinstance(model, Ranker)
    assert isinstance(model.params, RecoRankConfig)
    assert model.params.steps == 10 and model.params.self_supervised == 10


def test_save_returns_the_directory_and_load_scores_the_same(tmp_path, world):
    model = _fitted(world)
    out = model.save(tmp_path / "m")
    assert isinstance(out, Path) and out == tmp_path / "m"
    assert {p.name for p in out.iterdir()} == {"config.json", "state.pt"}
    saved = json.loads((out / "config.json").read_text())
    assert (saved["model"], saved["version"]) == (MODEL_NAME, MODEL_VERSION)
    assert saved["config"] == asdict(model.params)
    loaded = RecoRank.load(out)
    assert loaded.params == model.params and loaded.fit_info_ == model.fit_info_
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["E", "X", "J", "O", "N"])
    q = submission(world)
    np.testing.assert_array_equal(loaded.score(world, q, pool), model.score(world, q, pool))


def test_a_model_saved_by_the_earlier_code_loads(tmp_path, world):
    # The earlier save: json.dump of these keys (no trailing newline), the weights in state.pt.
    model = _fitted(world)
    old = tmp_path / "old"
    old.mkdir()
    meta = {"model": MODEL_NAME, "version": MODEL_VERSION, "config": asdict(model.params),
            "query_features": list(QUERY_FEATURES),
            "fit_info": model.fit_info_}
    with open(old / "config.json", "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=2)
    torch.save(model.net_.state_dict(), old / "state.pt")
    loaded = RecoRank.load(old)
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["E", "X", "J"])
    q = submission(world)
    np.testing.assert_array_equal(loaded.score(world, q, pool), model.score(world, q, pool))
