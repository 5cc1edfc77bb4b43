"""Min-cost flow assignment (OR-Tools) and its randomised variant with dependent rounding (Jecmen et al. 2020).

Network, in node order: reviewers, papers, one requirement sub-node per paper (only with a requirement), source.

    source --(max_load - min_load)--> reviewer (which also supplies min_load, so the lower bound is hard)
    reviewer --(1, -affinity)--> paper, or --> the paper's sub-node when the reviewer has the attribute
    sub-node --(need, -BONUS)--> paper and --(demand - need, 0)--> paper
    paper absorbs demand

BONUS exceeds any possible difference in total affinity, so the optimum first serves as many requirement
units as possible and only then maximises affinity. Forced arcs are assigned up front: they leave the network
and reduce their paper's demand, their reviewer's loads and the paper's remaining requirement need.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from ortools.graph.python.min_cost_flow import SimpleMinCostFlow

from scholargraph.errors import ScholargraphError

from .problem import LISTED, Assignment, AssignmentProblem, InfeasibleAssignment

SCALE = 1_000_000  # affinities become integer costs rounded to 1e-6
COST_LIMIT = 2**62  # OR-Tools multiplies costs by (nodes + 1); stay clear of int64 overflow


@dataclass
class FlowNetwork:
    """Arcs and supplies ready for OR-Tools; arcs 0..len(edges)-1 are candidate arcs, in `edges` order."""

    tail: np.ndarray  # int32 [A]
    head: np.ndarray  # int32 [A]
    capacity: np.ndarray  # int64 [A]
    cost: np.ndarray  # int64 [A]
    supply: np.ndarray  # int64 [N]
    edges: np.ndarray  # int64 [C] problem edge behind each candidate arc
    source_arcs: slice  # source -> reviewer arcs, one per reviewer in reviewer order
    n_reviewers: int
    source: int  # node id of the source
    forced: np.ndarray  # bool [E] arcs assigned before the flow
    numerator: int  # capacity of a candidate arc
    denominator: int  # every supply is a multiple of it; flow / denominator is the fraction of a reviewer
    scale: float
    bonus: int

    @property
    def n_nodes(self) -> int:
        return len(self.supply)


def build_network(problem: AssignmentProblem, *, numerator: int = 1, denominator: int = 1) -> FlowNetwork:
    """The network with candidate arcs of capacity numerator and everything else multiplied by denominator.

    numerator = denominator = 1 is the deterministic assignment; numerator/denominator = Q caps each pair's
    probability at Q in the randomised one.
    """
    p = problem
    if len(p.requirements) > 1:
        raise ValueError("the flow network handles at most one requirement")
    n_papers, n_reviewers = len(p.papers), len(p.reviewers)
    forced = p.forced
    demand = p.demand - np.bincount(p.edge_paper[forced], minlength=n_papers)
    forced_load = np.bincount(p.edge_reviewer[forced], minlength=n_reviewers)
    max_load = p.max_load - forced_load
    min_load = np.maximum(p.min_load - forced_load, 0)
    # Arcs into papers that want nobody more, or out of reviewers with no room, can never carry flow.
    keep = ~forced & (demand[p.edge_paper] > 0) & (max_load[p.edge_reviewer] > 0)
    edges = np.flatnonzero(keep)
    paper, reviewer = p.edge_paper[edges], p.edge_reviewer[edges]
    requirement = p.requirements[0] if p.requirements else None
    need = np.zeros(n_papers, dtype=np.int64)

    first_paper = n_reviewers
    first_sub = first_paper + n_papers
    source = first_sub + (n_papers if requirement else 0)
    head = first_paper + paper
    if requirement:
        flags = p.attributes[requirement.attribute]
        head = np.where(flags[reviewer], first_sub + paper, head)
        served = np.bincount(p.edge_paper[forced & flags[p.edge_reviewer]], minlength=n_papers)
        need = np.minimum(np.maximum(p.need(requirement) - served, 0), demand)
    total_units = int(demand.sum()) * denominator
    need_units = int(need.sum()) * denominator
    scale, cost, bonus = _integer_costs(p.affinity[edges], total_units, need_units, source + 1)

    papers_range = np.arange(n_papers)
    tails = [reviewer, np.full(n_reviewers, source)]
    heads = [head, np.arange(n_reviewers)]
    capacities = [np.full(len(edges), numerator), (max_load - min_load) * denominator]
    costs = [cost, np.zeros(n_reviewers, dtype=np.int64)]
    if requirement:
        tails += [first_sub + papers_range] * 2
        heads += [first_paper + papers_range] * 2
        capacities += [need * denominator, (demand - need) * denominator]
        costs += [np.full(n_papers, -bonus), np.zeros(n_papers, dtype=np.int64)]
    supply = np.zeros(source + 1, dtype=np.int64)
    supply[:n_reviewers] = min_load * denominator
    supply[first_paper:first_paper + n_papers] = -demand * denominator
    supply[source] = (int(demand.sum()) - int(min_load.sum())) * denominator
    return FlowNetwork(
        tail=np.concatenate(tails).astype(np.int32), head=np.concatenate(heads).astype(np.int32),
        capacity=np.concatenate(capacities).astype(np.int64), cost=np.concatenate(costs).astype(np.int64),
        supply=supply, edges=edges, source_arcs=slice(len(edges), len(edges) + n_reviewers),
        n_reviewers=n_reviewers, source=source, forced=forced.copy(), numerator=numerator, denominator=denominator,
        scale=scale, bonus=bonus)


def solve_network(network: FlowNetwork) -> np.ndarray:
    """Optimal integral flow per arc; InfeasibleAssignment, with the reason, when none exists."""
    solver = _solver(network, network.capacity, network.cost, network.supply)
    status = solver.solve()
    if status == SimpleMinCostFlow.OPTIMAL:
        return np.asarray(solver.flows(np.arange(len(network.tail), dtype=np.int32)), dtype=np.int64)
    if status == SimpleMinCostFlow.INFEASIBLE:
        raise InfeasibleAssignment(_diagnose(network))
    raise ScholargraphError(f"min-cost flow failed with status {status.name}")


def solve_flow(problem: AssignmentProblem) -> Assignment:
    """The maximum-affinity assignment (after requirement coverage), exact, by one min-cost flow."""
    started = time.perf_counter()
    network = build_network(problem)
    built = time.perf_counter()
    flow = solve_network(network)
    chosen = network.forced.copy()
    chosen[network.edges[flow[:len(network.edges)] > 0]] = True
    timings = {"network": built - started, "min_cost_flow": time.perf_counter() - built}
    return Assignment(problem, chosen, "flow", notes=_scale_notes(network), timings=timings)


def probability_cap(max_prob: float) -> Fraction:
    """max_prob as a fraction with denominator <= 100, never above max_prob (the cap is a promise)."""
    if not 0 < max_prob <= 1:
        raise ValueError(f"max_prob must be in (0, 1], got {max_prob}")
    cap = Fraction(max_prob).limit_denominator(100)
    if cap > max_prob:
        cap = max(Fraction(int(max_prob * d), d) for d in range(1, 101))
    if cap == 0:
        raise ValueError(f"max_prob {max_prob} is below 1/100")
    return cap


def solve_random(problem: AssignmentProblem, max_prob: float, seed: int = 0) -> Assignment:
    """A sample from the max-affinity randomised assignment in which no pair's probability exceeds max_prob.

    The fractional optimum is exact (an integer flow in units of 1/D); dependent rounding then keeps every
    arc's probability equal to its fractional value, and every sample within loads, demands and the
    requirement coverage of the fractional solution, rounded down per paper.
    """
    cap = probability_cap(max_prob)
    _check_capped_candidates(problem, cap)
    started = time.perf_counter()
    network = build_network(problem, numerator=cap.numerator, denominator=cap.denominator)
    built = time.perf_counter()
    flow = solve_network(network)
    solved = time.perf_counter()
    n_candidates = len(network.edges)
    marginals = network.forced.astype(np.float64)
    marginals[network.edges] = flow[:n_candidates] / cap.denominator
    rounded = round_flow(network.tail, network.head, flow, cap.denominator, np.random.default_rng(seed))
    timings = {"network": built - started, "min_cost_flow": solved - built, "rounding": time.perf_counter() - solved}
    chosen = network.forced.copy()
    chosen[network.edges[rounded[:n_candidates] > 0]] = True
    notes = _scale_notes(network)
    if cap != Fraction(max_prob):
        notes.append(f"probability cap {max_prob:g} applied as {cap} = {float(cap):.4f}")
    return Assignment(problem, chosen, "random", marginals=marginals, notes=notes, timings=timings)


def round_flow(tail: np.ndarray, head: np.ndarray, units: np.ndarray, denominator: int,
               rng: np.random.Generator) -> np.ndarray:
    """Dependent rounding of a flow given in units of 1/denominator: per arc, floor or ceil of units/denominator.

    Requires every node's net flow to be a multiple of denominator. Then a node touching an arc whose flow is
    not a multiple touches at least two, so those arcs contain a cycle (ignoring direction). Pushing flow around
    it, in one direction or the other with probabilities that keep each arc's expectation, makes at least one
    arc a multiple and preserves every node's net flow. A walk with a path stack and a position map finds each
    cycle in time proportional to its length. Returns int64 [A] with E[result] = units / denominator.
    """
    tail = np.asarray(tail, dtype=np.int64)
    head = np.asarray(head, dtype=np.int64)
    units = np.asarray(units, dtype=np.int64)
    denominator = int(denominator)
    base, residue = np.divmod(units, denominator)
    if not len(units):
        return base
    n_nodes = int(max(tail.max(), head.max())) + 1
    net = np.zeros(n_nodes, dtype=np.int64)
    np.add.at(net, tail, residue)
    np.subtract.at(net, head, residue)
    if np.any(net % denominator):
        raise ValueError("a node's net flow is not a multiple of the denominator")
    if np.any((tail == head) & (residue > 0)):
        raise ValueError("a self-loop carries a fractional flow")
    fractional = np.flatnonzero(residue)
    if not len(fractional):
        return base
    value = residue.tolist()
    tails, heads = tail.tolist(), head.tolist()
    incident: list[list[int]] = [[] for _ in range(n_nodes)]
    slot_at_tail = [0] * len(units)
    slot_at_head = [0] * len(units)
    for arc in fractional.tolist():
        slot_at_tail[arc] = len(incident[tails[arc]])
        incident[tails[arc]].append(arc)
        slot_at_head[arc] = len(incident[heads[arc]])
        incident[heads[arc]].append(arc)

    def detach(arc: int, node: int) -> None:
        arcs = incident[node]
        slot = slot_at_tail[arc] if tails[arc] == node else slot_at_head[arc]
        last = arcs.pop()
        if last != arc:
            arcs[slot] = last
            if tails[last] == node:
                slot_at_tail[last] = slot
            else:
                slot_at_head[last] = slot

    position = [-1] * n_nodes
    path: list[int] = []  # nodes of the current walk
    entered_by: list[int] = []  # entered_by[i]: the arc that led to path[i] (-1 for the start)
    starts = iter(fractional.tolist())
    while True:
        if not path:
            start = next((arc for arc in starts if 0 < value[arc] < denominator), None)
            if start is None:
                break
            position[tails[start]] = 0
            path.append(tails[start])
            entered_by.append(-1)
        node, came = path[-1], entered_by[-1]
        arcs = incident[node]
        if not arcs:  # only possible for the walk's start, after its cycles were resolved
            position[node] = -1
            path.pop()
            entered_by.pop()
            continue
        arc = arcs[-1] if arcs[-1] != came else arcs[-2]
        forward = tails[arc] == node
        other = heads[arc] if forward else tails[arc]
        if position[other] < 0:
            position[other] = len(path)
            path.append(other)
            entered_by.append(arc)
            continue
        first = position[other]
        cycle = [(entered_by[i], tails[entered_by[i]] == path[i - 1]) for i in range(first + 1, len(path))]
        cycle.append((arc, forward))
        up = min(denominator - value[a] if fwd else value[a] for a, fwd in cycle)
        down = min(value[a] if fwd else denominator - value[a] for a, fwd in cycle)
        delta = up if rng.random() * (up + down) < down else -down
        for a, fwd in cycle:
            value[a] += delta if fwd else -delta
            if value[a] == 0 or value[a] == denominator:
                detach(a, tails[a])
                detach(a, heads[a])
        for dropped in path[first + 1:]:
            position[dropped] = -1
        del path[first + 1:], entered_by[first + 1:]
    rounded = base.copy()
    rounded[fractional] += np.asarray(value, dtype=np.int64)[fractional] // denominator
    return rounded


def _integer_costs(affinity: np.ndarray, total_units: int, need_units: int,
                   n_nodes: int) -> tuple[float, np.ndarray, int]:
    """Costs -round(affinity * scale) and the requirement bonus, with scale lowered only if int64 would overflow."""
    scale = float(SCALE)
    while True:
        cost = -np.round(affinity * scale).astype(np.int64)
        spread = int(cost.max() - cost.min()) if len(cost) else 0
        # Any two assignments differ by at most spread * total_units in cost; one requirement unit must beat that.
        bonus = (spread + 1) * total_units + 1 if need_units else 0
        largest = max(bonus, int(np.abs(cost).max()) if len(cost) else 0)
        if largest * (n_nodes + 1) < COST_LIMIT and bonus * need_units + largest * total_units < COST_LIMIT:
            return scale, cost, bonus
        if scale <= 1e-6:
            raise ScholargraphError("affinities too large for integer min-cost flow costs; rescale them")
        scale /= 10


def _scale_notes(network: FlowNetwork) -> list[str]:
    if network.scale == SCALE:
        return []
    return [f"affinities rounded to {1 / network.scale:g} to keep integer flow costs in range"]


def _solver(network: FlowNetwork, capacity: np.ndarray, cost: np.ndarray, supply: np.ndarray) -> SimpleMinCostFlow:
    solver = SimpleMinCostFlow()
    solver.add_arcs_with_capacity_and_unit_cost(network.tail, network.head, capacity, cost)
    nodes = np.flatnonzero(supply).astype(np.int32)
    solver.set_nodes_supplies(nodes, supply[nodes])
    return solver


def _diagnose(network: FlowNetwork) -> str:
    """Why no flow exists: too few reachable slots (max flow without minimum loads), or the minimum loads."""
    d = network.denominator
    capacity = network.capacity.copy()
    capacity[network.source_arcs] += network.supply[:network.n_reviewers]
    supply = network.supply.copy()
    supply[:network.n_reviewers] = 0
    wanted = int(-supply[supply < 0].sum())
    supply[network.source] = wanted
    solver = _solver(network, capacity, np.zeros_like(network.cost), supply)
    solver.solve_max_flow_with_min_cost()
    reachable = int(solver.maximum_flow())
    capped = f"with each pair's probability capped at {Fraction(network.numerator, d)}, " if d > 1 else ""
    n_forced = int(network.forced.sum())
    forced = f" (after {n_forced:,} forced assignments)" if n_forced else ""
    if reachable < wanted:
        return (f"infeasible assignment: {capped}at most {_slots(reachable, d)} of the {_slots(wanted, d)} open "
                f"review slots{forced} can be filled from the candidate arcs within reviewers' maximum loads: "
                f"short by {_slots(wanted - reachable, d)}; some papers share too few candidates")
    floor = int(network.supply[:network.n_reviewers].sum())
    return (f"infeasible assignment: {capped}papers' demands can be met, but not together with reviewers' "
            f"minimum loads ({_slots(floor, d)} assignments{forced}); their candidate papers are too few or shared")


def _slots(units: int, denominator: int) -> str:
    if units % denominator == 0:
        return f"{units // denominator:,}"
    return f"{units / denominator:,.2f}"


def _check_capped_candidates(problem: AssignmentProblem, cap: Fraction) -> None:
    """Under a probability cap Q a paper wanting k more reviewers needs at least k / Q candidates."""
    p = problem
    if cap == 1:
        return
    n_papers = len(p.papers)
    demand = p.demand - np.bincount(p.edge_paper[p.forced], minlength=n_papers)
    usable = ~p.forced & (p.max_load[p.edge_reviewer] > 0)
    candidates = np.bincount(p.edge_paper[usable], minlength=n_papers)
    few = np.flatnonzero(candidates * cap.numerator < demand * cap.denominator)
    if len(few):
        listed = ", ".join(f"{p.papers[i]} ({candidates[i]} x {cap} < {demand[i]})" for i in few[:LISTED])
        more = ", ..." if len(few) > LISTED else ""
        raise InfeasibleAssignment(
            f"infeasible assignment: with each pair's probability capped at {cap}, {len(few):,} "
            f"paper{'s' if len(few) != 1 else ''} cannot get enough expected reviewers from their candidates: "
            f"{listed}{more}; raise max_prob or add candidates")
