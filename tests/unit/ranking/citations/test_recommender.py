"""NNRank, BM25 and the recommender: exclusion, explanations, evaluation harness, time split, persistence."""

from __future__ import annotations

import dataclasses
import json
import pickle
import threading

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from scholargraph.errors import NotFitted
from scholargraph.graph.encoders import make_encoder
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot
from scholargraph.ranking.citations.bm25 import BM25
from scholargraph.ranking.citations.nnrank import ENCODER_FEATURES, EncoderEvidence, NNRank
from scholargraph.ranking.citations.nnselect import NNSelect
from scholargraph.ranking.citations.recommender import (
    CitationRecommender,
    Query,
    encoder_vectors,
    read_queries,
    score_run,
    time_split_queries,
    weak_citation_graph,
)
from scholargraph.ranking.contract import Ranker

SMALL_SELECT = {"dim": 16, "epochs": 2, "batch_size": 64, "k_nn": 10, "min_df": 1}
SMALL_RANK = {"hidden": 8, "epochs": 2, "batch_size": 64, "max_queries": 60}


@pytest.fixture(scope="module")
def split(world):
    return time_split_queries(world, 2006)


@pytest.fixture(scope="module")
def trained(split):
    selector = NNSelect(**SMALL_SELECT).fit(split.train)
    ranker = NNRank(**SMALL_RANK).fit(split.train, selector)
    return selector, ranker


def test_time_split_queries_hold_only_the_past(world, split):
    assert (split.train.paper_year <= 2006).all()
    index = world.paper_index
    assert split.queries
    for q in split.queries:
        assert q.year > 2006
        assert q.id not in split.train.paper_index
        gold = split.qrels[q.id]
        assert gold
        for g in gold:
            assert world.paper_year[index[g]] <= 2006
            assert world.citations[index[q.id], index[g]] == 1
    # every later paper citing something up to 2006 is a query
    later = [i for i in range(world.n_papers) if world.paper_year[i] > 2006
             and any(world.paper_year[j] <= 2006 for j in world.citations[i].indices)]
    assert len(split.queries) == len(later)
    assert len(time_split_queries(world, 2006, max_queries=5).queries) == 5


def test_recommend_excludes_self_and_future_and_explains(world, split, trained):
    selector, ranker = trained
    selector.index_snapshot(world)  # the whole collection, queries included
    try:
        rec = CitationRecommender(selector, ranker)
        for i in range(0, world.n_papers, 11):
            year = int(world.paper_year[i])
            out = rec.recommend(world.titles[i], world.abstracts[i], year=year,
                                exclude_ids=(world.paper_ids[i],), k=5)
            assert 0 < len(out) <= 5
            assert i not in [r.paper_index for r in out]
            assert all(world.paper_year[r.paper_index] <= year for r in out)
            scores = [r.score for r in out]
            assert scores == sorted(scores, reverse=True)
            for r in out:
                words = set(world.text(i).lower().split()) & set(world.text(r.paper_index).lower().split())
                assert set(r.explanation) <= words
                idf = [selector.vocabulary_.idf[selector.vocabulary_.index[w]] for w in r.explanation]
                assert idf == sorted(idf, reverse=True)
    finally:
        selector.index_snapshot(split.train)  # as the other tests expect it


def test_bm25_excludes_self_and_future(world):
    bm = BM25().fit(world)
    for i in range(0, world.n_papers, 9):
        year = int(world.paper_year[i])
        hits = bm.recommend(world.titles[i], world.abstracts[i], year, (world.paper_ids[i],), k=10)
        assert hits and i not in [h for h, _ in hits]
        assert all(world.paper_year[h] <= year for h, _ in hits)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    top = bm.recommend(world.titles[0], world.abstracts[0], k=1)
    assert top[0][0] == 0  # a paper matches itself best when not excluded
    with pytest.raises(NotFitted):
        BM25().recommend("a", "b")


