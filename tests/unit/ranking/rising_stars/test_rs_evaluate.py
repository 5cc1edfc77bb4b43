"""The evaluation harness on a planted population: tables, ablations, transfer, plot."""

import numpy as np
import pytest

from scholargraph.ranking.rising_stars.baselines import LambdaRankGBM
from scholargraph.ranking.rising_stars.evaluate import (
    Method,
    default_baselines,
    evaluate,
    format_report,
    split_authors,
)
from scholargraph.ranking.rising_stars.features import FEATURE_NAMES, RisingStarData

FAST = {"max_epochs": 10, "pairs_per_epoch": 5000, "l2_grid": ()}


def planted(n=600, topics=True, seed=0):
    rng = np.random.default_rng(seed)
    raw = np.expm1(np.abs(rng.normal(size=(n, len(FEATURE_NAMES)))) * 1.5)
    X = np.log1p(raw)
    signal = X[:, FEATURE_NAMES.index("n_papers")] + X[:, FEATURE_NAMES.index("venue_avg_citations")]
    y = np.floor(np.exp(signal + rng.normal(scale=0.3, size=n)))
    dist = rng.dirichlet(np.full(4, 0.3), size=n) if topics else None
    return RisingStarData(author_ids=[f"a{i}" for i in range(n)], raw=raw, as_of=2020, window=5, labels=y,
                          horizon=3, author_topics=dist)


def fast_methods():
    return [m for m in default_baselines(lightgbm=False)] + [
        Method("LightGBM", lambda k: LambdaRankGBM(n_estimators=20, group_size=50))]


def test_split_is_a_partition():
    train, test = split_authors(100, 0.3, 0)
    assert len(test) == 30 and len(np.intersect1d(train, test)) == 0 and len(np.union1d(train, test)) == 100


def test_evaluate_per_topic_with_every_section(tmp_path):
    data = planted()
    res = evaluate(data, repeats=2, iirl_params=FAST, methods=fast_methods(), curve_ks=(2, 5, 10, 20),
                   plot_path=str(tmp_path / "pre.png"))
    main = res["main"]
    assert list(main) == ["IIRL", "IIRL-all", "Base-1", "Base-2", "NaiveBayes", "LightGBM"]
    assert res["setup"]["tasks"] == ["0", "1", "2", "3"] and res["setup"]["young_authors"] == 600
    for row in main.values():
        assert set(row["mean"]) >= {5, 10, 20} and all(0 <= v <= 1 for v in row["mean"].values())
        assert set(row["per_topic"]) == {"0", "1", "2", "3"}
    # The truth is a mix of two features that neither baseline ranks by: IIRL must find it.
    assert main["IIRL"]["mean"][10] > main["Base-1"]["mean"][10] + 0.2
    assert main["IIRL"]["mean"][10] > main["Base-2"]["mean"][10] + 0.2
    abl = res["ablation"]
    assert abl["all features"] == pytest.approx({k: main["IIRL"]["mean"][k] for k in (5, 10, 20)})
    assert abl["only venue"][10] > abl["only temporal"][10] + 0.1  # half the signal vs none of it
    tr = res["transfer"]
    assert set(tr["matrix"]) == {"0", "1", "2", "3"} and 0 <= tr["cross_topic_mean"] <= 1
    assert (tmp_path / "pre.png").read_bytes()[:4] == b"\x89PNG"
    text = format_report(res)
    for needle in ("Pre@10%", "NaiveBayes", "LightGBM", "ablation", "Cross-topic transfer", "per topic",
                   "IIRL minus", "600"):
        assert needle in text


def test_without_topics_there_is_one_task():
    res = evaluate(planted(300, topics=False), iirl_params=FAST, methods=default_baselines(lightgbm=False),
                   ablation=False)
    assert res["setup"]["tasks"] == ["all"] and "transfer" not in res and "ablation" not in res
    assert "Pre@5%" in format_report(res)


