"""Conflicts beyond co-authorship: a shared institution within a window of years, an organisation's email
domain (public providers do not count), each with its reason; the assignment never gets a conflicted pair."""

from __future__ import annotations

import numpy as np
import pytest

from scholargraph.conference import assignment as solver
from scholargraph.conference.assignment.plan import build_problem
from scholargraph.conference.conflicts import (
    AUTHOR,
    EMAIL_DOMAIN,
    INSTITUTION,
    AuthorDetails,
    ConflictChecker,
    mail_domain,
)
from scholargraph.conference.submissions import ReviewerPool
from scholargraph.ranking.reviewers.assign import affinity_table
from scholargraph.ranking.reviewers.reco_rank import RecoRank

from .conftest import submission

POOL = ["E", "X", "J", "O", "N", "E2"]


def details() -> AuthorDetails:
    ids = ["E", "X", "J", "O", "N"]
    return AuthorDetails.from_nodes(ids, {
        "affiliations": [["2019-|Carnegie Mellon University"], ["2020|carnegie-mellon university"],
                         ["2005-2012|Carnegie Mellon University"], None, ["|Unknown Years Institute"]],
        "emails": [["jose@cmu.edu", "jose@gmail.com"], None, None, ["olu@cs.cmu.edu"], ["nia@gmail.com"]]})


def test_mail_domains():
    assert mail_domain("Ann@CS.CMU.edu") == "cmu.edu"
    assert mail_domain("bo@robots.ox.ac.uk") == "ox.ac.uk"
    assert mail_domain("cy@gmail.com") is None and mail_domain("dd@qq.com") is None
    assert mail_domain("not an address") is None


def test_institution_within_the_window_and_email_domain(world):
    q = submission(world, authors=("José Pérez",), year=2021)
    checker = ConflictChecker(world.snapshot, details=details(), institution_years=3)
    assert checker.explain(q) == {"E": AUTHOR, "E2": "coauthor 2016",
                                  "X": f"{INSTITUTION} Carnegie Mellon University",  # 2020: inside 2018..2021
                                  "O": f"{EMAIL_DOMAIN} cmu.edu"}  # J left CMU in 2012; N's gmail says nothing
    assert checker.conflicts(q)["O"] == EMAIL_DOMAIN
    ever = ConflictChecker(world.snapshot, details=details(), institution_years=None).explain(q)
    assert ever["J"] == f"{INSTITUTION} Carnegie Mellon University"
    # Without the details (no store read), only authors and co-authors, as before.
    assert set(ConflictChecker(world.snapshot).explain(q)) == {"E", "E2"}


def test_an_author_without_institution_or_email_has_no_such_conflicts(world):
    q = submission(world, authors=("Jo Ng",), year=2021)  # J: left CMU in 2012, no email
    assert ConflictChecker(world.snapshot, details=details()).explain(q) == {"J": AUTHOR}


@pytest.fixture(scope="module")
def model():
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex

    from .conftest import tiny_world

    snap, text, topics, cvec = tiny_world()
    index = EvidenceIndex(snap, text, topics, cvec, background=30, seed=0)
    return RecoRank(self_supervised=30, reviewer_centric=10, steps=20, recent_years=6).fit(index)


def test_the_assignment_never_gets_a_conflicted_pair(world, model):
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=POOL)
    queries = [submission(world, authors=("José Pérez",), qid="q1"), submission(world, qid="q2")]
    table = affinity_table(model, world, queries, pool, per_paper=10, details=details(), institution_years=3)
    pairs = {(table.papers[p], table.reviewers[r]) for p, r in zip(table.edge_paper, table.edge_reviewer)}
    conflicted = {("q1", r) for r in ("E", "E2", "X", "O")}
    assert not pairs & conflicted and ("q2", "X") in pairs
    note = next(n for n in table.notes if "conflict(s) of interest ruled out" in n)
    assert "author 1, coauthor 1, institution 1, email domain 1" in note and "q1 X (institution" in note
    problem = build_problem(table, demand=[2, 2], max_load=2)
    chosen = solver.solve(problem, "flow").chosen
    assigned = {(table.papers[table.edge_paper[e]], table.reviewers[table.edge_reviewer[e]])
                for e in np.flatnonzero(chosen)}
    assert len(assigned) == 4 and not assigned & conflicted


