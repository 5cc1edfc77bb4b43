"""The reviewer use cases on InMemoryStore: train through the registry (a new version each time), load the
current model, recommend."""

from __future__ import annotations

import json

import pytest

from scholargraph.errors import NotFitted
from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.records import Author, Authorship, Citation, Paper, PaperBundle
from scholargraph.graph.snapshot_cache import cache_root
from scholargraph.ranking.reviewers import service

FIELDS = {"a": ("zorblat quenfir mavotel", "trisk"), "b": ("plonko vendrix caluth", "obrenna"),
          "c": ("grelmin tassovar pindle", "ulvoro")}


def world() -> InMemoryStore:
    """Three fields, three authors each with four papers (one per year 2001-2004), citations within a field."""
    store = InMemoryStore()
    bundles = []
    for field, (words, extra) in FIELDS.items():
        for k in range(3):
            author = Author(f"{field}{k}", f"Author {field.upper()} {k}", sources=(f"{field}{k}",))
            for year in range(2001, 2005):
                pid = f"{field}{k}-{year}"
                cites = [Citation(pid, f"{field}{(k + 1) % 3}-{year - 1}")] if year > 2001 else []
                bundles.append(PaperBundle(paper=Paper(pid, f"{words} {extra}{k}", abstract=f"{words} study {year}",
                                                       year=year, sources=(pid,)),
                                           authors=(author,), authorships=(Authorship(author.id, pid, 1),),
                                           citations=tuple(cites)))
    store.write_bundles(bundles)
    return store


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    store, models = world(), tmp_path_factory.mktemp("models")
    first = service.train(store, models, min_papers=2, training_queries=10, steps=10)
    return store, models, first


def test_train_publishes_a_new_version_each_time(trained):
    store, models, first = trained
    meta = json.loads((models / "reviewers" / "current.json").read_text())
    assert meta["path"] == str(first.path) and first.path.parent == models / "reviewers"
    assert meta["min_papers"] == 2 and first.pool_size == 9
    second = service.train(store, models, min_papers=2, training_queries=10, steps=10)
    assert second.path != first.path  # versions to the microsecond: two trainings in one second differ
    assert service.registry(models).versions() == sorted([first.path.name, second.path.name])
    model, meta = service.load_model(models)
    assert meta["version"] == second.path.name and model.params == second.model.params


def test_no_model_says_how_to_train_one(tmp_path):
    with pytest.raises(NotFitted, match="no reviewer model: run `scholargraph reviewers train` first"):
        service.load_model(tmp_path)


def test_recommend_ranks_the_pool_and_warns_about_unknown_ids(trained):
    # The evidence is read once, then recommend runs without a store.
    store, models, _ = trained
    _, meta = service.load_model(models)
    index = service.index_for_model(store, models, meta, True)
    warnings: list[str] = []
    results, note = service.recommend(None, models, paper_ids=["a0-2004", "nope"], k=3, index=index,
                                      warn=warnings.append)
    assert len(warnings) == 1 and "nope" in warnings[0] and note == ""
    [(query, suggestions)] = results
    assert query.id == "a0-2004" and [s.rank for s in suggestions] == [1, 2, 3]
    assert "a0" not in {s.reviewer_id for s in suggestions}  # the author is in conflict


def test_the_jobs_reviewers_step_publishes_a_run_then_rescores_only_the_changed_papers(tmp_path):
    from scholargraph.ranking.jobs import run_pipeline

    store, models = world(), tmp_path / "models"
    service.train(store, models, min_papers=2, training_queries=10, steps=10)
    first = run_pipeline(store, models, only=("reviewers",))
    run = store.current_run("reviewers")
    assert run is not None and run["status"] == "succeeded" and "reviewers" in dict(first.steps)
    suggested = store.stats()["relationships"]["SUGGESTED_REVIEWER"]
    assert suggested > 0
    words = FIELDS["b"][0]
    store.write_bundles([PaperBundle(paper=Paper("new-2004", f"{words} fresh", abstract=words, year=2004,
                                                 sources=("new-2004",)))])
    second = run_pipeline(store, models, only=("reviewers",))
    assert dict(second.steps)["reviewers"].startswith("1 papers changed")
    rerun = store.current_run("reviewers")
    assert rerun["id"] != run["id"] and store.stats()["relationships"]["SUGGESTED_REVIEWER"] > suggested
    assert dict(run_pipeline(store, models, only=("reviewers",)).steps)["reviewers"].startswith("nothing changed")


# --- the evidence is built once per graph state --------------------------------------------------------------


def _entries(models):
    root = cache_root(models) / service.EVIDENCE_CACHE
    return sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) if root.exists() else []


def _same_index(a, b, atol=0.0):
    """`atol`: an index built afresh without a graph encoder fits its own TF-IDF + SVD, equal to float noise."""
    import numpy as np

    assert a.snapshot.paper_ids == b.snapshot.paper_ids and a.snapshot.author_ids == b.snapshot.author_ids
    assert a.snapshot.titles == b.snapshot.titles and (a.snapshot.citations != b.snapshot.citations).nnz == 0
    for name in ("text", "topics", "cvec", "background"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=0, atol=atol)
    assert (a.lexical is None) == (b.lexical is None)
    if a.lexical is not None:
        np.testing.assert_allclose(a.lexical.toarray(), b.lexical.toarray(), rtol=0, atol=atol)


