"""Reviewers' own expertise settings on InMemoryStore: each setting (exclusion, since, recency, source and venue
weights) changes the suggestions as expected, nothing changes without settings, and the settings survive a
re-ingest of the same records."""

from __future__ import annotations

import json

import pytest

from scholargraph.conference import profiles
from scholargraph.conference.profiles import ExpertiseSettings, parse_weight
from scholargraph.errors import UsageError
from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.records import Author, Authorship, Paper, PaperBundle, Venue
from scholargraph.ranking.reviewers import service

FIELDS = {"a": ("zorblat quenfir mavotel", "trisk"), "b": ("plonko vendrix caluth", "obrenna")}
SUBMISSION = {"id": "sub1", "title": "zorblat quenfir mavotel", "abstract": "zorblat quenfir mavotel study"}


def bundles() -> list[PaperBundle]:
    """Two fields, three reviewers each with four papers (2001-2004). Reviewer a1's papers also come from
    DBLP (a `dblp:` source id) and appeared at KDD; the others' from S2 only, at no venue."""
    out = []
    for field, (words, extra) in FIELDS.items():
        for k in range(3):
            author = Author(f"s2author:{field}{k}", f"Author {field.upper()} {k}")
            for year in range(2001, 2005):
                pid = f"s2:{field}{k}-{year}"
                a1 = field == "a" and k == 1
                out.append(PaperBundle(
                    paper=Paper(pid, f"{words} {extra}{k}", abstract=f"{words} study {year}", year=year,
                                venue_id="venue:kdd" if a1 else None,
                                sources=(pid, f"dblp:{field}{k}-{year}") if a1 else (pid,)),
                    authors=(author,), venue=Venue("venue:kdd", "KDD") if a1 else None,
                    authorships=(Authorship(author.id, pid, 1),)))
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    store, models = InMemoryStore(), tmp_path_factory.mktemp("models")
    store.write_bundles(bundles())
    service.train(store, models, min_papers=2, training_queries=10, steps=10)
    _, meta = service.load_model(models)
    return store, models, service.index_for_model(store, models, meta, True)


@pytest.fixture
def store(trained):
    """The trained world with every reviewer's settings removed again after the test."""
    store, _, _ = trained
    yield store
    ids, _ = store.read_nodes("Author")
    profiles.write_settings(store, {a: ExpertiseSettings() for a in ids})


def scores(trained, **kwargs) -> tuple[dict[str, float | None], list[str], list]:
    """Scores of the submission's reviewers (None: not scored), the warnings, and the suggestions."""
    store, models, index = trained
    warnings: list[str] = []
    [(_, suggestions)] = service.recommend(store, models, files=service.ReviewerFiles(records=[SUBMISSION]), k=6,
                                           index=index, warn=warnings.append, **kwargs)[0]
    return {s.reviewer_id: None if s.no_history else s.score for s in suggestions}, warnings, suggestions


def field_a_order(result: dict[str, float | None]) -> list[str]:
    scored = {r: s for r, s in result.items() if r.startswith("s2author:a") and s is not None}
    return sorted(scored, key=lambda r: -scored[r])


def test_no_settings_leave_every_score_unchanged_to_the_last_bit(trained, store):
    before, _, suggestions = scores(trained)
    assert all(s.expertise_settings is None and "expertise_settings" not in s.to_dict() for s in suggestions)
    # Settings of a reviewer of the other field leave the field-a reviewers' scores exactly as they were.
    profiles.set_profile(store, "s2author:b0", since=2003)
    after, _, _ = scores(trained)
    assert {r: s for r, s in after.items() if r.startswith("s2author:a")} == \
        {r: s for r, s in before.items() if r.startswith("s2author:a")}


