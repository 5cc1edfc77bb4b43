"""Integer programs solved by HiGHS (scipy.optimize.milp): any number of requirements, and max-min fairness.

Variables: x_e in {0, 1} per arc (forced arcs fixed at 1), then one slack s in [0, need] per (requirement,
paper needing it) with `attribute reviewers + s >= need`. Each slack unit costs a penalty larger than any
possible difference in the second objective, so requirement coverage is maximised first.

`maxmin` (PeerReview4All, Stelmakh et al. 2019; FairFlow, Kobren et al. 2019) is an integer program in two
stages after the coverage-first max-affinity assignment: (1) maximise the worst paper's total affinity t,
(2) maximise total affinity keeping t and the coverage. Unlike `milp` with one requirement, its relaxation is
not integral, so HiGHS branches. Measured (100 candidates per paper, k=3, 2 cores): proven optimal within
~20 s up to ~200 papers, and up to ~1,000 when reviewer capacity is loose; with tight capacity (500 papers,
250 reviewers at 7) HiGHS stalls at a ~1.5% gap for minutes. Pass a time limit beyond ~200 papers: the
answer is then the best found, never less fair than the max-affinity assignment.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from .flow import solve_flow
from .problem import Assignment, AssignmentProblem, InfeasibleAssignment, SolverTimeLimit

MIP_REL_GAP = 1e-9  # the optimum is the point of these methods; HiGHS' default 1e-4 would stop short
STAGE_ONE_SHARE = 0.75  # of maxmin's time limit; the rest maximises the total at the fairness found


@dataclass
class _Model:
    """Constraint blocks shared by both formulations, with columns [x (E) | slack (S)]."""

    constraints: list[LinearConstraint]
    lower: np.ndarray
    upper: np.ndarray
    n_slack: int
    penalty: float


def _model(problem: AssignmentProblem) -> _Model:
    p = problem
    n_edges, n_papers, n_reviewers = p.n_edges, len(p.papers), len(p.reviewers)
    arcs = np.arange(n_edges)
    ones = np.ones(n_edges)
    by_paper = sp.csr_array((ones, (p.edge_paper, arcs)), shape=(n_papers, n_edges))
    by_reviewer = sp.csr_array((ones, (p.edge_reviewer, arcs)), shape=(n_reviewers, n_edges))
    requirement_rows, needs = [], []
    for requirement in p.requirements:
        need = p.need(requirement)
        needing = np.flatnonzero(need > 0)
        row_of_paper = np.full(n_papers, -1)
        row_of_paper[needing] = np.arange(len(needing))
        hit = p.attributes[requirement.attribute][p.edge_reviewer] & (row_of_paper[p.edge_paper] >= 0)
        requirement_rows.append(sp.csr_array((np.ones(int(hit.sum())), (row_of_paper[p.edge_paper[hit]],
                                                                         arcs[hit])),
                                             shape=(len(needing), n_edges)))
        needs.append(need[needing].astype(np.float64))
    n_slack = sum(len(n) for n in needs)
    constraints = [
        LinearConstraint(sp.hstack([by_paper, sp.csr_array((n_papers, n_slack))]), p.demand, p.demand),
        LinearConstraint(sp.hstack([by_reviewer, sp.csr_array((n_reviewers, n_slack))]), p.min_load, p.max_load),
    ]
    if n_slack:
        coverage = sp.hstack([sp.vstack(requirement_rows), sp.eye_array(n_slack)])
        constraints.append(LinearConstraint(coverage, np.concatenate(needs), np.inf))
    lower = np.concatenate([p.forced.astype(np.float64), np.zeros(n_slack)])
    upper = np.concatenate([np.ones(n_edges), np.concatenate(needs) if needs else np.zeros(0)])
    spread = float(np.ptp(p.affinity)) if n_edges else 0.0
    # Two assignments' totals (or worst-paper totals) differ by at most spread * slots; a unit must beat that.
    penalty = (spread + 1.0) * float(p.demand.sum()) + 1.0
    return _Model(constraints, lower, upper, n_slack, penalty)


def _run(objective: np.ndarray, constraints: list[LinearConstraint], lower: np.ndarray, upper: np.ndarray,
         integral: np.ndarray, time_limit: float | None):
    options = {"mip_rel_gap": MIP_REL_GAP, "disp": False}
    if time_limit is not None:
        options["time_limit"] = max(float(time_limit), 0.01)
    result = milp(objective, constraints=constraints, bounds=Bounds(lower, upper), integrality=integral,
                  options=options)
    if result.status == 2:
        raise InfeasibleAssignment("infeasible assignment: no assignment meets every paper's demand within "
                                   "reviewers' loads and the forced arcs (the integer program is infeasible)")
    if result.x is None:
        if result.status == 1:
            raise SolverTimeLimit(f"no feasible assignment found within the {time_limit:g} s time limit; "
                                  "raise it or use the flow method")
        raise InfeasibleAssignment(f"the integer program failed: {result.message}")
    return result, "optimal" if result.status == 0 else "time_limit"


def solve_milp(problem: AssignmentProblem, time_limit: float | None = None) -> Assignment:
    """Maximum total affinity after maximum requirement coverage, any number of requirements."""
    p = problem
    if not p.n_edges:  # HiGHS refuses an empty model; a feasible problem without arcs wants nobody
        return Assignment(p, np.zeros(0, dtype=bool), "milp")
    model = _model(p)
    objective = np.concatenate([-p.affinity, np.full(model.n_slack, model.penalty)])
    integral = np.concatenate([np.ones(p.n_edges), np.zeros(model.n_slack)])
    result, status = _run(objective, model.constraints, model.lower, model.upper, integral, time_limit)
    return Assignment(p, result.x[:p.n_edges] > 0.5, "milp", status=status, notes=_gap_note(result, status))


def solve_maxmin(problem: AssignmentProblem, time_limit: float | None = None) -> Assignment:
    """Max-min fair assignment: best worst-paper total, then best total among those (coverage first).

    Stage 0 is the coverage-first max-affinity assignment (flow, or milp for several requirements): its worst
    paper bounds t from below and fixes the coverage; each paper's best conceivable total bounds t from above.
    When the bounds meet, stage 0 is already the answer and no integer program runs.
    """
    p = problem
    started = time.perf_counter()
    base = solve_flow(p) if len(p.requirements) <= 1 else solve_milp(p, time_limit)
    base.method = "maxmin"
    base.timings = {"max_affinity": time.perf_counter() - started}
    wanted = np.flatnonzero(p.demand > 0)
    if not len(wanted):  # no paper to be fair to
        return base
    lower = float(base.paper_totals()[wanted].min())
    upper = float(_best_conceivable_totals(p)[wanted].min())
    tolerance = 1e-9 * max(1.0, float(np.abs(p.affinity).max()) * float(p.demand.max()))
    if lower >= upper - tolerance:
        base.notes.append(f"worst paper total {lower:.6g}: the max-affinity assignment already gives the worst "
                          "paper its best candidates")
        return base
    model = _model(p)
    n_edges, n_slack = p.n_edges, model.n_slack
    integral = np.concatenate([np.ones(n_edges), np.zeros(n_slack)])
    paper_affinity = sp.csr_array((p.affinity, (p.edge_paper, np.arange(n_edges))),
                                  shape=(len(p.papers), n_edges))[wanted]
    constraints = list(model.constraints)
    if n_slack:  # keep stage 0's coverage: unmet units (sum of slacks) no larger
        unmet = sp.hstack([sp.csr_array((1, n_edges)), sp.csr_array(np.ones((1, n_slack)))])
        constraints.append(LinearConstraint(unmet, -np.inf, _unmet_units(base) + 0.5))

    # Stage 1: maximise t, one extra column, subject to t <= each wanted paper's total.
    with_t = [LinearConstraint(sp.hstack([c.A, sp.csr_array((c.A.shape[0], 1))]), c.lb, c.ub)
              for c in constraints]
    worst_rows = sp.hstack([-paper_affinity, sp.csr_array((len(wanted), n_slack)),
                            sp.csr_array(np.ones((len(wanted), 1)))])
    with_t.append(LinearConstraint(worst_rows, -np.inf, 0.0))
    objective = np.concatenate([np.zeros(n_edges + n_slack), [-1.0]])
    remaining = _remaining(time_limit, started)
    stage_limit = None if remaining is None else remaining * STAGE_ONE_SHARE
    stage_started = time.perf_counter()
    try:
        result, status = _run(objective, with_t, np.append(model.lower, lower), np.append(model.upper, upper),
                              np.append(integral, 0), stage_limit)
    except SolverTimeLimit:
        result, status = None, "time_limit"
    base.timings["max_min"] = time.perf_counter() - stage_started
    first = None if result is None else Assignment(p, result.x[:n_edges] > 0.5, "maxmin", status=status,
                                                   timings=base.timings)
    worst = lower if first is None else float(first.paper_totals()[wanted].min())
    if worst <= lower + tolerance:
        # Stage 0 is as fair as anything found and has the best total: it is the answer (proven if optimal).
        base.status = status
        base.notes.append(f"worst paper total {lower:.6g} (bound {upper:.6g}): " + (
            "the max-affinity assignment is already max-min optimal" if status == "optimal" else
            "time limit reached without improving on the max-affinity assignment"))
        return base
    assert first is not None, "without a stage-1 assignment worst == lower, answered above"
    first.notes.append(f"worst paper total {worst:.6g} (max-affinity assignment: {lower:.6g}; "
                       f"bound {upper:.6g})")

    # Stage 2: maximise the total, keeping the worst paper's total of stage 1 (and the coverage).
    constraints.append(LinearConstraint(sp.hstack([paper_affinity, sp.csr_array((len(wanted), n_slack))]),
                                        worst - tolerance, np.inf))
    objective = np.concatenate([-p.affinity, np.zeros(n_slack)])
    stage_started = time.perf_counter()
    try:
        result, second = _run(objective, constraints, model.lower, model.upper, integral,
                              _remaining(time_limit, started))
    except SolverTimeLimit:
        first.status = "time_limit"
        first.notes.append("time limit reached in stage 2: total affinity not maximised among max-min solutions")
        return first
    first.timings["best_total_at_max_min"] = time.perf_counter() - stage_started
    status = "optimal" if status == second == "optimal" else "time_limit"
    return Assignment(p, result.x[:n_edges] > 0.5, "maxmin", status=status, notes=first.notes,
                      timings=first.timings)


def _best_conceivable_totals(problem: AssignmentProblem) -> np.ndarray:
    """Per paper, its forced arcs plus its best other candidates up to demand, ignoring everyone else."""
    p = problem
    usable = np.flatnonzero(p.forced | (p.max_load[p.edge_reviewer] > 0))
    order = usable[np.lexsort((-p.affinity[usable], ~p.forced[usable], p.edge_paper[usable]))]
    papers = p.edge_paper[order]
    first_of_paper = np.searchsorted(papers, papers)
    rank = np.arange(len(order)) - first_of_paper
    best = order[rank < p.demand[papers]]
    return np.bincount(p.edge_paper[best], weights=p.affinity[best], minlength=len(p.papers))


def _remaining(time_limit: float | None, started: float) -> float | None:
    return None if time_limit is None else time_limit - (time.perf_counter() - started)


def _unmet_units(assignment: Assignment) -> int:
    """Requirement units the assignment leaves unmet."""
    p = assignment.problem
    return sum(int(p.need(r).sum()) for r in p.requirements) - assignment.requirement_units()


def _gap_note(result, status: str) -> list[str]:
    if status == "optimal":
        return []
    gap = getattr(result, "mip_gap", None)
    return [f"time limit reached: best assignment found, optimality gap {gap:.2%}" if gap is not None
            else "time limit reached: best assignment found, not proven optimal"]
