"""NNSelect: loss, negative sampling, candidate filtering, indexes, persistence."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from scholargraph.errors import NotFitted
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.ranking.citations.ann import ExactIndex, IVFIndex
from scholargraph.ranking.citations.nnrank import ranking_triplet_loss
from scholargraph.ranking.citations.nnselect import (
    Candidates,
    NNSelect,
    cited_by_cited,
    hard_negatives,
    triplet_loss,
    weigh_bags,
)
from scholargraph.ranking.citations.text import Bags, Corpus, Vocabulary, count_fields, fit_vocabulary, tokenize

SMALL = {"dim": 16, "epochs": 2, "batch_size": 64, "k_nn": 10, "min_df": 1}


@pytest.fixture(scope="module")
def selector(world):
    return NNSelect(**SMALL).fit(world)


# --- loss -----------------------------------------------------------------------------------------


def test_triplet_loss_on_hand_made_embeddings():
    anchor = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    positive = torch.tensor([[0.6, 0.8], [1.0, 0.0]])  # cos 0.6, then 1.0
    negative = torch.tensor([[0.8, 0.6], [0.0, 1.0]])  # cos 0.8, then 0.0
    # max(0, .3 - .6 + .8) = .5 and max(0, .3 - 1 + 0) = 0
    assert triplet_loss(anchor, positive, negative, margin=0.3).item() == pytest.approx(0.25)
    assert triplet_loss(anchor, positive, negative, margin=1.5).item() == pytest.approx((1.7 + 0.5) / 2)


def test_ranking_triplet_loss_on_scores():
    pos, neg = torch.tensor([0.9, 0.5]), torch.tensor([0.2, 0.6])
    assert ranking_triplet_loss(pos, neg, margin=0.1).item() == pytest.approx((0.0 + 0.2) / 2)


# --- negative sampling on a hand-built graph ----------------------------------------------------------


def _graph():
    # 0 cites 1, 2; 1 cites 3, 2; 2 cites 4; 5 cites 0
    n = 6
    edges = [(0, 1), (0, 2), (1, 3), (1, 2), (2, 4), (5, 0)]
    src, dst = zip(*edges)
    return sp.csr_matrix((np.ones(len(edges), np.float32), (src, dst)), shape=(n, n))


def test_cited_by_cited_are_second_hop_not_cited_by_the_query():
    cit = _graph()
    # 0's references cite 3, 2 and 4; 2 is cited by 0 itself, so it is no negative
    assert cited_by_cited(cit, 0).tolist() == [3, 4]
    # 5 cites 0, which cites 1 and 2
    assert cited_by_cited(cit, 5).tolist() == [1, 2]
    # 1 cites 3 and 2; 2 cites 4; 3 cites nothing
    assert cited_by_cited(cit, 1).tolist() == [4]
    assert cited_by_cited(cit, 3).tolist() == []


def test_cited_by_cited_never_returns_the_query():
    cit = sp.csr_matrix(([1.0, 1.0], ([0, 1], [1, 0])), shape=(2, 2))  # 0 and 1 cite each other
    assert cited_by_cited(cit, 0).tolist() == []


def test_neighbour_citations_count_the_neighbours_citing_each_paper():
    cit = _graph()
    found = Candidates(np.array([2, 3, 4, 1]), np.zeros(4, np.float32), neighbours=np.array([0, 1, 2]))
    # 0 cites 1, 2; 1 cites 3, 2; 2 cites 4
    assert found.neighbour_citations(cit).tolist() == [2, 1, 1, 1]
    assert found.neighbour_citations(cit, np.array([5, 0])).tolist() == [0, 0]


def test_hard_negatives_exclude_query_cited_and_look_alikes():
    emb = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0.99, 0.141], [0.7, 0.7, 0.141], [1, 0, 0]],
                   dtype=np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    neighbours = np.array([0, 1, 3, 4, 5, -1])
    cited = np.array([1, 2])
    out = hard_negatives(0, neighbours, cited, emb, max_cosine=0.9)
    # 0 is the query, 1 is cited, 3 looks like cited paper 1 (cos .99), -1 is padding
    assert out.tolist() == [4, 5]
    assert not set(out.tolist()) & set(cited.tolist())


def test_sampled_negatives_are_never_cited(world, selector):
    corpus = selector.corpus_
    cit = sp.csr_matrix(world.citations)
    src = np.repeat(np.arange(cit.shape[0]), np.diff(cit.indptr))
    dst = cit.indices.astype(np.int64)
    rng = np.random.default_rng(3)
    for shares in ((0, 1, 0), (0, 0, 1), (1, 1, 1)):
        model = NNSelect(**SMALL, random_negatives=shares[0], hard_negatives=shares[1],
                         cited_by_cited_negatives=shares[2])
        model.model_ = selector.model_
        neg = model._sample_negatives(src, dst, cit, corpus, selector.embeddings_,
                                      np.flatnonzero(corpus.has_text), rng)
        assert len(neg) == len(src)
        assert not (neg == src).any()
        assert np.asarray(cit[src, neg]).ravel().max() == 0  # no negative is cited by its query
        if shares == (0, 0, 1):
            # where the query has second-hop papers, the negative is one of them
            for q, n in zip(src.tolist(), neg.tolist()):
                pool = cited_by_cited(cit, q)
                if len(pool):
                    assert n in pool.tolist()


# --- candidates: self and future exclusion ------------------------------------------------------------


def test_candidates_never_hold_the_query_or_its_future(world, selector):
    for i in range(0, world.n_papers, 7):
        year = int(world.paper_year[i])
        pid = world.paper_ids[i]
        cand, sims, nbrs = selector.candidates(world.titles[i], world.abstracts[i], year=year, exclude_ids=(pid,))
        assert set(nbrs.tolist()) <= set(cand.tolist())
        assert len(cand) > 0
        assert i not in cand.tolist()
        assert (world.paper_year[cand] <= year).all()
        assert np.all(np.diff(sims) <= 1e-6)  # best first


def test_query_excluded_by_doi_in_another_spelling(world, selector):
    i = world.paper_ids.index("10.1145/retrieval.0")
    title, abstract = world.titles[i], world.abstracts[i]
    cand = selector.candidates(title, abstract, exclude_ids=("https://doi.org/10.1145/RETRIEVAL.0",)).indexes
    assert i not in cand.tolist()
    cand = selector.candidates(title, abstract).indexes
    assert cand[0] == i  # without the exclusion the paper is its own nearest neighbour


def test_candidates_include_what_the_neighbours_cite(world, selector):
    i = world.n_papers - 1
    cand = selector.candidates(world.titles[i], world.abstracts[i], exclude_ids=(world.paper_ids[i],), k_nn=3).indexes
    assert len(cand) >= 3
    model = NNSelect(**{**SMALL, "expand_citations": False})
    model.model_, model.vocabulary_ = selector.model_, selector.vocabulary_
    model.index_snapshot(world)
    only = model.candidates(world.titles[i], world.abstracts[i], exclude_ids=(world.paper_ids[i],), k_nn=3).indexes
    assert len(only) == 3 and set(only.tolist()) <= set(cand.tolist())


def test_learned_embedding_puts_topics_together(world, selector):
    emb = selector.embeddings_
    topic = np.arange(world.n_papers) % 3  # make_world deals papers out to the topics in turn
    same = (emb @ emb.T)[topic[:, None] == topic[None, :]].mean()
    other = (emb @ emb.T)[topic[:, None] != topic[None, :]].mean()
    assert same > other + 0.2


# --- indexes ----------------------------------------------------------------------------------------------


def test_exact_index_filters_and_pads():
    v = np.eye(4, dtype=np.float32)
    years = np.array([2000, 2001, 2002, 2003])
    idx = ExactIndex(v, years, valid=np.array([True, True, True, False]))
    q = np.array([[0.1, 0.2, 0.9, 0.95]], dtype=np.float32)
    i, s = idx.search(q, 3)
    assert i[0].tolist() == [2, 1, 0]  # 3 is not valid
    i, s = idx.search(q, 3, max_years=np.array([2001]), exclude=[[1]])
    assert i[0].tolist() == [0, -1, -1] and np.isneginf(s[0, 1:]).all()


def test_ivf_with_every_cell_probed_is_exact():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(500, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    years = rng.integers(2000, 2010, size=500)
    exact = ExactIndex(v, years)
    ivf = IVFIndex(v, years, nlist=10, nprobe=10)
    q = v[:5] + 0.1
    caps = np.array([2005, 2009, 2001, -1, 2003])
    excl = [[0], [], [2, 3], [], [4]]
    a, _ = exact.search(q, 7, caps, excl)
    b, _ = ivf.search(q, 7, caps, excl)
    assert a.tolist() == b.tolist()


def test_ivf_with_few_cells_probed_still_filters():
    rng = np.random.default_rng(1)
    v = rng.normal(size=(400, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    years = rng.integers(2000, 2010, size=400)
    ivf = IVFIndex(v, years, nlist=20, nprobe=2, block_queries=3)
    q = v[:10]
    caps = np.full(10, 2004)
    idx, sc = ivf.search(q, 5, caps, [[i] for i in range(10)])
    for i, row in enumerate(idx.tolist()):
        row = [j for j in row if j >= 0]
        assert row and i not in row and all(years[j] <= 2004 for j in row)
    assert np.all(np.diff(sc, axis=1)[np.isfinite(sc[:, 1:])] <= 1e-6)


# --- text -------------------------------------------------------------------------------------------------


def test_vocabulary_caps_and_drops_oov():
    texts = ["alpha beta gamma", "alpha beta", "alpha delta", "the of 2021 x"]
    v = Vocabulary.build(texts, max_size=2, min_df=1)
    assert v.words == ["alpha", "beta"]
    assert tokenize("The alpha, of 2021 x-ray!") == ["alpha", "ray"]
    bags = v.bags(["alpha alpha zeta beta", "zeta", None])
    assert bags.toarray().tolist() == [[2.0, 1.0], [0.0, 0.0], [0.0, 0.0]]
    assert v.idf[1] > v.idf[0] > 0  # rarer word, higher IDF
    assert Vocabulary.from_json(json.loads(json.dumps(v.to_json()))).fingerprint() == v.fingerprint()


def test_one_pass_vocabulary_equals_the_two_pass_one(world):
    vocab, bags = fit_vocabulary(world, max_size=40, min_df=2)
    ref = Vocabulary.build((world.text(i) for i in range(world.n_papers)), max_size=40, min_df=2)
    assert vocab.words == ref.words and vocab.df.tolist() == ref.df.tolist()
    expected = Bags.of(ref, world.titles, world.abstracts)
    assert (bags.title != expected.title).nnz == 0 and (bags.abstract != expected.abstract).nnz == 0
    chunked = ref.bags(world.abstracts, chunk=7)
    assert (chunked != expected.abstract).nnz == 0
    words, title, _ = count_fields(["a bb bb", None], ["", "cc"], chunk=1)
    assert words == ["a", "bb", "cc"] and title.toarray().tolist() == [[1, 2, 0], [0, 0, 0]]


def test_corpus_allowed_mask(world):
    corpus = Corpus.of(world, Vocabulary.build(world.text(i) for i in range(world.n_papers)))
    allowed = corpus.allowed(2003, exclude=[0])
    assert not allowed[0]
    assert (world.paper_year[allowed] <= 2003).all()
    assert allowed.sum() == (world.paper_year <= 2003).sum() - 1


# --- persistence ----------------------------------------------------------------------------------------------


def test_not_fitted_errors(tmp_path, world):
    model = NNSelect(**SMALL)
    with pytest.raises(NotFitted):
        model.encode(["a"], ["b"])
    with pytest.raises(NotFitted):
        model.candidates("a", "b")
    with pytest.raises(NotFitted):
        model.save(tmp_path / "m")
    with pytest.raises(NotFitted):
        NNSelect.load(tmp_path / "missing")


def test_load_refuses_another_version(tmp_path, selector):
    d = selector.save(tmp_path / "sel")
    config = json.loads((d / "config.json").read_text())
    config["version"] = 999
    (d / "config.json").write_text(json.dumps(config))
    with pytest.raises(NotFitted, match="version"):
        NNSelect.load(d)


def test_save_load_gives_identical_candidates(tmp_path, world, selector):
    d = selector.save(tmp_path / "sel")
    loaded = NNSelect.load(d)
    with pytest.raises(NotFitted):
        loaded.candidates("retrieval ranking", "query document")
    loaded.index_snapshot(world)
    assert loaded.params == selector.params
    np.testing.assert_array_equal(loaded.encode(world.titles[:5], world.abstracts[:5]),
                                  selector.encode(world.titles[:5], world.abstracts[:5]))
    for i in (3, 40, 80):
        a = selector.candidates(world.titles[i], world.abstracts[i], int(world.paper_year[i]))
        b = loaded.candidates(world.titles[i], world.abstracts[i], int(world.paper_year[i]))
        assert a[0].tolist() == b[0].tolist()
        np.testing.assert_array_equal(a[1], b[1])


def test_fit_as_of_never_sees_later_papers(world):
    model = NNSelect(**{**SMALL, "epochs": 1}).fit(world, as_of=2004)
    assert (model.corpus_.years <= 2004).all()
    assert model.corpus_.snapshot.n_papers == int((world.paper_year <= 2004).sum())


def test_empty_graph_still_fits():
    snap = GraphSnapshot.build([{"id": "a", "year": 2000, "title": "alpha beta", "abstract": "gamma"},
                                {"id": "b", "year": 2001, "title": "alpha", "abstract": "delta beta"}])
    model = NNSelect(**{**SMALL, "epochs": 1}).fit(snap)
    cand = model.candidates("alpha", "beta", year=2000).indexes
    assert cand.tolist() == [0]


def test_training_leaves_ieee_subnormals_alone(world):
    """Training flushes denormals for speed, then switches the process-wide flag off again."""
    NNSelect(**{**SMALL, "epochs": 1}).fit(world)
    assert float(torch.tensor([1e-40], dtype=torch.float32) * 1.0) != 0.0


def test_tfidf_weighting_scales_counts_by_idf():
    vocab = Vocabulary(["alpha", "beta"], np.array([1, 3]), 4)
    bags = Bags.of(vocab, ["alpha alpha beta", None], ["beta", "alpha"])
    assert weigh_bags(bags, vocab.idf, "count") is bags
    weighted = weigh_bags(bags, vocab.idf, "tfidf")
    np.testing.assert_allclose(weighted.title.toarray()[0], [np.log1p(2) * vocab.idf[0], np.log1p(1) * vocab.idf[1]],
                               rtol=1e-6)
    np.testing.assert_allclose(weighted.abstract.toarray(), np.log1p(1) * np.array([[0, vocab.idf[1]],
                                                                                    [vocab.idf[0], 0]]), rtol=1e-6)
    assert bags.title.toarray()[0].tolist() == [2, 1]  # the counts are left as they were
    with pytest.raises(ValueError, match="weighting"):
        weigh_bags(bags, vocab.idf, "bm25")


def test_bm25_pair_scores_equal_the_bm25_baseline(world):
    from scholargraph.ranking.citations.bm25 import BM25
    from scholargraph.ranking.citations.text import bm25_document_weights, bm25_pair_scores

    vocab, bags = fit_vocabulary(world, max_size=100_000, min_df=1)
    baseline = BM25().fit(world)
    weights = bm25_document_weights(bags, vocab.idf)
    for q in (0, 7, 41):
        expected = baseline.scores(world.titles[q], world.abstracts[q])
        docs = np.arange(world.n_papers)
        got = bm25_pair_scores(bags, np.full(len(docs), q), weights[docs])
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