def test_excluding_papers_removes_them_from_the_evidence(trained, store):
    before, _, _ = scores(trained)
    # All of a1's papers excluded (bare ids, as the user's data has them): a1 is named, never scored.
    profiles.set_profile(store, "a1", exclude=[f"a1-{y}" for y in range(2001, 2005)])
    after, warnings, suggestions = scores(trained)
    assert after.get("s2author:a1") is None and before["s2author:a1"] is not None
    assert any("1 reviewer(s) have expertise settings that leave no eligible paper" in w and "s2author:a1" in w
               for w in warnings)
    # Taken back one at a time: a paper excluded no longer counts, one included counts again.
    profiles.set_profile(store, "a1", include=["s2:a1-2004"])
    partial, _, suggestions = scores(trained)
    assert partial["s2author:a1"] is not None and partial["s2author:a1"] != before["s2author:a1"]
    [a1] = [s for s in suggestions if s.reviewer_id == "s2author:a1"]
    assert [p.paper_id for p in a1.papers] == ["s2:a1-2004"]
    assert a1.expertise_settings["excluded"] == ["s2:a1-2001", "s2:a1-2002", "s2:a1-2003"]
    assert "3 papers excluded" in a1.expertise_settings["summary"]


def test_since_and_recency_keep_only_the_later_papers(trained, store):
    profiles.set_profile(store, "s2author:a1", since=2004)
    since, _, suggestions = scores(trained)
    [a1] = [s for s in suggestions if s.reviewer_id == "s2author:a1"]
    assert {p.paper_id for p in a1.papers} == {"s2:a1-2004"}
    profiles.clear_profile(store, "s2author:a1")
    # The last year of the graph is 2004: a one-year window keeps the same paper, so the same score.
    profiles.set_profile(store, "s2author:a1", recent_years=1)
    recent, _, _ = scores(trained)
    assert recent["s2author:a1"] == since["s2author:a1"]
    # With a year given as the evidence cut, the window ends there: 2003 alone, before the cut nothing later.
    cut, _, suggestions = scores(trained, evidence_until=2003)
    [a1] = [s for s in suggestions if s.reviewer_id == "s2author:a1"]
    assert {p.paper_id for p in a1.papers} == {"s2:a1-2003"}
    assert cut["s2author:a1"] is not None


@pytest.mark.parametrize("key", ["source:dblp", "venue:KDD"])
def test_a_source_or_venue_weight_moves_the_reviewer(trained, store, key):
    profiles.set_profile(store, "s2author:a1", weights=[parse_weight(f"{key}=0.05")])
    down, _, suggestions = scores(trained)
    assert field_a_order(down)[-1] == "s2author:a1"
    [a1] = [s for s in suggestions if s.reviewer_id == "s2author:a1"]
    assert list(a1.expertise_settings["weights"].values()) == [0.05]
    # A venue weight is kept under the venue's id, whatever form it was given in.
    assert list(a1.expertise_settings["weights"]) == ["source:dblp" if key.startswith("source") else "venue:venue:kdd"]
    profiles.set_profile(store, "s2author:a1", weights=[parse_weight(f"{key}=5")])
    up, _, _ = scores(trained)
    assert field_a_order(up)[0] == "s2author:a1"
    # A weight on a source or venue the reviewer's papers do not have changes nothing.
    profiles.clear_profile(store, "s2author:a1")
    plain, _, _ = scores(trained)
    profiles.set_profile(store, "s2author:a2", weights=[parse_weight(f"{key}=5")])
    assert scores(trained)[0] == plain


def test_settings_survive_a_reingest_and_are_shown(trained, store):
    profiles.set_profile(store, "s2author:a1", exclude=["s2:a1-2001"], since=2002, weights=[("source:dblp", 0.5)])
    store.write_bundles(bundles())  # the same records again
    kept = profiles.read_settings(store)["s2author:a1"]
    assert kept == ExpertiseSettings(("s2:a1-2001",), 2002, None, (("source:dblp", 0.5),))
    _, _, index = trained
    view = profiles.show_profile(store, index.snapshot, "s2author:a1")
    assert [(p["paper_id"], p["weight"], p["left_out"]) for p in view.papers] == [
        ("s2:a1-2001", 0.0, "excluded"), ("s2:a1-2002", 0.5, None), ("s2:a1-2003", 0.5, None),
        ("s2:a1-2004", 0.5, None)]
    assert view.n_eligible == 3


def test_clear_removes_only_what_is_named(store):
    profiles.set_profile(store, "s2author:a1", exclude=["s2:a1-2001"], since=2002, recent_years=2)
    _, left = profiles.clear_profile(store, "s2author:a1", ["since"])
    assert left == ExpertiseSettings(("s2:a1-2001",), None, 2, ())
    _, left = profiles.clear_profile(store, "s2author:a1")
    assert left.empty and "s2author:a1" not in profiles.read_settings(store)
    ids, values = store.read_nodes("Author", profiles.PROPERTIES)
    assert all(values[p][ids.index("s2author:a1")] is None for p in profiles.PROPERTIES)