def new_submission(world, qid="q1", year=2021):
    """A submission by authors the graph does not know, with their own emails and affiliations (HotCRP's)."""
    q = submission(world, authors=("New Comer",), year=year, qid=qid)
    record = {"id": qid, "title": "t", "abstract": "a", "year": year, "references": ["x0", "x1", "r1"],
              "authors": [{"name": "New Comer", "email": "new@robots.cmu.edu",
                           "affiliation": "Carnegie-Mellon University"},
                          {"name": "Second Person", "email": "second@gmail.com"}]}
    return world.query_from_submission(record, text_vector=q.text_vector, topic_vector=q.topic_vector)


def test_a_new_submissions_own_emails_and_affiliations_are_conflicts(world):
    q = new_submission(world)
    assert q.author_emails == ("new@robots.cmu.edu", "second@gmail.com")
    assert q.author_affiliations == ("Carnegie-Mellon University",)
    checker = ConflictChecker(world.snapshot, details=details(), institution_years=3)
    # E is at CMU since 2019 (the institution comes first); O only shares the domain; gmail says nothing (N).
    assert checker.explain(q) == {"E": f"{INSTITUTION} Carnegie-Mellon University",
                                  "X": f"{INSTITUTION} Carnegie-Mellon University", "O": f"{EMAIL_DOMAIN} cmu.edu"}
    # Without details (no store read) or without the fields, nothing, as before.
    assert ConflictChecker(world.snapshot).explain(q) == {}
    bare = submission(world, authors=("New Comer",))
    assert ConflictChecker(world.snapshot, details=details()).explain(bare) == {}


def test_recommend_and_assign_rule_out_a_new_submissions_colleagues(world, model):
    from scholargraph.ranking.reviewers.batch import query_rows, row_query

    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=POOL)
    q = new_submission(world)
    # The fields travel with a query to the partition workers.
    again = row_query(query_rows([q]).iloc[0])
    assert again.author_emails == q.author_emails and again.author_affiliations == q.author_affiliations
    world.use_author_details(details(), institution_years=3)
    try:
        suggested = {s.reviewer_id for s in model.recommend(world, q, pool, k=len(POOL))}
    finally:
        world.use_author_details(None)
    assert suggested and not suggested & {"E", "X", "O"}
    queries = [q, submission(world, qid="q2")]
    table = affinity_table(model, world, queries, pool, per_paper=10, details=details(), institution_years=3)
    pairs = {(table.papers[p], table.reviewers[r]) for p, r in zip(table.edge_paper, table.edge_reviewer)}
    conflicted = {("q1", "E"), ("q1", "X"), ("q1", "O")}
    assert not pairs & conflicted and {("q2", "E"), ("q2", "X"), ("q2", "O")} <= pairs
    chosen = solver.solve(build_problem(table, demand=[2, 2], max_load=2), "flow").chosen
    assigned = {(table.papers[table.edge_paper[e]], table.reviewers[table.edge_reviewer[e]])
                for e in np.flatnonzero(chosen)}
    assert len(assigned) == 4 and not assigned & conflicted


def test_without_a_year_the_window_ends_at_the_datas_latest_year_affiliations_included(world):
    # A PC list imported in 2030 dates its affiliations from 2030, after the graph's latest paper.
    pc = AuthorDetails.from_nodes(["J"], {"affiliations": [["2030-|Example University"]], "emails": [None]})
    base = submission(world)
    q = world.query_from_submission({"id": "q", "title": "t", "authors": [{"name": "New Comer",
                                                                           "affiliation": "Example University"}]},
                                    text_vector=base.text_vector, topic_vector=base.topic_vector)
    assert q.year is None
    assert ConflictChecker(world.snapshot, details=pc).explain(q) == {"J": f"{INSTITUTION} Example University"}
