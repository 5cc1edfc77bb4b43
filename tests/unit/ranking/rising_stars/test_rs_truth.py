"""Features and labels against the synthetic world's ground truth, and on real NIPS data."""

import csv

import numpy as np
import pytest

from scholargraph.ingest.offline import snapshot_from_files
from scholargraph.ranking.rising_stars.features import FEATURE_NAMES, build_dataset
from scholargraph.synth import SynthParams, generate
from tests.conftest import require_shared_data


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("rs-world")
    generate(SynthParams(papers=3000, seed=3, as_of=2019, horizon=4, window=4, reviewer_queries=0,
                         citation_queries=0), out)
    return out


def test_population_and_labels_are_the_generators(world):
    s = snapshot_from_files("aminer", [str(world / "corpus.aminer.jsonl")], with_text=False)
    data = build_dataset(s, 2019, 4, window=4)
    with open(world / "rising_stars.tsv", encoding="ascii") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert len(rows) > 50 and sorted(data.author_ids) == sorted(r["author_id"] for r in rows)
    at = {a: i for i, a in enumerate(data.author_ids)}
    idx = np.array([at[r["author_id"]] for r in rows])
    np.testing.assert_array_equal(data.labels[idx], [int(r["future_increment"]) for r in rows])
    np.testing.assert_array_equal(data.raw[idx, FEATURE_NAMES.index("citations")],
                                  [int(r["citations_as_of_T"]) for r in rows])


def test_nips_young_researchers_as_of_1990():
    path = require_shared_data("nips", "nips-1987-1993.aminer.jsonl")
    s = snapshot_from_files("aminer", [str(path)], with_text=False)
    data = build_dataset(s, 1990, 3)
    assert len(data) == 322 and int((data.labels > 0).sum()) == 104
    assert np.isfinite(data.X).all() and (data.X >= 0).all()
