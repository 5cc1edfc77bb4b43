"""The papers' topics behind per-topic rankings are inferred once per texts and topic model
(rising_stars/service._graph_topics), not on every `rising-stars explain`."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scholargraph.errors import UsageError
from scholargraph.graph.features import make_current
from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.records import Paper, PaperBundle
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.topics import TopicModel
from scholargraph.ranking.rising_stars import service

WORDS = ["zorblat quenfir mavotel trisk", "plonko vendrix caluth obrenna", "grelmin tassovar pindle ulvoro"]


@pytest.fixture()
def graph(tmp_path):
    store = InMemoryStore()
    store.write_bundles([PaperBundle(paper=Paper(f"p{i}", WORDS[i % 3], abstract=f"{WORDS[i % 3]} {WORDS[(i + 1) % 3]}",
                                                 year=2000 + i % 5, sources=(f"p{i}",))) for i in range(60)])
    snapshot = GraphSnapshot.from_store(store, with_text=True)
    model = TopicModel(num_topics=3, passes=2, no_below=1, no_above=0.9, random_state=0)
    model.fit([snapshot.text(i) for i in range(snapshot.n_papers)])
    models = tmp_path / "models"
    make_current(models, {"topics": str(model.save(tmp_path / "topics"))})
    return models, snapshot


def test_topics_are_inferred_once_per_texts_and_model(graph, monkeypatch):
    models, snapshot = graph
    calls = []
    real = TopicModel.transform
    monkeypatch.setattr(TopicModel, "transform", lambda self, *a, **kw: calls.append(1) or real(self, *a, **kw))
    first = service._graph_topics(models, snapshot)
    again = service._graph_topics(models, snapshot)
    assert len(calls) == 1 and first.shape == (snapshot.n_papers, 3)
    np.testing.assert_array_equal(first, again)  # read back exactly

    titles = list(snapshot.titles)
    titles[0] = "an edited title"
    edited = dataclasses.replace(snapshot, titles=titles)
    service._graph_topics(models, edited)
    assert len(calls) == 2  # another text: inferred again


def test_without_a_topic_model_it_says_which_command_makes_one(tmp_path, graph):
    _, snapshot = graph
    with pytest.raises(UsageError, match="features --only topics"):
        service._graph_topics(tmp_path / "none", snapshot)