def test_recommend_reuses_the_evidence_until_the_graph_changes(tmp_path, monkeypatch):
    from scholargraph.graph.snapshot import GraphSnapshot

    store, models = world(), tmp_path / "models"
    service.train(store, models, min_papers=2, training_queries=10, steps=10)
    assert len(_entries(models)) == 1  # training built the evidence of this state once
    first, _ = service.recommend(store, models, paper_ids=["a0-2004", "b1-2003"], k=3)

    pulls = []
    real = GraphSnapshot.from_store.__func__
    monkeypatch.setattr(GraphSnapshot, "from_store",
                        classmethod(lambda cls, *a, **kw: pulls.append(1) or real(cls, *a, **kw)))
    again, _ = service.recommend(store, models, paper_ids=["a0-2004", "b1-2003"], k=3)
    assert pulls == []  # nothing pulled: the cached evidence served the call
    assert [[(s.reviewer_id, s.score) for s in sugg] for _, sugg in again] == \
           [[(s.reviewer_id, s.score) for s in sugg] for _, sugg in first]
    cached = service.build_index(store, models, quiet=True)
    _same_index(cached, service.build_index(store, models, quiet=True, cache=False), atol=1e-6)
    assert len(pulls) == 1  # cache=False pulls

    store.write_bundles([PaperBundle(paper=Paper("c0-2005", "grelmin tassovar", abstract="grelmin 2005", year=2005,
                                                 sources=("c0-2005",)), authors=(Author("c0", "Author C 0"),),
                                     authorships=(Authorship("c0", "c0-2005", 1),))])
    changed = service.build_index(store, models, quiet=True)
    assert len(pulls) == 2 and "c0-2005" in changed.snapshot.paper_index  # a new paper: built again
    store.write_bundles([PaperBundle(paper=Paper("c0-2006", "grelmin", abstract="grelmin 2006", year=2006,
                                                 sources=("c0-2006",)), authors=(Author("c0", "Author C 0"),),
                                     authorships=(Authorship("c0", "c0-2006", 1),))])
    service.build_index(store, models, quiet=True)
    assert len(_entries(models)) == service.KEEP_CACHED  # older states are dropped


def test_a_broken_cache_entry_is_rebuilt(tmp_path):
    store, models = world(), tmp_path / "models"
    built = service.build_index(store, models, quiet=True)
    (entry,) = _entries(models)
    (cache_root(models) / service.EVIDENCE_CACHE / entry / "evidence.npz").write_bytes(b"not an npz")
    rebuilt = service.build_index(store, models, quiet=True)
    _same_index(built, rebuilt, atol=1e-6)
    _same_index(rebuilt, service.build_index(store, models, quiet=True))  # and cached again, read back exactly


def test_a_cached_index_answers_submissions_given_as_text(tmp_path):
    """Without the graph's own models the index fits its encoder and topic model: the cache keeps them beside
    the vectors, so a text submission on the warm path is encoded by the very models the evidence came from."""
    import numpy as np

    store, models = world(), tmp_path / "models"
    built = service.build_index(store, models, quiet=True)
    cached = service.build_index(store, models, quiet=True)
    assert cached._load_topic_model is not None  # not loaded until a text needs it
    texts = ["zorblat quenfir mavotel trisk study", "grelmin tassovar pindle"]
    for a, b in zip(built.encode_texts(texts), cached.encode_texts(texts)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    assert cached._load_topic_model is None and cached.topic_model is not None


def test_a_submissions_year_is_no_evidence_cut_unless_asked(trained):
    # Every reviewer's papers are of 2001-2004: a draft of 2000 judged as of its year has no evidence at all.
    store, models, _ = trained
    _, meta = service.load_model(models)
    index = service.index_for_model(store, models, meta, True)
    record = {"id": "draft", "title": "zorblat quenfir mavotel trisk0", "abstract": "zorblat study"}
    listed = {"draft": ["a0", "b1", "c2"]}

    def run(rec, **cut):
        warnings: list[str] = []
        files = service.ReviewerFiles(records=[rec], candidates=listed)
        [(_, suggestions)], _ = service.recommend(None, models, files=files, index=index, warn=warnings.append,
                                                  **cut)
        return {s.reviewer_id: (s.score, s.no_history) for s in suggestions}, warnings

    undated, none_said = run(record)
    dated, none_said_either = run({**record, "year": 2000})
    assert dated == undated and none_said == none_said_either == []  # the year alone changes nothing
    assert not any(no_history for _, no_history in dated.values())
    cut, said = run({**record, "year": 2000}, evidence_until="submission")
    assert all(no_history for _, no_history in cut.values())
    assert said == ["3 of 3 (submission, reviewer) pairs have no eligible evidence (no paper up to the "
                    "submission's year): their score is not given (e.g. draft a0, draft b1, draft c2)"]
    as_of_2002, said_2002 = run(record, evidence_until=2002)
    assert said_2002 == [] and as_of_2002 != undated  # later papers no longer count