def test_evaluate_reports_all_three_systems(split, trained):
    selector, ranker = trained
    rec = CitationRecommender(selector, ranker, BM25().fit(split.train))
    res = rec.evaluate(split.queries, split.qrels, ks=(20, 100))
    assert set(res) == {"bm25", "nnselect", "nnselect+nnrank"}
    for metrics in res.values():
        assert {"f1@20", "mrr", "recall@20", "recall@100", "queries"} <= set(metrics)
        assert metrics["queries"] == len(split.queries)
        assert 0.0 <= metrics["f1@20"] <= 1.0 and 0.0 <= metrics["mrr"] <= 1.0
        assert metrics["recall@20"] <= metrics["recall@100"]
    # topics are cleanly separated in this world: anything trained beats chance by far
    assert res["nnselect"]["recall@100"] > 0.5


def test_score_run_matches_hand_computation():
    run = {"q": ["a", "x", "b"]}
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    out = score_run(run, qrels, ks=(2, 3))
    assert out["mrr"] == 1.0
    assert out["recall@2"] == pytest.approx(1 / 3) and out["recall@3"] == pytest.approx(2 / 3)
    assert out["f1@2"] == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))


def test_save_load_round_trip_gives_identical_rankings(tmp_path, split, trained):
    selector, ranker = trained
    selector.save(tmp_path / "select")
    ranker.save(tmp_path / "rank")
    loaded = CitationRecommender(NNSelect.load(tmp_path / "select", split.train), NNRank.load(tmp_path / "rank"))
    original = CitationRecommender(selector, ranker)
    for q in split.queries[:10]:
        a = original.recommend(q.title, q.abstract, q.year, (q.id,), k=10)
        b = loaded.recommend(q.title, q.abstract, q.year, (q.id,), k=10)
        assert [r.paper_index for r in a] == [r.paper_index for r in b]
        np.testing.assert_allclose([r.score for r in a], [r.score for r in b], rtol=0, atol=1e-6)
        assert [r.explanation for r in a] == [r.explanation for r in b]


def test_nnrank_refuses_use_before_fit_and_bad_versions(tmp_path, split, trained):
    selector, ranker = trained
    with pytest.raises(NotFitted):
        NNRank().score(selector.corpus_, "a", "b", selector.candidates("a", "b"))
    with pytest.raises(NotFitted):
        NNRank().fit(split.train, NNSelect())
    d = ranker.save(tmp_path / "rank")
    config = json.loads((d / "config.json").read_text())
    config["features"] = ["something", "else"]
    (d / "config.json").write_text(json.dumps(config))
    with pytest.raises(NotFitted, match="features"):
        NNRank.load(d)


def test_nnrank_optional_features(split, trained):
    selector, _ = trained
    ranker = NNRank(**{**SMALL_RANK, "epochs": 1}, use_age=True, use_neighbour_citations=True,
                    use_metadata=True).fit(split.train, selector)
    assert ranker.feature_names[-4:] == ("log_age", "log_neighbour_citations", "venue_prior", "author_prior")
    q = split.queries[0]
    found = selector.candidates(q.title, q.abstract, q.year, (q.id,))
    s = ranker.score(selector.corpus_, q.title, q.abstract, found, q.year)
    assert s.shape == found.indexes.shape and ((s > 0) & (s < 1)).all()


def test_ranker_initialised_from_the_selector_needs_its_dimension(split, trained):
    selector, _ = trained
    with pytest.raises(ValueError, match="dim"):
        NNRank(**{**SMALL_RANK, "epochs": 1}, dim=selector.params.dim + 1, use_text_cosines=True,
               init_from_selector=True).fit(split.train, selector)
    ranker = NNRank(**{**SMALL_RANK, "epochs": 1}, dim=5, use_text_cosines=True,
                    init_from_selector=False).fit(split.train, selector)
    assert ranker.model_.title.shape == (len(ranker.vocabulary_), 5)
    # Without the learned cosines (the default) the tables are not kept, nor read.
    assert NNRank(**{**SMALL_RANK, "epochs": 1}).fit(split.train, selector).model_.title.shape[0] == 1


