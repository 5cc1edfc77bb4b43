"""The reviewer evidence reads the topic mixtures and citation vectors `features` stored, and they are the
vectors it would compute itself; after an ingest that `features` has not seen, it computes them again."""

from __future__ import annotations

import numpy as np

from scholargraph.graph.features import FeatureOptions, run_features
from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle
from scholargraph.ranking.graph_models import load_graph_models
from scholargraph.ranking.reviewers import evidence
from scholargraph.ranking.reviewers.evidence import EvidenceIndex
from scholargraph.ranking.reviewers.service import build_index

WORDS = ("zorblat", "quenfir", "mavotel", "trisk", "plonko", "vendrix", "caluth", "obrenna", "sefoni", "gruntel")


def bundle(i: int) -> PaperBundle:
    words = " ".join(WORDS[(i + k) % len(WORDS)] for k in (0, 1, 3, 4))
    pid = f"p{i}"
    return PaperBundle(paper=Paper(pid, words, abstract=words, year=2000 + i % 5, sources=(pid,)),
                       authors=(Author(f"a{i % 7}", f"Author {i % 7}"),),
                       authorships=(Authorship(f"a{i % 7}", pid, 1),),
                       citations=tuple(Citation(pid, f"p{j}") for j in range(max(0, i - 3), i)))


def test_stored_topic_and_citation_vectors_equal_the_computed_ones(tmp_path, monkeypatch):
    store = InMemoryStore()
    store.write_bundles([bundle(i) for i in range(40)])
    models = tmp_path / "models"
    run_features(store, models, FeatureOptions(num_topics=4))
    computed = []
    original = evidence._topic_rows
    monkeypatch.setattr(evidence, "_topic_rows", lambda *a: computed.append(1) or original(*a))

    served = build_index(store, models, quiet=True)
    assert not computed  # the stored mixtures were read
    topic_model, encoder = load_graph_models(models)
    fresh = EvidenceIndex.build(served.snapshot, encoder=encoder, topic_model=topic_model,
                                text_vectors=served.text)
    assert computed
    np.testing.assert_array_equal(served.topics, fresh.topics)
    np.testing.assert_array_equal(served.cvec, fresh.cvec)
    assert served.has_topic.sum() == 40

    # A paper ingested since the last `features` run: the stored vectors are not current, so they are computed.
    store.write_bundles([bundle(40)])
    computed.clear()
    stale = build_index(store, models, quiet=True)
    assert computed and stale.snapshot.n_papers == 41
