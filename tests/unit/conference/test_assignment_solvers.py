"""Reviewer-paper assignment solvers: hard constraints, optimality against brute force, the feasibility check,
the randomised method's probabilities, and dependent rounding on its own."""

from __future__ import annotations

import itertools
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp

from scholargraph.conference.assignment import (
    Assignment,
    AssignmentProblem,
    InfeasibleAssignment,
    Requirement,
    SolverTimeLimit,
    build_network,
    check_feasibility,
    compare_lines,
    format_summary,
    probability_cap,
    require_feasible,
    round_flow,
    solve,
    solve_greedy,
    solve_network,
    summarize,
)
from scholargraph.conference.assignment import dispatch as dispatch_module
from scholargraph.conference.assignment import milp as milp_module
from scholargraph.errors import UsageError

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def problem_from_arcs(arcs, demand, max_load, *, min_load=None, forced=(), senior=None, at_least=None,
                      extra_attributes=None) -> AssignmentProblem:
    """A problem from (paper, reviewer, affinity) triples; `forced` lists (paper, reviewer) pairs."""
    arcs = list(arcs)
    n_papers, n_reviewers = len(demand), len(max_load)
    forced = set(forced)
    attributes = dict(extra_attributes or {})
    requirements = []
    if senior is not None:
        attributes["senior"] = np.asarray(senior, dtype=bool)
        if at_least:
            requirements.append(Requirement("senior", at_least))
    for name in extra_attributes or {}:
        requirements.append(Requirement(name, 1))
    return AssignmentProblem(
        papers=[f"p{i}" for i in range(n_papers)], reviewers=[f"r{i}" for i in range(n_reviewers)],
        edge_paper=np.array([a[0] for a in arcs], dtype=np.int64),
        edge_reviewer=np.array([a[1] for a in arcs], dtype=np.int64),
        affinity=np.array([a[2] for a in arcs], dtype=np.float64), demand=demand, max_load=max_load,
        min_load=min_load, forced=np.array([(a[0], a[1]) in forced for a in arcs], dtype=bool),
        attributes=attributes, requirements=requirements)


@st.composite
def feasible_problems(draw, max_papers=8, max_reviewers=6, max_demand=3):
    """Random instances made feasible by construction: a hidden assignment first, then extra arcs and slack."""
    n_papers = draw(st.integers(1, max_papers))
    n_reviewers = draw(st.integers(1, max_reviewers))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    capacity = rng.integers(1, 4, n_reviewers)
    load = np.zeros(n_reviewers, dtype=np.int64)
    demand = np.zeros(n_papers, dtype=np.int64)
    hidden = set()
    for paper in range(n_papers):
        free = np.flatnonzero(load < capacity)
        picked = rng.choice(free, min(int(rng.integers(0, max_demand + 1)), len(free)), replace=False)
        demand[paper] = len(picked)
        load[picked] += 1
        hidden.update((paper, int(r)) for r in picked)
    density = draw(st.floats(0.0, 1.0))
    pairs = sorted(hidden | {(p, r) for p in range(n_papers) for r in range(n_reviewers)
                             if rng.random() < density})
    affinity = rng.integers(-100, 101, len(pairs)) / 100  # a 0.01 grid keeps brute-force ties exact
    arcs = [(p, r, a) for (p, r), a in zip(pairs, affinity)]
    max_load = load + rng.integers(0, 2, n_reviewers)
    min_load = rng.integers(0, load + 1) if draw(st.booleans()) else None
    forced = {pair for pair in hidden if rng.random() < 0.15} if draw(st.booleans()) else set()
    senior = rng.random(n_reviewers) < 0.4
    at_least = draw(st.sampled_from([None, 1, 2]))
    problem = problem_from_arcs(arcs, demand, max_load, min_load=min_load, forced=forced, senior=senior,
                                at_least=at_least)
    while any(s.kind == "requirement" for s in check_feasibility(problem)):
        problem.attributes["senior"][rng.choice(np.flatnonzero(~problem.attributes["senior"]))] = True
    assert not check_feasibility(problem)
    return problem