def test_read_queries(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text(json.dumps({"id": "10.1/x", "title": "T", "abstract": "A", "year": 2020}) + "\n\n")
    assert read_queries(p) == [Query("10.1/x", "T", "A", 2020)]


def test_weak_citation_graph_links_keywords_and_authors_backwards_in_time():
    papers = [{"id": f"p{i}", "year": 2000 + i, "title": f"t{i}", "abstract": "x"} for i in range(5)]
    authorships = [("ann", "p0", 1), ("ann", "p3", 1), ("bob", "p1", 1), ("bob", "p4", 1)]
    snap = GraphSnapshot.build(papers, authorships)
    keywords = {"p1": ["Ranking", "click models"], "p2": ["ranking", "Click  Models", "eyes"],
                "p4": ["ranking", "click models"], "p0": ["eyes"]}
    # N = 5 papers, so a keyword in 3 papers weighs log(5/3) ~ 0.51 and one in 2 papers log(5/2) ~ 0.92:
    # with rare_df=2 a pair needs >= 0.92, i.e. both common keywords or the one rare keyword
    weak = weak_citation_graph(snap, keywords, per_paper=5, max_keyword_df=10, rare_df=2, author_refs=1)
    edges = {(snap.paper_ids[i], snap.paper_ids[j]) for i, j in zip(*weak.citations.nonzero())}
    # p2 and p4 share both common keywords with p1 (and p4 with p2), p2 the rare "eyes" with p0; p3 cites
    # its author's earlier paper (p4's author's earlier paper, p1, is already linked)
    assert edges == {("p2", "p1"), ("p4", "p1"), ("p4", "p2"), ("p2", "p0"), ("p3", "p0")}
    strict = weak_citation_graph(snap, keywords, per_paper=5, max_keyword_df=10, rare_df=1, author_refs=0)
    assert strict.citations.nnz == 0  # log(5/1) is more than any pair shares
    assert weak.paper_ids == snap.paper_ids and weak.titles == snap.titles


def test_fit_pipeline_trains_the_selector_on_every_citing_paper_and_the_ranker_on_recent_ones(world):
    train = world.as_of(2007)
    citing = np.diff(train.citations.indptr) > 0
    recent = citing & (train.paper_year > 2005)
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK), BM25(), ranker_years=2,
                              min_ranker_queries=5).fit(world, as_of=2007)
    assert rec.selector.trained_queries_ == int(citing.sum())
    assert rec.ranker.history_[0]["queries"] == int(recent.sum())
    assert rec.snapshot.n_papers == train.n_papers and rec.baseline.snapshot_.n_papers == train.n_papers
    # too few recent citing papers, or no ranker_years (the default): the ranker samples every citing paper
    for params in ({"ranker_years": 2, "min_ranker_queries": 10_000}, {}):
        rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**{**SMALL_RANK, "max_queries": 10**6}),
                                  **params).fit(world, as_of=2007)
        assert rec.selector.trained_queries_ == int(citing.sum())
        assert rec.ranker.history_[0]["queries"] > int(recent.sum())


def test_recommender_keeps_the_ranker_contract(tmp_path, split):
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK), fusion=10, explain_terms=3)
    assert isinstance(rec, Ranker) and rec.fit(split.train) is rec
    assert rec.name == "citeomatic+bm25" and rec.params.explain_terms == 3
    q = split.queries[0]
    cand, scores = rec.score(q.title, q.abstract, q.year, (q.id,))
    top = rec.recommend(q.title, q.abstract, q.year, (q.id,), k=10)
    assert [r.paper_index for r in top] == cand[:10].tolist() and [r.score for r in top] == scores[:10].tolist()
    assert all(len(r.explanation) <= 3 for r in top)

    path = rec.save(tmp_path / "model")
    config = json.loads((path / "config.json").read_text())
    assert config["selector"] == "encoder/nnselect" and config["ranker"] == "nnrank"
    assert config["fusion"] == {"lexical": "bm25", "rrf_k": 10} and config["params"]["explain_terms"] == 3
    loaded = CitationRecommender.load(path, snapshot=split.train)
    assert loaded.params == rec.params and loaded.rrf_k == 10 and loaded.name == rec.name
    # The registry records written before the model saved itself name the parts by absolute path.
    legacy = CitationRecommender.from_parts({"selector": str(path / "encoder" / "nnselect"),
                                             "ranker": str(path / "nnrank"), "fusion": config["fusion"]},
                                            snapshot=split.train, explain_terms=3)
    for other in (loaded, legacy):
        for q in split.queries[:10]:
            a = rec.recommend(q.title, q.abstract, q.year, (q.id,), k=10)
            b = other.recommend(q.title, q.abstract, q.year, (q.id,), k=10)
            assert [r.paper_index for r in a] == [r.paper_index for r in b]
            np.testing.assert_allclose([r.score for r in a], [r.score for r in b], rtol=0, atol=1e-6)
            assert [r.explanation for r in a] == [r.explanation for r in b]

    unindexed = CitationRecommender.load(path)
    with pytest.raises(NotFitted, match="paper index"):
        unindexed.recommend(q.title, q.abstract, q.year)
    assert unindexed.index_snapshot(split.train).lexical is not None
    (path / "config.json").write_text(json.dumps({**config, "version": 99}))
    with pytest.raises(NotFitted, match="version 99"):
        CitationRecommender.load(path)


