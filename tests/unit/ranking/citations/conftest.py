"""A tiny citation world built by hand: three topics with their own words, citations inside topics."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scholargraph.graph.snapshot import GraphSnapshot

TOPICS = {
    "retrieval": "retrieval ranking query document index relevance search engine bm25 click".split(),
    "vision": "image pixel convolution camera segmentation detection object scene video depth".split(),
    "biology": "protein gene cell sequence enzyme genome mutation tissue molecule species".split(),
}
GENERAL = "method results approach model data study novel propose evaluation framework".split()


def make_world(papers_per_topic: int = 30, seed: int = 0) -> GraphSnapshot:
    """Papers 2000-2009; each cites 3 earlier papers of its own topic, favouring the first ones (popular)."""
    rng = np.random.default_rng(seed)
    papers, cites = [], []
    by_topic: dict[str, list[tuple[str, int]]] = {t: [] for t in TOPICS}
    n = papers_per_topic * len(TOPICS)
    for k in range(n):
        topic = list(TOPICS)[k % len(TOPICS)]
        year = 2000 + (k * 10) // n
        words = TOPICS[topic]
        title = " ".join(rng.choice(words, 4)) + " " + " ".join(rng.choice(GENERAL, 2))
        abstract = " ".join(rng.choice(words + GENERAL, 30))
        pid = f"10.1145/{topic}.{k}" if k % 2 == 0 else f"p{k}"
        papers.append({"id": pid, "year": year, "title": title, "abstract": abstract,
                       "venue": f"venue-{topic}"})
        earlier = [p for p, y in by_topic[topic] if y < year]
        if earlier:
            w = 1.0 / (1.0 + np.arange(len(earlier)))
            for j in rng.choice(len(earlier), size=min(3, len(earlier)), replace=False, p=w / w.sum()):
                cites.append((pid, earlier[j]))
        by_topic[topic].append((pid, year))
    authorships = [(f"a{k % 17}", p["id"], 1) for k, p in enumerate(papers)]
    return GraphSnapshot.build(papers, authorships, cites)


@pytest.fixture(scope="session")
def world() -> GraphSnapshot:
    return make_world()


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models: threads only add overhead (and the CI machine is shared)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