def assert_hard_constraints(assignment) -> None:
    p = assignment.problem
    assert assignment.chosen.dtype == bool and assignment.chosen.shape == (p.n_edges,)
    np.testing.assert_array_equal(assignment.paper_counts(), p.demand)
    loads = assignment.loads()
    assert (loads <= p.max_load).all() and (loads >= p.min_load).all()
    assert assignment.chosen[p.forced].all()


def total(assignment) -> float:
    return float(assignment.problem.affinity[assignment.chosen].sum())


def worst(assignment) -> float:
    wanted = assignment.problem.demand > 0
    return float(assignment.paper_totals()[wanted].min()) if wanted.any() else 0.0


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


# --- feasible random instances: every method's hard constraints, flow == milp -------------------------------


@FAST
@given(feasible_problems(max_papers=30, max_reviewers=12))
def test_flow_and_milp_agree_and_keep_every_hard_constraint(problem):
    flow, exact = solve(problem, "flow"), solve(problem, "milp")
    for assignment in (flow, exact):
        assert_hard_constraints(assignment)
        assert assignment.status == "optimal"
    assert flow.requirement_units() == exact.requirement_units()
    assert close(total(flow), total(exact))


@FAST
@given(feasible_problems(max_papers=10, max_reviewers=8))
def test_maxmin_keeps_coverage_and_is_at_least_as_fair_as_flow(problem):
    flow, fair = solve(problem, "flow"), solve(problem, "maxmin")
    assert_hard_constraints(fair)
    assert fair.requirement_units() == flow.requirement_units()
    assert worst(fair) >= worst(flow) - 1e-9
    assert total(fair) <= total(flow) + 1e-6


@FAST
@given(feasible_problems(max_papers=20, max_reviewers=10), st.sampled_from([1.0, 0.75, 0.5, 1 / 3]),
       st.integers(0, 1000))
def test_random_samples_keep_hard_constraints_and_marginals_solve_the_capped_lp(problem, max_prob, seed):
    cap = float(probability_cap(max_prob))
    try:
        sample = solve(problem, "random", max_prob=max_prob, seed=seed)
    except InfeasibleAssignment as error:  # a cap can make a feasible problem infeasible; the LP must agree
        assert "probability capped" in str(error)
        assert capped_lp(problem, cap, probability_cap(max_prob).denominator) is None
        return
    assert_hard_constraints(sample)
    p, marginals = sample.problem, sample.marginals
    assert (marginals[~p.forced] <= cap + 1e-12).all() and (marginals[p.forced] == 1).all()
    np.testing.assert_allclose(np.bincount(p.edge_paper, marginals, len(p.papers)), p.demand, atol=1e-9)
    expected_loads = np.bincount(p.edge_reviewer, marginals, len(p.reviewers))
    assert (expected_loads <= p.max_load + 1e-9).all() and (expected_loads >= p.min_load - 1e-9).all()
    # The marginals are the exact optimum of the capped LP (coverage first, then affinity).
    denominator = probability_cap(max_prob).denominator
    lp_value = capped_lp(problem, cap, denominator)
    assert lp_value is not None and close(lexicographic_value(p, marginals, denominator), lp_value)
    # Each sample keeps the fractional coverage, rounded down per paper.
    for requirement in p.requirements:
        flags = p.attributes[requirement.attribute][p.edge_reviewer]
        expected = np.bincount(p.edge_paper, marginals * flags, len(p.papers))
        floor = np.minimum(p.need(requirement), np.floor(expected + 1e-9))
        assert (sample.attribute_counts(requirement.attribute) >= floor).all()


def penalty(problem, denominator: int) -> float:
    """Per unit of coverage; LP vertices move coverage in steps of 1/denominator, hence the factor."""
    spread = float(np.ptp(problem.affinity)) if problem.n_edges else 0.0
    return ((spread + 1) * float(problem.demand.sum()) + 1) * denominator


