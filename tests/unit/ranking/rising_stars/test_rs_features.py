"""The 18 IIRL features, the young-researcher population and the labels, on a hand-built graph."""

import math

import networkx as nx
import numpy as np
import pytest

from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.ranking.rising_stars.features import (
    FEATURE_GROUPS,
    FEATURE_NAMES,
    build_dataset,
    citation_increment,
    first_lead_year,
    transform,
    young_authors,
)

T, D = 2010, 3
LN2, LN3 = math.log(2), math.log(3)

# p1..p5 up to T; p6.. after it. a4's first first-author paper (p5, 2004) is outside the 5-year window.
PAPERS = [
    {"id": "p1", "year": 2008, "venue": "V1"}, {"id": "p2", "year": 2009, "venue": "V1"},
    {"id": "p3", "year": 2010, "venue": "V2"}, {"id": "p4", "year": 2010, "venue": "V2"},
    {"id": "p5", "year": 2004, "venue": "V3"}, {"id": "s1", "stub": True},
    {"id": "p6", "year": 2011, "venue": "V1"}, {"id": "p7", "year": 2012}, {"id": "p9", "year": 2013},
    {"id": "p8", "year": 2014},
]
AUTHORSHIPS = [("a1", "p1", 1), ("a2", "p1", 2), ("a2", "p2", 1), ("a3", "p2", 2), ("a1", "p3", 1),
               ("a3", "p4", 1), ("a4", "p4", 2), ("a4", "p5", 1), ("a5", "p6", 1), ("a1", "p6", 2),
               ("a6", "p7", 1), ("a6", "p8", 1)]
CITATIONS = [("p2", "p1"), ("p3", "p1"), ("p3", "p2"), ("p4", "p2"), ("p4", "p5"), ("p1", "p5"), ("p1", "s1"),
             ("p6", "p1"), ("p6", "p3"), ("p7", "p1"), ("p7", "p2"), ("p9", "p6"), ("p8", "p1")]
# Two topics; the stub has no text (zeros). Rows for the papers after T do not matter.
TOPICS = {"p1": [1, 0], "p2": [0.5, 0.5], "p3": [0, 1], "p4": [1, 0], "p5": [0, 1], "s1": [0, 0]}


def graph(papers=PAPERS, authorships=AUTHORSHIPS, citations=CITATIONS) -> GraphSnapshot:
    return GraphSnapshot.build(papers, authorships, citations)


def topics_for(s: GraphSnapshot) -> np.ndarray:
    return np.array([TOPICS.get(p, [0.3, 0.7]) for p in s.paper_ids], dtype=float)


def rows(data, ids=("a1", "a2", "a3")):
    index = {a: i for i, a in enumerate(data.author_ids)}
    return np.array([index[a] for a in ids])


@pytest.fixture(scope="module")
def data():
    s = graph()
    return build_dataset(s, T, D, paper_topics=topics_for(s))


def feature(data, name):
    return data.raw[rows(data), FEATURE_NAMES.index(name)]


def nx_pagerank(edges, nodes, undirected=False):
    g = nx.Graph() if undirected else nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_weighted_edges_from(edges)
    pr = nx.pagerank(g, weight="weight")
    return {k: v * len(nodes) for k, v in pr.items()}


def test_names_and_groups():
    assert len(FEATURE_NAMES) == 18 and len(set(FEATURE_NAMES)) == 18
    assert [n for g in FEATURE_GROUPS.values() for n in g] == list(FEATURE_NAMES)
    assert [len(g) for g in FEATURE_GROUPS.values()] == [3, 6, 3, 2, 4]
    np.testing.assert_allclose(transform(np.array([0.0, math.e - 1])), [0.0, 1.0])


def test_young_authors_by_first_first_authorship():
    s = graph()
    assert sorted(young_authors(s, T)) == ["a1", "a2", "a3"]
    assert sorted(young_authors(s.as_of(T), T)) == ["a1", "a2", "a3"]  # a5 leads first in 2011
    assert sorted(young_authors(s, T, window=7)) == ["a1", "a2", "a3", "a4"]
    assert sorted(young_authors(s, 2011, window=1)) == ["a5"]  # a1 co-authored p6 but led earlier
    first = dict(zip(s.author_ids, first_lead_year(s).tolist()))
    assert first == {"a1": 2008, "a2": 2009, "a3": 2010, "a4": 2004, "a5": 2011, "a6": 2012}


def test_labels_count_citations_in_the_horizon_to_all_the_authors_papers(data):
    # a1: p1 cited by p6, p7; p3 by p6; p6 (written after T) by p9; p8 (2014) is past the horizon.
    np.testing.assert_array_equal(data.labels[rows(data)], [4, 3, 1])
    assert citation_increment(graph(), ["a4", "nobody"], T, D).tolist() == [0, 0]
    with pytest.raises(ValueError, match="2016"):
        build_dataset(graph(), 2013, 3)