def test_recommender_without_ranker_or_fusion_round_trips(tmp_path, split):
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), fusion=None).fit(split.train)
    loaded = CitationRecommender.load(rec.save(tmp_path / "m"), snapshot=split.train)
    assert loaded.ranker is None and loaded.lexical is None and loaded.rrf_k is None
    q = split.queries[0]
    assert ([r.paper_index for r in loaded.recommend(q.title, q.abstract, q.year, (q.id,))]
            == [r.paper_index for r in rec.recommend(q.title, q.abstract, q.year, (q.id,))])


def test_nnrank_bm25_feature_and_ablations_round_trip(tmp_path, split, trained):
    selector, _ = trained
    ranker = NNRank(**{**SMALL_RANK, "epochs": 1}, use_bm25=True, weighting="tfidf", use_text_cosines=True,
                    use_selector_cosine=True, without=["nnselect_cosine", "title_cosine"]).fit(split.train, selector)
    assert ranker.all_feature_names[-1] == "log_bm25" and "log_bm25" in ranker.feature_names
    assert "nnselect_cosine" not in ranker.feature_names and "title_cosine" not in ranker.feature_names
    assert ranker.model_.mean.shape[0] == len(ranker.feature_names) - 1  # one learned cosine is left
    q = split.queries[0]
    found = selector.candidates(q.title, q.abstract, q.year, (q.id,))
    before = ranker.score(selector.corpus_, q.title, q.abstract, found, q.year)
    loaded = NNRank.load(ranker.save(tmp_path / "ablated"))
    assert loaded.params == ranker.params and loaded.feature_names == ranker.feature_names
    np.testing.assert_array_equal(loaded.score(selector.corpus_, q.title, q.abstract, found, q.year), before)
    with pytest.raises(ValueError, match="unknown NNRank feature"):
        NNRank(without=("log_bm25",))  # not switched on
    assert NNRank().feature_names == ("title_shared_idf", "abstract_shared_idf", "log_citations", "log_age",
                                      "log_neighbour_citations", "venue_prior", "author_prior")


def test_ranker_with_bm25_candidates_sees_them_and_round_trips(tmp_path, split):
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK, lexical_candidates=5, use_bm25=True),
                              fusion=None).fit(split.train)
    assert rec.needs_bm25 and not rec.fuses and rec.candidate_bm25_ is not None and rec.name == "citeomatic"
    q = split.queries[0]
    lexical = [i for i, _ in rec.candidate_bm25_.recommend(q.title, q.abstract, q.year, (q.id,), 5)]
    selected = rec.selector.candidates(q.title, q.abstract, q.year, (q.id,)).indexes
    cand, scores = rec.score(q.title, q.abstract, q.year, (q.id,))
    assert set(lexical) | set(selected.tolist()) == set(cand.tolist())
    loaded = CitationRecommender.load(rec.save(tmp_path / "model"), snapshot=split.train)
    assert loaded.candidate_bm25_ is not None
    again, again_scores = loaded.score(q.title, q.abstract, q.year, (q.id,))
    np.testing.assert_array_equal(again, cand)
    np.testing.assert_allclose(again_scores, scores, rtol=1e-6)