def lexicographic_value(problem, x: np.ndarray, denominator: int) -> float:
    """Affinity minus the penalty on unmet (fractional) requirement units: what the capped LP maximises."""
    unmet = 0.0
    for requirement in problem.requirements:
        flags = problem.attributes[requirement.attribute][problem.edge_reviewer]
        got = np.bincount(problem.edge_paper, x * flags, len(problem.papers))
        unmet += float(np.maximum(problem.need(requirement) - got, 0).sum())
    return float(problem.affinity @ x) - penalty(problem, denominator) * unmet


def capped_lp(problem, cap: float, denominator: int) -> float | None:
    """The capped fractional assignment by linear programming, independent of the flow network."""
    p = problem
    n = p.n_edges
    if not n:  # feasible without arcs: nobody is wanted
        return 0.0
    arcs = np.arange(n)
    rows = [sp.csr_array((np.ones(n), (p.edge_paper, arcs)), shape=(len(p.papers), n)),
            sp.csr_array((np.ones(n), (p.edge_reviewer, arcs)), shape=(len(p.reviewers), n))]
    lows, highs = [p.demand, p.min_load], [p.demand, p.max_load]
    slacks = []
    for requirement in p.requirements:
        flags = p.attributes[requirement.attribute][p.edge_reviewer].astype(float)
        rows.append(sp.csr_array((flags, (p.edge_paper, arcs)), shape=(len(p.papers), n)))
        lows.append(p.need(requirement))
        highs.append(np.full(len(p.papers), np.inf))
        slacks.append(len(p.papers))
    n_slack = sum(slacks)
    slack_columns = sp.vstack([sp.csr_array((len(p.papers) + len(p.reviewers), n_slack)), sp.eye_array(n_slack)])
    matrix = sp.hstack([sp.vstack(rows), slack_columns])
    cost = np.concatenate([-p.affinity, np.full(n_slack, penalty(p, denominator))])
    lower = np.concatenate([p.forced.astype(float), np.zeros(n_slack)])
    upper = np.concatenate([np.where(p.forced, 1.0, cap), np.full(n_slack, np.inf)])
    result = milp(cost, constraints=LinearConstraint(matrix, np.concatenate(lows), np.concatenate(highs)),
                  bounds=Bounds(lower, upper))
    return None if result.status != 0 else -float(result.fun)


# --- tiny instances: brute force -----------------------------------------------------------------------------


def all_assignments(problem):
    """Every feasible assignment of a tiny problem, as bool [E]."""
    p = problem
    per_paper = []
    for paper in range(len(p.papers)):
        arcs = np.flatnonzero(p.edge_paper == paper)
        forced = set(arcs[p.forced[arcs]].tolist())
        per_paper.append([c for c in itertools.combinations(arcs.tolist(), int(p.demand[paper]))
                          if forced <= set(c)])
    for combo in itertools.product(*per_paper):
        chosen = np.zeros(p.n_edges, dtype=bool)
        chosen[[a for arcs in combo for a in arcs]] = True
        loads = np.bincount(p.edge_reviewer[chosen], minlength=len(p.reviewers))
        if (loads <= p.max_load).all() and (loads >= p.min_load).all():
            yield chosen


def units(problem, chosen) -> int:
    return sum(int(np.minimum(np.bincount(problem.edge_paper[chosen & problem.attributes[r.attribute]
                                                             [problem.edge_reviewer]],
                                          minlength=len(problem.papers)), problem.need(r)).sum())
               for r in problem.requirements)


def brute_force(problem):
    """(best units, best total at best units, best worst at best units, best total among those max-min ones)."""
    p = problem
    wanted = p.demand > 0
    rows = []
    for chosen in all_assignments(p):
        totals = np.bincount(p.edge_paper[chosen], p.affinity[chosen], len(p.papers))
        rows.append((units(p, chosen), float(p.affinity[chosen].sum()),
                     float(totals[wanted].min()) if wanted.any() else 0.0))
    best_units = max(r[0] for r in rows)
    top = [r for r in rows if r[0] == best_units]
    best_worst = max(r[2] for r in top)
    fair_total = max(r[1] for r in top if r[2] >= best_worst - 1e-9)
    return best_units, max(r[1] for r in top), best_worst, fair_total


