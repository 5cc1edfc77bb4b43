"""Evidence: semantic, topic and citation scores, missing-evidence masks, pools and the pre-shortlist."""

import numpy as np
import pytest
import scipy.sparse as sp

from scholargraph.conference.submissions import ReviewerPool
from scholargraph.errors import NotFitted, UsageError
from scholargraph.ranking.reviewers.evidence import CITATION_PARTS, QUERY_FEATURES, EvidenceIndex, topic_similarity

from .conftest import submission, tiny_world

VEC, DIRECT, COUPLING, COCIT = (CITATION_PARTS.index(k) for k in ("vector", "direct", "coupling", "cocitation"))


def _paper_row(ev, index, pid):
    i = index.snapshot.paper_index[pid]
    r, j = np.argwhere(ev.papers == i)[0]
    return r, j


def test_pool_from_snapshot_counts_papers(world):
    pool = ReviewerPool.from_snapshot(world.snapshot, min_papers=3)
    assert {"E", "X", "O", "N"} <= set(pool.author_ids) and "J" not in pool.author_ids
    given = ReviewerPool.from_snapshot(world.snapshot, author_ids=["J", "ghost"])
    assert given.author_ids == ["J", "ghost"] and list(given.n_papers) == [1, 0] and given.author_rows[1] == -1
    assert list(given.rows(["ghost", "nobody"])) == [1, -1]


def test_citation_parts_direct_coupling_cocitation(world):
    q = submission(world)
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["X"])
    ev = world.evidence(q, pool, max_papers=None)
    r, j = _paper_row(ev, world, "x0")
    assert ev.citation_parts[r, j, DIRECT] == 1 and ev.citation[r, j] == 1
    r, j = _paper_row(ev, world, "x2")  # x2 cites r1, as the submission does: coupling 1 / sqrt(3 refs * 1)
    assert ev.citation_parts[r, j, DIRECT] == 0
    assert ev.citation_parts[r, j, COUPLING] == pytest.approx(1 / np.sqrt(3))
    r, j = _paper_row(ev, world, "x3")  # c1 cites r1 and x3: co-cited once, shrunk by (1 citer + 2)
    assert ev.citation_parts[r, j, COCIT] == pytest.approx(1 / 3)
    assert ev.mask[ev.valid][:, 2].all()


def test_missing_evidence_is_masked_not_zero(world):
    q = submission(world)
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["E", "N"])
    ev = world.evidence(q, pool, max_papers=None)
    r, j = _paper_row(ev, world, "notext")  # no title/abstract: no semantic or topic evidence, but it cites e1
    assert list(ev.mask[r, j]) == [False, False, True]
    r, j = _paper_row(ev, world, "n0")  # no citation edge at all: citation evidence missing
    assert list(ev.mask[r, j]) == [True, True, False]
    no_refs = submission(world, refs=())
    ev2 = world.evidence(no_refs, pool, max_papers=None)
    assert not ev2.mask[..., 2].any() and ev2.query_features[QUERY_FEATURES.index("has_refs")] == 0
    unknown = submission(world, refs=("not-in-graph",))
    assert len(unknown.references) == 0 and unknown.citation_vector is None


def test_papers_after_the_submission_and_the_submission_itself_are_not_evidence(world):
    q = submission(world, year=2018)
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["E"])
    ev = world.evidence(q, pool, max_papers=None)
    ids = {world.snapshot.paper_ids[i] for i in ev.papers[ev.valid]}
    assert ids == {"e_old", "e0", "e1", "e2", "notext"}  # e3 (2019) and e_future (2025) come later
    held = world.query_for_paper("e2")
    assert held.paper_index == world.snapshot.paper_index["e2"]
    assert [world.snapshot.paper_ids[i] for i in held.references] == ["e1"]
    ev = world.evidence(held, pool, max_papers=None)
    assert world.snapshot.paper_index["e2"] not in set(ev.papers[ev.valid].tolist())


def test_reviewer_without_history_is_flagged(world):
    q = submission(world)
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["E", "ghost"])
    ev = world.evidence(q, pool)
    assert list(ev.no_history) == [False, True] and not ev.valid[1].any()


def test_pre_shortlist_keeps_each_evidence_best(world):
    q = submission(world)
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=["X"])
    full = world.evidence(q, pool, max_papers=None)
    short = world.evidence(q, pool, max_papers=2, per_evidence=1)
    assert full.valid.sum() == 4 and short.valid.sum() <= 2
    best_sem = full.papers[0, np.argmax(np.where(full.valid[0], full.semantic[0], -9))]
    assert best_sem in short.papers[0]


def test_topic_similarity_bounds():
    q = np.array([1.0, 0.0, 0.0])
    sims = topic_similarity(q, np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]]))
    assert sims[0] == pytest.approx(1.0) and sims[1] == pytest.approx(0.0, abs=1e-6) and 0 < sims[2] < 1


def test_text_submissions_need_an_encoder(world):
    with pytest.raises(NotFitted):
        world.query_from_submission({"id": "q", "title": "words"})
    with pytest.raises(UsageError):
        world.query_for_paper("nope")


def test_lexical_rows_are_a_second_semantic_component():
    snap, text, topics, cvec = tiny_world()
    words = sp.csr_matrix(np.where(text > 0.5, 1.0, 0.0))  # exact-term rows: a paper's dominant axis only
    index = EvidenceIndex(snap, text, topics, cvec, background=30, lexical=words)
    q = index.query_for_paper("e3")
    assert q.lexical_vector is not None
    pool = ReviewerPool.from_snapshot(snap, author_ids=["E", "X"])
    ev = index.evidence(q, pool, max_papers=None)
    r, j = _paper_row(ev, index, "e0")
    assert ev.lexical[r, j] == pytest.approx(1.0)  # same dominant term
    r, j = _paper_row(ev, index, "x0")
    assert ev.lexical[r, j] == pytest.approx(0.0) and ev.semantic[r, j] > 0.2  # latent overlap only
    assert ev.background[7] > 0 and len(ev.query_features) == len(QUERY_FEATURES)