def test_encoder_evidence_counts_the_citations_of_the_drafts_nearest_earlier_papers():
    # Papers 0-3; 1 and 2 cite 0, 3 cites 1. Vectors: 1, 2 and 3 all point the draft's way.
    snap = GraphSnapshot.build([{"id": f"p{i}", "year": 2000 + i, "title": f"t{i}"} for i in range(4)], [],
                               [("p1", "p0"), ("p2", "p0"), ("p3", "p1")])
    vectors = np.array([[0, 1], [1, 0], [1, 0.1], [1, 0.2]], dtype=np.float32)
    evidence = EncoderEvidence(vectors, snap, neighbours=2)
    draft = np.array([[1.0, 0.0]])
    pairs = evidence.pairs(draft, np.zeros(2, np.int64), np.array([0, 1]), np.array([2003]), [[]])
    np.testing.assert_allclose(pairs[:, 0], [0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(pairs[:, 1], np.log1p([2, 0]))  # neighbours 1 and 2 both cite 0
    # Capped at 2002 and with paper 1 excluded, the neighbours are 2 and 0: one citation of 0.
    capped = evidence.pairs(draft, np.zeros(2, np.int64), np.array([0, 1]), np.array([2002]), [[1]])
    np.testing.assert_allclose(capped[:, 1], np.log1p([1, 0]))
    # A draft without a vector has no neighbours.
    assert not evidence.pairs(np.zeros((1, 2)), np.zeros(2, np.int64), np.array([0, 1]), np.array([2003]),
                              [[]]).any()


def test_ranker_reading_a_pretrained_encoder_keeps_its_vectors_and_round_trips(tmp_path, split):
    texts = [split.train.text(i) for i in range(split.train.n_papers)]
    encoder = make_encoder("tfidf-svd", dim=8, min_df=1).fit(texts)
    with pytest.raises(ValueError, match="encoder="):
        CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK, use_encoder=True))
    rec = CitationRecommender(NNSelect(**SMALL_SELECT), NNRank(**SMALL_RANK, use_encoder=True, encoder_neighbours=5),
                              encoder=encoder, fusion=None).fit(split.train)
    assert rec.uses_encoder and rec.ranker.feature_names[-2:] == ENCODER_FEATURES
    np.testing.assert_allclose(rec.snapshot.semantic_vectors, encoder.encode_fields(*split.train.text_fields()),
                               atol=1e-6)
    q = split.queries[0]
    cand, scores = rec.score(q.title, q.abstract, q.year, (q.id,))
    loaded = CitationRecommender.load(rec.save(tmp_path / "model"))
    assert loaded.encoder is not None and loaded.encoder.key == encoder.key
    # The saved vectors serve the same papers: none is encoded again when the model indexes them.
    _, encoded = encoder_vectors(split.train, loaded.encoder, loaded.known_vectors_)
    assert encoded == 0
    loaded.index_snapshot(split.train)
    again, again_scores = loaded.score(q.title, q.abstract, q.year, (q.id,))
    np.testing.assert_array_equal(again, cand)
    np.testing.assert_allclose(again_scores, scores, rtol=1e-5)
    # Batch scoring ships the recommender to each partition: pickled, it scores the same.
    shipped, shipped_scores = pickle.loads(pickle.dumps(loaded)).score(q.title, q.abstract, q.year, (q.id,))
    np.testing.assert_array_equal(shipped, cand)
    np.testing.assert_allclose(shipped_scores, scores, rtol=1e-5)
    # A paper of the collection given as a draft is not its own neighbour: its citations are not evidence.
    me = split.train.n_papers - 1
    found = rec.selector.candidates(split.train.titles[me], split.train.abstracts[me], None,
                                    (split.train.paper_ids[me],))
    vector = rec.snapshot.semantic_vectors[me]
    own = rec.ranker.encoder_evidence_.pairs(vector[None, :], np.zeros(len(found.indexes), np.int64), found.indexes,
                                            np.array([NO_YEAR]), [[me]])
    nbrs, _ = rec.ranker.encoder_evidence_.index.search(vector[None, :], 5, exclude=[[me]])
    assert me not in nbrs[0] and own.shape == (len(found.indexes), 2)