@settings(max_examples=150, deadline=None)
@given(feasible_problems(max_papers=4, max_reviewers=4))
def test_flow_milp_and_maxmin_match_brute_force(problem):
    best_units, best_total, best_worst, fair_total = brute_force(problem)
    for method in ("flow", "milp"):
        assignment = solve(problem, method)
        assert assignment.requirement_units() == best_units
        assert close(total(assignment), best_total), method
    fair = solve(problem, "maxmin")
    assert fair.requirement_units() == best_units
    assert close(worst(fair), best_worst)
    assert close(total(fair), fair_total)


def test_milp_maximises_coverage_of_two_requirements_before_affinity():
    # Two papers, k=2: r0 senior, r1 industry, r2/r3 neither but with high affinity; p1 cannot have r1.
    arcs = [(0, 0, 0.1), (0, 1, 0.1), (0, 2, 0.9), (0, 3, 0.9), (1, 0, 0.2), (1, 2, 0.8), (1, 3, 0.7)]
    problem = problem_from_arcs(arcs, [2, 2], [2, 2, 2, 2], senior=[True, False, False, False], at_least=1,
                                extra_attributes={"industry": np.array([False, True, False, False])})
    assignment = solve(problem, "milp")
    assert_hard_constraints(assignment)
    best_units, best_total, _, _ = brute_force(problem)
    assert assignment.requirement_units() == best_units == 3
    assert close(total(assignment), best_total)
    assert assignment.chosen.tolist() == [True, True, False, False, True, True, False]
    coverage = assignment.requirement_coverage()
    assert coverage["senior"].met == 2 and coverage["industry"].missing == ["p1"]
    with pytest.raises(UsageError, match="milp"):
        solve(problem, "flow")
    with pytest.raises(UsageError, match="milp method without max_prob"):
        solve(problem, "random", max_prob=0.5)


def test_requirement_that_cannot_be_met_everywhere_is_maximised_and_reported():
    # p1 has no senior candidate: soft, so solving succeeds and reports p1 as missing.
    arcs = [(0, 0, 0.1), (0, 1, 0.9), (1, 1, 0.9), (1, 2, 0.5)]
    problem = problem_from_arcs(arcs, [1, 1], [2, 2, 2], senior=[True, False, False], at_least=1)
    assert not check_feasibility(problem)
    for method in ("flow", "milp", "maxmin"):
        assignment = solve(problem, method)
        coverage = assignment.requirement_coverage()["senior"]
        assert (coverage.met, coverage.missing, coverage.fraction) == (1, ["p1"], 0.5)
        assert assignment.chosen.tolist() == [True, False, True, False]


# --- infeasible instances: the check names the shortage, and no solver runs -------------------------------


@pytest.fixture
def no_solver(monkeypatch):
    def refuse(*args):
        raise AssertionError("a solver ran on a problem the feasibility check should have rejected")

    for method in dispatch_module.SOLVERS:
        monkeypatch.setitem(dispatch_module.SOLVERS, method, refuse)


def full_arcs(n_papers, n_reviewers):
    return [(p, r, 0.5) for p in range(n_papers) for r in range(n_reviewers)]