def test_unknown_ids_and_bad_weights_are_one_clear_error(store):
    with pytest.raises(UsageError, match="no author in the graph has the id nobody"):
        profiles.set_profile(store, "nobody", since=2000)
    with pytest.raises(UsageError, match="--exclude: 1 of 2 paper ids are not in the graph"):
        profiles.set_profile(store, "a1", exclude=["a1-2001", "nope"])
    with pytest.raises(UsageError, match="'ICML' is no venue id or name"):
        profiles.set_profile(store, "a1", weights=[("venue:ICML", 2.0)])
    assert profiles.read_settings(store) == {}  # nothing half-written
    for bad in ("dblp=0.5", "source:dblp", "source:dblp=-1", "source:dblp=nan", "author:x=1", "source:DBLP X=1"):
        with pytest.raises(ValueError):
            parse_weight(bad)


def test_import_replaces_the_listed_reviewers_and_reports_unknown_ids(store, tmp_path):
    profiles.set_profile(store, "s2author:a2", since=2003)
    path = tmp_path / "settings.jsonl"
    lines = [{"reviewer": "a1", "exclude": ["a1-2001", "ghost"], "weights": {"venue:kdd": 2}},
             {"reviewer": "s2author:a2", "recent_years": 2},
             {"reviewer": "nobody", "since": 2000}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    report = profiles.import_settings(store, profiles.read_settings_file(str(path)))
    assert report.written == 2
    warnings = report.warnings()
    assert any(w.startswith("1 reviewer ids are not in the graph") and "nobody" in w for w in warnings)
    assert any(w.startswith("1 excluded paper ids") and "ghost" in w for w in warnings)
    settings = profiles.read_settings(store)
    assert settings["s2author:a1"] == ExpertiseSettings(("s2:a1-2001",), None, None, (("venue:venue:kdd", 2.0),))
    assert settings["s2author:a2"] == ExpertiseSettings((), None, 2, ())  # replaced: its `since` is gone
    path.write_text('{"reviewer": "a1"}\n{"reviewer": "a2", "weights": {"source:dblp": "heavy"}}\n',
                    encoding="utf-8")
    with pytest.raises(UsageError, match=r"settings.jsonl:2: 'weights' must be"):
        profiles.read_settings_file(str(path), "FILE")


def test_the_reviewers_job_honours_the_settings(trained, store):
    from scholargraph.ranking.jobs import run_pipeline

    _, models, _ = trained
    profiles.set_profile(store, "s2author:a1", exclude=[f"s2:a1-{y}" for y in range(2001, 2005)])
    note = dict(run_pipeline(store, models, only=("reviewers",), full=True).steps)["reviewers"]
    assert "leave no eligible paper" in note and "s2author:a1" in note
    suggested = {source for source, _, _ in store._edges["SUGGESTED_REVIEWER"]}  # what the run wrote
    assert "s2author:a2" in suggested and "s2author:a1" not in suggested


def test_assign_honours_the_settings_and_reports_them(trained, store, tmp_path):
    from scholargraph.conference.assignment.plan import AssignmentRequest
    from scholargraph.ranking.reviewers.assign import plan_assignment

    _, models, index = trained
    model_and_meta = service.load_model(models)
    request = AssignmentRequest(paper_ids=["s2:b0-2004"], per_paper=2, max_load=1)
    before = plan_assignment(store, models, request, index=index, model_and_meta=model_and_meta)
    assert "s2author:b1" in {r["reviewer"] for r in before.rows()}
    assert not any("expertise settings" in n for n in before.table.notes)
    profiles.set_profile(store, "s2author:b1", since=2005)  # no paper left
    after = plan_assignment(store, models, request, index=index, model_and_meta=model_and_meta)
    assert "s2author:b1" not in {r["reviewer"] for r in after.rows()}
    assert any(n.startswith("expertise settings of 1 reviewer(s) applied (e.g. s2author:b1 (since 2005))")
               for n in after.table.notes)
    assert any("leave no eligible paper" in n for n in after.table.notes)