def test_author_features(data):
    np.testing.assert_array_equal(feature(data, "n_papers"), [2, 2, 2])
    np.testing.assert_array_equal(feature(data, "citations"), [2, 4, 2])  # p1: 2, p2: 2, p3/p4: 0
    np.testing.assert_array_equal(feature(data, "avg_citations"), [1, 2, 1])


def test_social_features(data):
    np.testing.assert_array_equal(feature(data, "n_coauthors"), [1, 2, 2])
    np.testing.assert_array_equal(feature(data, "coauthor_avg_citations"), [4, 2, 3])  # a1: 2, a2: 4, a4: 2
    acn = nx_pagerank([("a1", "a2", 1), ("a2", "a3", 1), ("a3", "a4", 1)], ["a1", "a2", "a3", "a4"], True)
    accn = nx_pagerank([("a2", "a1", 1), ("a3", "a1", 1), ("a3", "a2", 2), ("a1", "a2", 2), ("a1", "a3", 1),
                        ("a4", "a2", 1), ("a4", "a3", 1), ("a3", "a4", 1), ("a1", "a4", 1), ("a2", "a4", 1)],
                       ["a1", "a2", "a3", "a4"])
    np.testing.assert_allclose(feature(data, "pagerank_acn"), [acn["a1"], acn["a2"], acn["a3"]], rtol=1e-4)
    np.testing.assert_allclose(feature(data, "pagerank_accn"), [accn["a1"], accn["a2"], accn["a3"]], rtol=1e-4)
    np.testing.assert_allclose(feature(data, "coauthor_avg_pagerank_acn"),
                               [acn["a2"], (acn["a1"] + acn["a3"]) / 2, (acn["a2"] + acn["a4"]) / 2], rtol=1e-4)
    np.testing.assert_allclose(feature(data, "coauthor_avg_pagerank_accn"),
                               [accn["a2"], (accn["a1"] + accn["a3"]) / 2, (accn["a2"] + accn["a4"]) / 2],
                               rtol=1e-4)


def test_venue_features(data):
    # Venue mean citations as of T: V1 {p1: 2, p2: 2} = 2, V2 {p3: 0, p4: 0} = 0, V3 {p5: 2} = 2.
    np.testing.assert_allclose(feature(data, "venue_avg_citations"), [1, 2, 1])
    np.testing.assert_allclose(feature(data, "venue_avg_citations_recent"), [0, 2, 1])  # papers of 2009-2010
    # VCCN: V2 -> V1 (p3 -> p1, p3 -> p2, p4 -> p2), V2 -> V3 (p4 -> p5), V1 -> V3 (p1 -> p5).
    pr = nx_pagerank([("V2", "V1", 3), ("V2", "V3", 1), ("V1", "V3", 1)], ["V1", "V2", "V3"])
    np.testing.assert_allclose(feature(data, "venue_avg_pagerank"),
                               [(pr["V1"] + pr["V2"]) / 2, pr["V1"], (pr["V1"] + pr["V2"]) / 2], rtol=1e-4)


def test_content_features(data):
    np.testing.assert_allclose(feature(data, "topic_diversity"), [0, LN2 / 2, LN2 / 2])
    # sum_r p(r|a) ln(1 + citations credited to r): a1 p=(.5,.5), A=(2,0); a2 p=(.75,.25), A=(3,1); a3 A=(1,1).
    np.testing.assert_allclose(feature(data, "topic_authority"),
                               [0.5 * LN3, 0.75 * math.log(4) + 0.25 * LN2, LN2])
    np.testing.assert_allclose(data.author_topics[rows(data)], [[0.5, 0.5], [0.75, 0.25], [0.75, 0.25]])
    assert {t: sorted(data.author_ids[i] for i in r) for t, r in data.topic_groups(1).items()} == {
        "0": ["a1", "a2", "a3"], "1": []}
    assert all(len(r) == 3 for r in data.topic_groups(3).values())


def test_temporal_features(data):
    # Citations made in 2010: p3 -> p1, p2; p4 -> p2, p5. In 2009-2010 also p2 -> p1.
    np.testing.assert_array_equal(feature(data, "citation_increment_last_year"), [1, 3, 2])
    np.testing.assert_array_equal(feature(data, "citation_increment_avg_2y"), [1, 2, 1])
    np.testing.assert_array_equal(feature(data, "papers_last_year"), [1, 0, 1])
    np.testing.assert_array_equal(feature(data, "papers_avg_2y"), [0.5, 0.5, 1])


def test_nothing_after_t_changes_a_feature(data):
    papers = PAPERS + [{"id": "p10", "year": 2011, "venue": "V2"}, {"id": "p11", "year": 2013, "venue": "V3"}]
    authorships = AUTHORSHIPS + [("a2", "p10", 1), ("a7", "p10", 2), ("a3", "p11", 1), ("a1", "p11", 2)]
    citations = CITATIONS + [("p10", "p2"), ("p10", "p4"), ("p10", "p5"), ("p7", "p4"), ("p11", "p3")]
    s = graph(papers, authorships, citations)
    later = build_dataset(s, T, D, paper_topics=topics_for(s))
    assert later.author_ids == data.author_ids
    np.testing.assert_array_equal(later.raw, data.raw)
    np.testing.assert_array_equal(later.author_topics, data.author_topics)
    assert not np.array_equal(later.labels, data.labels)  # the future is visible to the labels only