@pytest.mark.parametrize(("problem", "expected"), [
    (lambda: problem_from_arcs(full_arcs(3, 2), [2, 2, 2], [2, 2]),
     "reviewer capacity 4 < 6 slots (3 papers x 2): short by 2"),
    (lambda: problem_from_arcs([(0, 0, 1), (1, 0, 1), (1, 1, 1)], [2, 2], [3, 3]),
     "1 paper has fewer candidates than reviewers wanted after conflicts: p0 (1 < 2)"),
    (lambda: problem_from_arcs(full_arcs(3, 3), [1, 1, 1], [1, 1, 1], senior=[True, False, False], at_least=1),
     "senior capacity 1 < 3 papers needing 1 senior: short by 2"),
    (lambda: problem_from_arcs(full_arcs(3, 3), [2, 2, 2], [3, 3, 3], senior=[True, False, False], at_least=2),
     "senior capacity 3 < 6 for 3 papers needing 2 senior: short by 3"),
    (lambda: problem_from_arcs(full_arcs(2, 2), [1, 1], [3, 3], min_load=[2, 1]),
     "minimum loads need 3 assignments but only 2 slots exist: over by 1"),
    (lambda: problem_from_arcs([(0, 0, 1), (1, 1, 1)], [1, 1], [2, 2], min_load=[2, 0]),
     "1 reviewer has fewer candidate papers than their minimum load: r0 (1 < 2)"),
    (lambda: problem_from_arcs(full_arcs(1, 2), [1], [1, 1], forced=[(0, 0), (0, 1)]),
     "1 paper has more forced reviewers than reviewers wanted: p0 (2 > 1)"),
    (lambda: problem_from_arcs(full_arcs(2, 2), [1, 1], [1, 1], forced=[(0, 0), (1, 0)]),
     "1 reviewer has more forced papers than their maximum load: r0 (2 > 1)"),
])
@pytest.mark.parametrize("method", ["flow", "milp", "maxmin", "greedy", "random"])
def test_infeasible_problems_are_rejected_before_solving(no_solver, problem, expected, method):
    problem = problem()
    with pytest.raises(InfeasibleAssignment, match="infeasible assignment") as caught:
        require_feasible(problem)
    assert expected in str(caught.value)
    assert caught.value.exit_code == 2 and isinstance(caught.value, UsageError)
    with pytest.raises(InfeasibleAssignment):
        solve(problem, method, max_prob=0.5 if method == "random" else None)


def test_check_lists_every_shortage_and_at_most_ten_papers():
    problem = problem_from_arcs([(p, 0, 1.0) for p in range(12)], [2] * 12, [1])
    kinds = [s.kind for s in check_feasibility(problem)]
    assert kinds == ["capacity", "candidates"]
    message = str(pytest.raises(InfeasibleAssignment, require_feasible, problem).value)
    assert "12 papers have fewer candidates" in message and "p9 (1 < 2), ..." in message
    assert "p10" not in message and "reviewer capacity 1 < 24 slots (12 papers x 2): short by 23" in message


def test_infeasibility_beyond_counting_is_explained_by_the_solvers():
    # Counting passes, but p0 and p1 (2 each) share r0 and r1 (1 each): Hall's condition fails.
    arcs = [(0, 0, 1), (0, 1, 1), (1, 0, 1), (1, 1, 1), (2, 2, 1), (2, 3, 1), (2, 4, 1), (2, 5, 1)]
    problem = problem_from_arcs(arcs, [2, 2, 1], [1, 1, 2, 2, 2, 2])
    assert not check_feasibility(problem)
    with pytest.raises(InfeasibleAssignment, match="at most 3 of the 5 open review slots"):
        solve(problem, "flow")
    with pytest.raises(InfeasibleAssignment, match="infeasible"):
        solve(problem, "milp")
    # Feasible deterministically, but p2 can draw only 1/2 from each of r4 and r5 while p0 and p1 fill r0..r3.
    arcs = [(p, r, 1) for p in (0, 1) for r in range(4)] + [(2, r, 1) for r in (0, 1, 4, 5)]
    problem = problem_from_arcs(arcs, [2, 2, 2], [1] * 6)
    assert solve(problem, "flow").paper_counts().tolist() == [2, 2, 2]
    with pytest.raises(InfeasibleAssignment, match="probability capped at 1/2, at most 5 of the 6 open"):
        solve(problem, "random", max_prob=0.5)
    # Minimum loads: r0 and r1 each want 1 paper, but only p0 (demand 1) has them as candidates.
    problem = problem_from_arcs([(0, 0, 1), (0, 1, 1), (1, 2, 1)], [1, 1], [1, 1, 1], min_load=[1, 1, 0])
    assert not check_feasibility(problem)
    with pytest.raises(InfeasibleAssignment, match="minimum loads"):
        solve(problem, "flow")


def test_probability_cap_too_tight_for_candidates_is_named():
    problem = problem_from_arcs(full_arcs(2, 3), [2, 2], [2, 2, 2])
    with pytest.raises(InfeasibleAssignment, match=r"capped at 1/2, 2 papers .*p0 \(3 x 1/2 < 2\)"):
        solve(problem, "random", max_prob=0.5)