@pytest.mark.parametrize("threads", [1, 0])
def test_training_runs_on_the_set_threads_and_restores_torch_s(split, monkeypatch, threads):
    """Two threads trained worse hep-th models than one (issue 28): both models train on `threads` (0: torch's
    own setting), and the process-wide setting is back afterwards."""
    seen: dict[str, int] = {}
    for model in (NNSelect, NNRank):
        def recording_fit(self, *args, _real=model._fit, _name=model.__name__):
            seen[_name] = torch.get_num_threads()
            return _real(self, *args)

        monkeypatch.setattr(model, "_fit", recording_fit)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        selector = NNSelect(**{**SMALL_SELECT, "epochs": 1, "threads": threads}).fit(split.train)
        NNRank(**{**SMALL_RANK, "epochs": 1, "threads": threads}).fit(split.train, selector)
        assert seen == {"NNSelect": 1 if threads else 2, "NNRank": 1 if threads else 2}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def _references_reversed(snapshot: GraphSnapshot) -> GraphSnapshot:
    """The same graph with each paper's references in reverse order (as a file may list them)."""
    cit = sp.csr_matrix(snapshot.citations, copy=True)
    for r in range(cit.shape[0]):
        lo, hi = cit.indptr[r], cit.indptr[r + 1]
        cit.indices[lo:hi] = cit.indices[lo:hi][::-1].copy()
        cit.data[lo:hi] = cit.data[lo:hi][::-1].copy()
    cit.has_sorted_indices = False
    return dataclasses.replace(snapshot, citations=cit)


def test_the_order_of_a_papers_references_does_not_change_the_model(split):
    """A snapshot read from files keeps references in file order, one from Neo4j sorts them: the same graph and
    seed must train the same models either way (on hep-th the two orders trained models 0.01 F1@20 apart)."""
    reversed_ = _references_reversed(split.train)
    assert not np.array_equal(reversed_.citations.indices, sp.csr_matrix(split.train.citations).indices)
    models = []
    for snapshot in (split.train, reversed_):
        selector = NNSelect(**{**SMALL_SELECT, "epochs": 1}).fit(snapshot)
        ranker = NNRank(**{**SMALL_RANK, "epochs": 1}).fit(snapshot, selector)
        models.append({**{f"s.{k}": v for k, v in selector.model_.state_dict().items()},
                       **{f"r.{k}": v for k, v in ranker.model_.state_dict().items()}})
    assert models[0].keys() == models[1].keys()
    assert all(torch.equal(models[0][k], models[1][k]) for k in models[0])


def test_the_previous_year_pipeline_trained_beside_this_one_gives_the_same_model(split, monkeypatch):
    """With one torch thread per training, the previous-year pipeline (the fusion choice) trains in a thread
    beside the served one: the same weights and the same choice as one after the other."""
    from scholargraph.ranking.citations import recommender as module

    monkeypatch.setattr(module, "MIN_VALIDATION_QUERIES", 5)  # the small world's last year has few drafts
    threads_seen: list[str] = []
    real = module.CitationRecommender._previous_year

    def recording(self, *args):
        threads_seen.append(threading.current_thread().name)
        return real(self, *args)

    monkeypatch.setattr(module.CitationRecommender, "_previous_year", recording)
    models, choices = [], []
    for concurrent in (True, False):
        rec = CitationRecommender(NNSelect(**{**SMALL_SELECT, "epochs": 1}), NNRank(**{**SMALL_RANK, "epochs": 1}),
                                  validation_queries=20, concurrent_validation=concurrent).fit(split.train)
        models.append({**{f"s.{k}": v for k, v in rec.selector.model_.state_dict().items()},
                       **{f"r.{k}": v for k, v in rec.ranker.model_.state_dict().items()}})
        choices.append((rec.fusion_validation_, rec.rrf_k))
    assert threads_seen == ["scholargraph-previous-year", threading.main_thread().name]
    assert choices[0] == choices[1] and choices[0][0]["model_as_of"] == split.train.max_year - 1
    assert models[0].keys() == models[1].keys()
    assert all(torch.equal(models[0][k], models[1][k]) for k in models[0])


def test_an_error_of_the_previous_year_pipeline_reaches_the_caller(split, monkeypatch):
    from scholargraph.ranking.citations import recommender as module

    def failing(self, *args):
        raise RuntimeError("the previous year failed")

    monkeypatch.setattr(module.CitationRecommender, "_previous_year", failing)
    rec = CitationRecommender(NNSelect(**{**SMALL_SELECT, "epochs": 1}), NNRank(**{**SMALL_RANK, "epochs": 1}))
    with pytest.raises(RuntimeError, match="the previous year failed"):
        rec.fit(split.train)