def test_labels_are_required():
    data = planted(50)
    data.labels = None
    with pytest.raises(ValueError, match="labels"):
        evaluate(data)


def _with_external(data, seed=0):
    """The planted population with the two external columns appended (the second one is the truth's signal)."""
    from scholargraph.ranking.rising_stars.features import EXTENDED_FEATURE_NAMES

    rng = np.random.default_rng(seed)
    extra = np.column_stack([rng.exponential(size=len(data)), np.expm1(np.log1p(data.labels))])
    return RisingStarData(author_ids=data.author_ids, raw=np.hstack([data.raw, extra]), as_of=data.as_of,
                          window=data.window, labels=data.labels, horizon=data.horizon,
                          author_topics=data.author_topics, feature_names=EXTENDED_FEATURE_NAMES)


def test_forward_protocol_trains_on_one_cohort_and_ranks_another():
    from scholargraph.ranking.rising_stars.evaluate import evaluate_forward, format_forward_report

    train, test = planted(500, seed=0), planted(400, seed=1)
    oracle = np.asarray(test.labels, dtype=float)
    res = evaluate_forward(train, test, seeds=(0, 1), iirl_params=FAST, lightgbm=False, bootstrap=50,
                           references={"truth": oracle})
    main = res["main"]
    assert list(main)[:5] == ["IIRL", "IIRL-all", "Base-1", "Base-2", "NaiveBayes"] and "truth" in main
    assert main["IIRL"]["runs"] == 2 and main["Base-2"]["runs"] == 1  # deterministic baselines run once
    assert set(main["IIRL"]["per_topic"]) == {"0", "1", "2", "3"}
    assert main["truth"]["overall"][10] == 1.0
    assert main["IIRL"]["overall"][10] > main["Base-2"]["overall"][10] + 0.2  # the planted mix is learnt
    b = res["bootstrap"]
    assert b["low"][10] <= b["mean"][10] <= b["high"][10] and b["ahead"][10] > 0.9
    assert {"all features", "only venue", "without temporal"} <= set(res["ablation"])
    text = format_forward_report(res)
    for needle in ("Trained as of 2020", "(truth)", "IIRL minus", "Bootstrap", "ablation", "Pre@10% per topic"):
        assert needle in text


def test_forward_protocol_adds_base2_without_self_citations_when_the_column_is_there():
    from scholargraph.ranking.rising_stars.evaluate import evaluate_forward

    train, test = _with_external(planted(300, seed=0)), _with_external(planted(300, seed=1))
    res = evaluate_forward(train, test, iirl_params=FAST, lightgbm=False, ablation=False, bootstrap=0)
    assert res["main"]["Base-2-ext"]["overall"][10] == 1.0  # the column is the label here
    assert "ablation" not in res and "bootstrap" not in res
    res = evaluate_forward(train, test, iirl_params=FAST, lightgbm=False, bootstrap=0)
    assert {"only external", "without external"} <= set(res["ablation"])


def test_forward_protocol_refuses_mismatched_cohorts():
    from scholargraph.ranking.rising_stars.evaluate import evaluate_forward

    with pytest.raises(ValueError, match="same features"):
        evaluate_forward(planted(100), _with_external(planted(100)), iirl_params=FAST, lightgbm=False)
    with pytest.raises(ValueError, match="topics"):
        evaluate_forward(planted(100), planted(100, topics=False), iirl_params=FAST, lightgbm=False)


def test_label_noise_ceiling_is_perfect_without_noise_and_lower_with_small_counts():
    from scholargraph.ranking.rising_stars.evaluate import label_noise_ceiling

    big = np.arange(1, 201, dtype=float) * 1000
    assert label_noise_ceiling(big, (10,), draws=5)[10] == 1.0
    small = np.random.default_rng(0).poisson(2.0, size=200).astype(float)
    assert label_noise_ceiling(small, (10,), draws=20)[10] < 0.9