def test_topics_given_per_paper_of_the_cut_snapshot_or_of_the_full_one(data):
    s = graph()
    past = s.as_of(T)
    same = build_dataset(s, T, D, paper_topics=topics_for(past))
    np.testing.assert_array_equal(same.raw, data.raw)
    with pytest.raises(ValueError, match="rows"):
        build_dataset(s, T, D, paper_topics=np.ones((3, 2)))


def test_without_topics_the_content_features_are_zero_and_there_are_no_groups():
    d = build_dataset(graph(), T)
    assert d.labels is None and d.author_topics is None and d.topic_groups() == {}
    assert not d.raw[:, [FEATURE_NAMES.index("topic_diversity"), FEATURE_NAMES.index("topic_authority")]].any()
    assert d.X.shape == (3, 18) and (d.X >= 0).all()


def test_named_authors_missing_from_the_past_get_zeros():
    d = build_dataset(graph(), T, author_ids=["a2", "a5"])
    assert d.raw[1].sum() == 0 and d.raw[0, 0] == 2


def test_self_citations_share_an_author_and_are_left_out_of_the_external_counts():
    from scholargraph.graph.networks import citations_without_shared_authors
    from scholargraph.ranking.rising_stars.features import EXTENDED_FEATURE_NAMES, EXTERNAL_FEATURE_NAMES

    s = graph()
    kept = citations_without_shared_authors(s)
    ids = s.paper_ids
    pairs = {(ids[i], ids[j]) for i, j in zip(*kept.nonzero())}
    # Dropped, sharing an author: p2 -> p1 (a2), p3 -> p1 (a1), p4 -> p2 (a3), p4 -> p5 (a4), p6 -> p1 and
    # p6 -> p3 (a1). A co-author's self-citation is dropped for every author of the cited paper.
    assert pairs == {("p3", "p2"), ("p1", "p5"), ("p1", "s1"), ("p7", "p1"), ("p7", "p2"), ("p9", "p6"),
                     ("p8", "p1")}
    # In (2010, 2013]: a1 gets p7 -> p1 and p9 -> p6 (p6 is a1's, written after T); a2 p7 -> p1, p7 -> p2;
    # a3 p7 -> p2.
    np.testing.assert_array_equal(citation_increment(s, ["a1", "a2", "a3"], T, D, exclude_self_citations=True),
                                  [2, 2, 1])
    # Only citations of papers published up to T: a1 loses p9 -> p6.
    np.testing.assert_array_equal(citation_increment(s, ["a1", "a2", "a3"], T, D, exclude_self_citations=True,
                                                     cited_up_to=T), [1, 2, 1])
    d = build_dataset(s, T, D, external_features=True, labels_without_self_citations=True)
    assert d.feature_names == EXTENDED_FEATURE_NAMES and d.raw.shape == (3, 20)
    np.testing.assert_array_equal(d.labels[rows(d)], [2, 2, 1])
    ext = d.raw[rows(d)][:, [EXTENDED_FEATURE_NAMES.index(f) for f in EXTERNAL_FEATURE_NAMES]]
    # Citations made in 2009-2010 between papers sharing no author: only p3 -> p2 (2010), for a2 and a3.
    np.testing.assert_array_equal(ext, [[0, 0], [1, 0.5], [1, 0.5]])
    # The paper's 18 columns do not move when the external ones are added.
    np.testing.assert_array_equal(d.raw[:, :18], build_dataset(s, T, D).raw)


def test_paper_topics_from_a_model_trained_elsewhere_are_its_mixtures_and_stubs_get_zeros():
    from scholargraph.graph.topics import TopicModel
    from scholargraph.ranking.rising_stars.features import fit_paper_topics

    words = {0: "neural network learning gradient training", 1: "protein folding molecular biology cell"}
    papers = [{"id": f"p{i}", "year": 2000, "title": f"paper {i}", "abstract": " ".join([words[i % 2]] * 3)}
              for i in range(40)] + [{"id": "s1", "stub": True}]
    s = GraphSnapshot.build(papers, [("a1", "p0", 1)], [("p1", "s1")])
    model = TopicModel(num_topics=2, no_below=1, random_state=0).fit([s.text(i) for i in range(s.n_papers)])
    theta = fit_paper_topics(s, fitted=model)
    expected, empty = model.transform([s.text(i) for i in range(s.n_papers)], return_empty=True)
    stub = s.paper_index["s1"]
    assert empty[stub] and not empty[[i for i in range(s.n_papers) if i != stub]].any()
    assert np.allclose(theta[stub], 0.0)
    keep = ~empty
    np.testing.assert_allclose(theta[keep], expected[keep])
    np.testing.assert_allclose(theta[keep].sum(axis=1), 1.0)