# --- randomised assignment -----------------------------------------------------------------------------------


def small_random_problem():
    affinity = np.round(np.random.default_rng(7).random((4, 5)), 2)
    arcs = [(p, r, affinity[p, r]) for p in range(4) for r in range(5) if (p + r) % 5 != 0]
    return problem_from_arcs(arcs, [2, 2, 2, 1], [2, 2, 2, 2, 2], min_load=[0, 1, 0, 0, 0], forced=[(1, 1)],
                             senior=[True, False, False, True, False], at_least=1)


def test_random_marginals_match_empirical_frequencies():
    problem = small_random_problem()
    cap = probability_cap(0.6)
    network = build_network(problem, numerator=cap.numerator, denominator=cap.denominator)
    flow = solve_network(network)
    n_candidates = len(network.edges)
    marginals = problem.forced.astype(float)
    marginals[network.edges] = flow[:n_candidates] / cap.denominator
    assert ((marginals > 0) & (marginals < 1)).sum() >= 4  # the test is pointless on an integral solution
    assert (marginals[~problem.forced] <= float(cap) + 1e-12).all()
    np.testing.assert_allclose(solve(problem, "random", max_prob=0.6).marginals, marginals)
    rng = np.random.default_rng(0)
    n_samples = 2000
    counts = np.zeros(problem.n_edges)
    for _ in range(n_samples):
        rounded = round_flow(network.tail, network.head, flow, cap.denominator, rng)
        assert set(np.unique(rounded[:n_candidates])) <= {0, 1}
        chosen = problem.forced.copy()
        chosen[network.edges[rounded[:n_candidates] > 0]] = True
        assert_hard_constraints(Assignment(problem, chosen, "random"))
        counts += chosen
    frequency = counts / n_samples
    standard_error = np.sqrt(marginals * (1 - marginals) / n_samples)
    assert (np.abs(frequency - marginals) <= 4 * standard_error + 1e-12).all()


def test_random_is_reproducible_per_seed_and_varies_across_seeds():
    problem = small_random_problem()
    first = solve(problem, "random", max_prob=0.6, seed=3)
    again = solve(problem, "random", max_prob=0.6, seed=3)
    np.testing.assert_array_equal(first.chosen, again.chosen)
    samples = {solve(problem, "random", max_prob=0.6, seed=s).chosen.tobytes() for s in range(20)}
    assert len(samples) > 1
    assert solve(problem, "flow", max_prob=0.6, seed=3).method == "random"


def test_probability_cap_is_a_fraction_never_above_max_prob():
    assert probability_cap(0.5) == pytest.approx(0.5) and probability_cap(0.5).denominator == 2
    assert probability_cap(1.0) == 1
    assert probability_cap(0.333) <= 0.333
    assert float(probability_cap(0.333)) == pytest.approx(0.333, abs=0.01)
    assert probability_cap(0.25).denominator == 4
    for bad in (0.0, 1.5, 0.001):
        with pytest.raises(ValueError):
            probability_cap(bad)


# --- dependent rounding on hand-made networks ----------------------------------------------------------------


def test_round_flow_on_a_triangle_moves_all_arcs_together():
    tail, head, units = np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([1, 1, 1])
    outcomes = [tuple(round_flow(tail, head, units, 2, np.random.default_rng(s))) for s in range(200)]
    assert set(outcomes) == {(0, 0, 0), (1, 1, 1)}
    assert 60 < outcomes.count((1, 1, 1)) < 140


def test_round_flow_on_parallel_arcs_picks_exactly_one():
    # Node 0 sends 1 unit (3/3) over two parallel arcs carrying 1/3 and 2/3.
    tail, head, units = np.array([0, 0]), np.array([1, 1]), np.array([1, 2])
    rng = np.random.default_rng(1)
    results = np.array([round_flow(tail, head, units, 3, rng) for _ in range(3000)])
    assert (results.sum(axis=1) == 1).all()
    assert abs(results[:, 0].mean() - 1 / 3) < 4 * math.sqrt(2 / 9 / 3000)


