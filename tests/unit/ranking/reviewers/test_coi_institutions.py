"""Conflicts beyond co-authorship: a shared institution within a window of years, an organisation's email
domain (public providers do not count), each with its reason; the assignment never gets a conflicted pair."""

from __future__ import annotations

import numpy as np
import pytest

from scholargraph.ranking.reviewers import assignment as solver
from scholargraph.ranking.reviewers.assign import affinity_table, build_problem
from scholargraph.ranking.reviewers.coi import (
    AUTHOR,
    EMAIL_DOMAIN,
    INSTITUTION,
    AuthorDetails,
    ConflictChecker,
    mail_domain,
)
from scholargraph.ranking.reviewers.query import ReviewerPool
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
