"""The assignment use case without a server: the chair's files, seniority, the affinity table (conflicts,
forbidden and forced pairs) and the whole plan on the tiny world with a real (small) RECO-Rank."""

from __future__ import annotations

import numpy as np
import pytest

from scholargraph.conference.assignment import InfeasibleAssignment, Requirement
from scholargraph.conference.assignment.plan import (
    SENIOR,
    AssignmentRequest,
    build_problem,
    parse_requirement,
    read_attributes,
    read_loads,
    senior_flags,
)
from scholargraph.conference.declared import PAIRS, read_declared
from scholargraph.conference.submissions import ReviewerPool
from scholargraph.errors import UsageError
from scholargraph.ranking.reviewers.assign import affinity_table, plan_assignment
from scholargraph.ranking.reviewers.reco_rank import RecoRank

from .conftest import submission

POOL = ["E", "X", "J", "O", "N", "E2"]


@pytest.fixture(scope="module")
def model():
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex

    from .conftest import tiny_world

    snap, text, topics, cvec = tiny_world()
    index = EvidenceIndex(snap, text, topics, cvec, background=30, seed=0)
    return RecoRank(self_supervised=30, reviewer_centric=10, steps=20, recent_years=6).fit(index)


def test_file_parsers_take_comma_tab_or_space_and_skip_headers(tmp_path):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("paper,reviewer\nq1,E\n# a comment\n\nq2\tX\nq3 J\n", encoding="utf-8")
    forbid = read_declared(str(pairs), "--forbid")  # --forbid and --force read the tools' layouts too
    assert forbid.layout == PAIRS and [(p.paper, p.reviewer) for p in forbid.conflicts] == [("q1", "E"), ("q2", "X"),
                                                                                              ("q3", "J")]
    loads = tmp_path / "loads.tsv"
    loads.write_text("reviewer max min\nE 2\nX 4 1\n", encoding="utf-8")
    assert read_loads(loads) == {"E": (2, None), "X": (4, 1)}
    loads.write_text("E 2 3\n", encoding="utf-8")
    with pytest.raises(UsageError, match="min <= max"):
        read_loads(loads)
    attrs = tmp_path / "attrs.csv"
    attrs.write_text("reviewer,senior,industry\nE,1,no\nX,true,Yes\n", encoding="utf-8")
    assert read_attributes(attrs) == {"senior": {"E": True, "X": True}, "industry": {"E": False, "X": True}}
    assert parse_requirement("industry>=2") == Requirement("industry", 2)
    with pytest.raises(UsageError, match="ATTRIBUTE>=N"):
        parse_requirement("industry=2")
    bad = tmp_path / "bad.txt"
    bad.write_text("q1\n", encoding="utf-8")
    with pytest.raises(UsageError, match="bad.txt:1"):
        read_declared(str(bad), "--force", plain="forced")


def test_senior_rules(world, tmp_path):
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=POOL)
    flags, words = senior_flags("papers>=4", pool, world.snapshot, lambda given: {})
    assert dict(zip(POOL, flags.tolist())) == {"E": True, "X": True, "J": False, "O": False, "N": False, "E2": False}
    assert "4 papers" in words
    flags, _ = senior_flags("years>=10", pool, world.snapshot, lambda given: {})
    assert flags[POOL.index("E")] and not flags[POOL.index("J")]  # E's first paper is 2005, J's 2019
    listed = tmp_path / "senior.txt"
    listed.write_text("J\nunknown\n", encoding="utf-8")
    flags, _ = senior_flags(str(listed), pool, world.snapshot, lambda given: {})
    assert flags.tolist() == [p == "J" for p in POOL]
    with pytest.raises(UsageError, match="papers>=N"):
        senior_flags("seniors", pool, world.snapshot, lambda given: {})


def test_affinity_table_rules_out_conflicts_and_obeys_forbid_and_force(world, model):
    pool = ReviewerPool.from_snapshot(world.snapshot, author_ids=POOL)
    # E2 co-authored with E: a submission by E conflicts with both.
    queries = [submission(world, authors=("José Pérez",), qid="q1"), submission(world, qid="q2")]
    table = affinity_table(model, world, queries, pool, per_paper=10, forbid=[("q2", "X")], force=[("q1", "E")])
    pairs = {(table.papers[p], table.reviewers[r]) for p, r in zip(table.edge_paper, table.edge_reviewer)}
    assert ("q1", "E2") not in pairs and ("q1", "E") in pairs  # the conflict out, the forced conflict in
    assert ("q2", "X") not in pairs and ("q2", "E") in pairs
    assert table.forced.sum() == 1 and any("override a conflict" in n for n in table.notes)
    q2 = table.edge_paper == 1
    ranks = table.rank[q2][np.argsort(-table.affinity[q2], kind="stable")]
    assert ranks.tolist() == sorted(ranks.tolist())  # ranks follow the affinities
    problem = build_problem(table, demand=[2, 2], max_load=1, loads={"E": (2, 1)})
    assert problem.max_load[POOL.index("E")] == 2 and problem.min_load[POOL.index("E")] == 1
    with pytest.raises(UsageError, match="no reviewer attribute 'senior'"):
        build_problem(table, demand=[2, 2], max_load=1, requirements=[Requirement(SENIOR, 1)])