def test_round_flow_keeps_floor_or_ceil_and_conservation_on_a_bipartite_flow():
    # source 0 -> reviewers 1..3 -> papers 4..5, denominator 4; papers absorb 2 and 1 whole units.
    tail = np.array([0, 0, 0, 1, 1, 2, 2, 3, 3])
    head = np.array([1, 2, 3, 4, 5, 4, 5, 4, 5])
    units = np.array([5, 4, 3, 3, 2, 3, 1, 2, 1])
    rng = np.random.default_rng(5)
    for _ in range(200):
        rounded = round_flow(tail, head, units, 4, rng)
        assert ((rounded == units // 4) | (rounded == -(-units // 4))).all()
        net = np.bincount(tail, rounded, 6) - np.bincount(head, rounded, 6)
        np.testing.assert_array_equal(net, [3, 0, 0, 0, -2, -1])


def test_round_flow_passes_integral_flows_through_and_rejects_fractional_balances():
    tail, head = np.array([0, 1]), np.array([1, 2])
    np.testing.assert_array_equal(round_flow(tail, head, np.array([6, 6]), 3, np.random.default_rng()), [2, 2])
    with pytest.raises(ValueError, match="multiple"):
        round_flow(tail, head, np.array([1, 1]), 3, np.random.default_rng())
    assert len(round_flow(np.array([], int), np.array([], int), np.array([], int), 2, np.random.default_rng())) == 0


# --- greedy, validation, dispatch, report --------------------------------------------------------------------


def test_greedy_respects_loads_and_reports_unfilled_slots():
    # p0 takes r0 first; p1's only candidate is r0, already full.
    problem = problem_from_arcs([(0, 0, 0.9), (0, 1, 0.8), (1, 0, 0.5)], [1, 1], [1, 1])
    greedy = solve_greedy(problem)
    assert (greedy.loads() <= problem.max_load).all()
    assert greedy.chosen.tolist() == [True, False, False]
    assert greedy.status == "greedy"
    assert "greedy left 1 of 2 slots unfilled (1 paper short)" in greedy.notes
    assert solve(problem, "flow").chosen.tolist() == [False, True, True]


def test_greedy_takes_forced_arcs_first():
    problem = problem_from_arcs([(0, 0, 0.9), (0, 1, 0.1), (1, 0, 0.5)], [1, 1], [1, 1], forced=[(1, 0)])
    assert solve_greedy(problem).chosen.tolist() == [False, True, True]


def test_problem_validation():
    with pytest.raises(ValueError, match="duplicate"):
        problem_from_arcs([(0, 0, 0.1), (0, 0, 0.2)], [1], [1])
    with pytest.raises(ValueError, match="demand has 1 entries, expected 2"):
        AssignmentProblem(["a", "b"], ["r"], [0], [0], [1.0], [1], [1])
    with pytest.raises(ValueError, match="unknown attribute"):
        AssignmentProblem(["a"], ["r"], [0], [0], [1.0], [1], [1], requirements=[Requirement("senior")])
    with pytest.raises(ValueError, match="outside"):
        AssignmentProblem(["a"], ["r"], [0], [1], [1.0], [1], [1])
    with pytest.raises(ValueError, match="min_load"):
        AssignmentProblem(["a"], ["r"], [0], [0], [1.0], [1], [1], min_load=[2])


def test_dispatch_rejects_bad_options():
    problem = problem_from_arcs(full_arcs(1, 2), [1], [1, 1])
    with pytest.raises(UsageError, match="unknown assignment method"):
        solve(problem, "hungarian")
    with pytest.raises(UsageError, match="needs max_prob"):
        solve(problem, "random")
    with pytest.raises(UsageError, match="flow method only"):
        solve(problem, "milp", max_prob=0.5)
    with pytest.raises(UsageError, match=r"\(0, 1\]"):
        solve(problem, "random", max_prob=1.5)


def test_milp_time_limit_statuses(monkeypatch):
    problem = problem_from_arcs(full_arcs(2, 2), [1, 1], [1, 1])

    def stopped(x):
        return lambda *args, **kwargs: SimpleNamespace(status=1, x=x, message="time limit", mip_gap=0.05)

    monkeypatch.setattr(milp_module, "milp", stopped(np.array([1.0, 0.0, 0.0, 1.0])))
    assignment = solve(problem, "milp", time_limit=1)
    assert assignment.status == "time_limit" and "gap 5.00%" in assignment.notes[0]
    monkeypatch.setattr(milp_module, "milp", stopped(None))
    with pytest.raises(SolverTimeLimit, match="1 s time limit"):
        solve(problem, "milp", time_limit=1)


def test_summary_report_and_comparison():
    problem = small_random_problem()
    summaries = [summarize(solve(problem, m, max_prob=0.6 if m == "random" else None))
                 for m in ("flow", "greedy", "random")]
    flow = summaries[0]
    assert flow["slots_filled"] == flow["slots_wanted"] == 7
    assert sum(flow["load_histogram"].values()) == 5
    assert sum(load * n for load, n in flow["load_histogram"].items()) == 7
    assert flow["paper_total_quantiles"]["min"] == flow["worst_paper_total"]
    assert flow["total_affinity"] == pytest.approx(flow["mean_pair_affinity"] * 7)
    assert flow["requirements"]["senior"]["fraction"] == 1.0
    assert "expected_total_affinity" in summaries[2]
    json.dumps(summaries)
    lines = format_summary(flow)
    assert lines[0].startswith("method flow (optimal)") and any("requirement senior" in ln for ln in lines)
    table = compare_lines(summaries)
    assert len(table) == 4 and table[0].split()[:2] == ["method", "status"] and "senior" in table[0]


def test_a_paper_with_an_unscored_pair_is_in_no_per_paper_figure():
    """Project rule: a score that could not be computed is reported with a count and examples, never printed as a
    number. A forced pair without evidence (scored False) made its paper's total 0 (the solvers' placeholder): the
    summary printed `worst 0.0000 (x 0)`, and the mean and quantiles took that 0 in."""
    problem = AssignmentProblem(
        papers=["x 0", "p1", "p2"], reviewers=["r0", "r1"],
        edge_paper=np.array([0, 0, 1, 2]), edge_reviewer=np.array([0, 1, 0, 1]),
        affinity=np.array([-1.0, 0.7, 0.5, 0.9]), demand=[2, 1, 1], max_load=[2, 2],
        forced=np.array([True, False, False, False]), scored=np.array([False, True, True, True]))
    for method in ("flow", "greedy"):
        summary = summarize(solve(problem, method))
        assert summary["total_affinity"] == pytest.approx(0.7 + 0.5 + 0.9)
        assert (summary["worst_paper_total"], summary["worst_paper"]) == (pytest.approx(0.5), "p1")
        assert summary["mean_paper_total"] == pytest.approx(0.7)  # p1 and p2 only
        assert summary["paper_total_quantiles"]["min"] == pytest.approx(0.5)
        assert (summary["papers_totalled"], summary["papers_without_total"]) == (2, 1)
        assert summary["papers_without_total_examples"] == ["x_0"]  # ids as the outputs print them
        assert summary["unscored_examples"] == ["x_0 r0"]
        lines = format_summary(summary)
        assert not any("0.0000" in line for line in lines)
        assert "worst 0.5000 (p1) (over 2 papers)" in lines[1]
        assert any(line.startswith("1 paper(s) have such a pair, so their total is unknown") and "x_0" in line
                   for line in lines)
    # Every paper with an unscored pair: no per-paper figure at all, and none printed as a number.
    alone = AssignmentProblem(papers=["x0"], reviewers=["r0"], edge_paper=[0], edge_reviewer=[0], affinity=[-1.0],
                              demand=[1], max_load=[1], forced=[True], scored=[False])
    summary = summarize(solve(alone, "flow"))
    assert summary["mean_paper_total"] is summary["worst_paper_total"] is summary["mean_pair_affinity"] is None
    assert set(summary["paper_total_quantiles"].values()) == {None}
    json.dumps(summary)
    lines = format_summary(summary)
    assert "total affinity 0.0000; no per-paper total (see below)" in lines and not any("per-paper totals" in ln
                                                                                        for ln in lines)
    assert "n/a" in compare_lines([summary])[1]