def test_plan_assignment_end_to_end_without_a_server(world, model, tmp_path):
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(POOL), encoding="utf-8")
    request = AssignmentRequest(paper_ids=["e1", "x1", "o1"], pool_file=str(pool), per_paper=2, max_load=2,
                                senior="papers>=3")
    outcome = plan_assignment(None, tmp_path, request, index=world, model_and_meta=(model, {"version": "t"}))
    rows = outcome.rows()
    assert [r["paper"] for r in rows].count("e1") == 2 and len(rows) == 6
    assert max(np.bincount(outcome.table.edge_reviewer[outcome.assignment.chosen])) <= 2
    assert outcome.assignment.method == "flow" and outcome.baseline.method == "greedy"
    # Authors never review their own paper.
    assert not [r for r in rows if (r["paper"], r["reviewer"]) in {("e1", "E"), ("e1", "E2"), ("x1", "X"),
                                                                    ("o1", "O")}]
    short = AssignmentRequest(paper_ids=["e1", "x1", "o1"], pool_file=str(pool), per_paper=3, max_load=1)
    with pytest.raises(InfeasibleAssignment, match="capacity 6 < 9 slots"):
        plan_assignment(None, tmp_path, short, index=world, model_and_meta=(model, {"version": "t"}))


def test_a_submission_year_cuts_the_evidence_only_when_asked(world, model, tmp_path):
    # x0 is of 2012; J's only paper is of 2019 and E has one of 2005: cut at the submission's year, J has no
    # evidence; by default J is judged on that paper.
    pool = tmp_path / "pool.txt"
    pool.write_text("E\nJ\n", encoding="utf-8")

    def plan(**cut):
        request = AssignmentRequest(paper_ids=["x0"], pool_file=str(pool), per_paper=1, max_load=1, **cut)
        return plan_assignment(None, tmp_path, request, index=world, model_and_meta=(model, {"version": "t"}))

    default = plan()
    assert {default.table.reviewers[r] for r in default.table.edge_reviewer} == {"E", "J"}
    assert not any("no eligible evidence" in n for n in default.table.notes)
    cut = plan(evidence_until="submission")
    assert {cut.table.reviewers[r] for r in cut.table.edge_reviewer} == {"E"}  # never on a placeholder score
    assert any(n.startswith("1 (submission, reviewer) pair(s) have no eligible evidence") and "x0 J" in n
               for n in cut.table.notes)
    assert [r["reviewer"] for r in cut.rows()] == ["E"] and cut.rows()[0]["affinity"] is not None


def assign_a_forced_pair_without_evidence(index, model, tmp_path):
    """x0 (2012) with E and J in the pool, (x0, J) forced, judged up to the submission's year: J's only paper
    is of 2019, so the forced pair has no affinity."""
    pool = tmp_path / "pool.txt"
    pool.write_text("E\nJ\n", encoding="utf-8")
    force = tmp_path / "force.txt"
    force.write_text("x0 J\n", encoding="utf-8")
    request = AssignmentRequest(paper_ids=["x0"], pool_file=str(pool), force_file=str(force), per_paper=2,
                                max_load=1, evidence_until="submission")
    return plan_assignment(None, tmp_path, request, index=index, model_and_meta=(model, {"version": "t"}))


def test_a_forced_pair_without_evidence_counts_in_no_total(world, model, tmp_path):
    """J has no evidence up to x0's year (2012): the forced pair (x0, J) has no affinity. The summary printed
    `total affinity -1.0000` (the placeholder score added in); it counts the pair apart now, with an example."""
    from scholargraph.conference.assignment import format_summary, summarize

    outcome = assign_a_forced_pair_without_evidence(world, model, tmp_path)
    [e, j] = outcome.rows()
    assert (e["reviewer"], j["reviewer"], j["affinity"]) == ("E", "J", None)
    for assignment in (outcome.assignment, outcome.baseline):
        summary = summarize(assignment)
        assert summary["total_affinity"] == pytest.approx(e["affinity"])
        assert summary["mean_pair_affinity"] == pytest.approx(e["affinity"])
        assert summary["unscored_pairs"] == 1
        lines = format_summary(summary)
        assert "1 assigned pair(s) have no affinity (no eligible evidence) and count in no total or mean: x0 J" in lines
        # x0's total is unknown: no per-paper figure, where `worst 0.0000 (x0)` was printed.
        assert summary["worst_paper_total"] is summary["mean_paper_total"] is None
        assert (summary["papers_without_total"], summary["papers_without_total_examples"]) == (1, ["x0"])
        assert not any("0.0000 (x0)" in line or "per-paper totals" in line for line in lines)


def test_the_table_says_which_arcs_are_scored_and_no_evidence_text_does(world, model, tmp_path):
    """Whether an arc has an affinity was read from its evidence text (`...no eligible evidence` at its end); the
    table that the model fills says it now, and the problem and the rows follow the table."""
    outcome = assign_a_forced_pair_without_evidence(world, model, tmp_path)
    t = outcome.table
    assert [(t.reviewers[r], bool(s)) for r, s in zip(t.edge_reviewer, t.scored)] == [("E", True), ("J", False)]
    np.testing.assert_array_equal(outcome.problem.scored, t.scored)
    # An evidence text is for people: one that happens to end like the placeholder's changes nothing.
    t.evidence = [f"{line}; no eligible evidence" if s else "" for line, s in zip(t.evidence, t.scored)]
    problem = build_problem(t, demand=[2], max_load=1)
    np.testing.assert_array_equal(problem.scored, t.scored)
    assert [r["affinity"] is None for r in outcome.rows()] == [False, True]
