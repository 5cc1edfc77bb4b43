"""The reviewer-paper assignment problem, its solution, and the cheap feasibility check run before any solver."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scholargraph.errors import ScholargraphError, UsageError
from scholargraph.user_files import count

LISTED = 10  # ids named in a message before "..."


class InfeasibleAssignment(UsageError):
    """No assignment meets the hard constraints; the message names every shortage with its numbers."""

    def __init__(self, message: str, shortages: list[Shortage] | None = None):
        self.shortages = list(shortages or [])
        super().__init__(message)


class SolverTimeLimit(ScholargraphError):
    """The time limit ran out before the solver found any feasible assignment."""

    exit_code = 1


@dataclass(frozen=True)
class Requirement:
    """Every paper wants at least `at_least` reviewers whose `attribute` flag is set (soft, but served first)."""

    attribute: str
    at_least: int = 1


@dataclass(frozen=True)
class Shortage:
    """One reason the problem is infeasible: `kind` for code, `message` for people, `short` how much is missing."""

    kind: str  # 'capacity' | 'candidates' | 'min_load' | 'forced' | 'requirement'
    message: str
    short: int


@dataclass
class AssignmentProblem:
    """Candidate arcs (paper, reviewer, affinity) with per-paper demand and per-reviewer load bounds.

    Arcs are the caller's candidates with conflicts already removed. A (paper, reviewer) pair may appear once:
    duplicates raise ValueError rather than being merged silently, because two affinities for one pair mean the
    caller joined something twice.
    """

    papers: list[str]
    reviewers: list[str]
    edge_paper: np.ndarray
    edge_reviewer: np.ndarray
    affinity: np.ndarray
    demand: np.ndarray
    max_load: np.ndarray
    # None (the default) means zeros / no arc forced; __post_init__ turns it into an array, so every reader
    # sees one.
    min_load: np.ndarray = None  # type: ignore[assignment]
    forced: np.ndarray = None  # type: ignore[assignment]
    attributes: dict[str, np.ndarray] = field(default_factory=dict)
    requirements: list[Requirement] = field(default_factory=list)
    # False for an arc whose affinity could not be computed (a forced pair without evidence): the solvers see
    # 0 for it and the report counts it apart, never in a total or a mean. None means every arc is scored.
    scored: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self.papers = list(self.papers)
        self.reviewers = list(self.reviewers)
        n_papers, n_reviewers = len(self.papers), len(self.reviewers)
        self.edge_paper = np.asarray(self.edge_paper, dtype=np.int64).reshape(-1)
        self.edge_reviewer = np.asarray(self.edge_reviewer, dtype=np.int64).reshape(-1)
        self.affinity = np.asarray(self.affinity, dtype=np.float64).reshape(-1)
        n_edges = len(self.edge_paper)
        self.demand = _vector(self.demand, n_papers, np.int64, "demand")
        self.max_load = _vector(self.max_load, n_reviewers, np.int64, "max_load")
        self.min_load = (np.zeros(n_reviewers, dtype=np.int64) if self.min_load is None
                         else _vector(self.min_load, n_reviewers, np.int64, "min_load"))
        self.forced = (np.zeros(n_edges, dtype=bool) if self.forced is None
                       else _vector(self.forced, n_edges, bool, "forced"))
        self.scored = (np.ones(n_edges, dtype=bool) if self.scored is None
                       else _vector(self.scored, n_edges, bool, "scored"))
        if len(self.affinity) == n_edges:  # else _validate says what is wrong
            self.affinity = np.where(self.scored, self.affinity, 0.0)
        self.attributes = {name: _vector(flags, n_reviewers, bool, f"attribute {name!r}")
                           for name, flags in self.attributes.items()}
        self.requirements = list(self.requirements)
        self._validate()

    def _validate(self) -> None:
        n_papers, n_reviewers = len(self.papers), len(self.reviewers)
        if len(self.edge_reviewer) != len(self.edge_paper) or len(self.affinity) != len(self.edge_paper):
            raise ValueError(f"edge arrays differ in length: {len(self.edge_paper)} papers, "
                             f"{len(self.edge_reviewer)} reviewers, {len(self.affinity)} affinities")
        if len(self.edge_paper) and (self.edge_paper.min() < 0 or self.edge_paper.max() >= n_papers):
            raise ValueError(f"edge_paper holds indices outside 0..{n_papers - 1}")
        if len(self.edge_reviewer) and (self.edge_reviewer.min() < 0 or self.edge_reviewer.max() >= n_reviewers):
            raise ValueError(f"edge_reviewer holds indices outside 0..{n_reviewers - 1}")
        if not np.isfinite(self.affinity).all():
            raise ValueError("affinity holds NaN or infinite values")
        if (self.demand < 0).any():
            raise ValueError("demand must be >= 0")
        if (self.min_load < 0).any() or (self.min_load > self.max_load).any():
            raise ValueError("loads must satisfy 0 <= min_load <= max_load")
        seen: set[str] = set()
        for requirement in self.requirements:
            if requirement.attribute not in self.attributes:
                raise ValueError(f"requirement on unknown attribute {requirement.attribute!r}")
            if requirement.attribute in seen:
                raise ValueError(f"two requirements on attribute {requirement.attribute!r}")
            if requirement.at_least < 1:
                raise ValueError(f"requirement {requirement.attribute!r}: at_least must be >= 1")
            seen.add(requirement.attribute)
        pair = self.edge_paper * max(n_reviewers, 1) + self.edge_reviewer
        order = np.argsort(pair, kind="stable")
        repeated = np.flatnonzero(pair[order][1:] == pair[order][:-1])
        if len(repeated):
            first = order[repeated[0]]
            raise ValueError(f"{len(repeated):,} duplicate (paper, reviewer) arcs, e.g. "
                             f"({self.papers[self.edge_paper[first]]}, {self.reviewers[self.edge_reviewer[first]]})")

    @property
    def n_edges(self) -> int:
        return len(self.edge_paper)

    def need(self, requirement: Requirement) -> np.ndarray:
        """Per paper, how many attribute reviewers the requirement can ask for: at_least capped by demand."""
        return np.minimum(self.demand, requirement.at_least)


@dataclass
class Coverage:
    """How many papers (with demand > 0) got their requirement; `missing` are the ids of those that did not."""

    attribute: str
    at_least: int
    papers: int
    met: int
    missing: list[str]

    @property
    def fraction(self) -> float:
        return self.met / self.papers if self.papers else 1.0


@dataclass
class Assignment:
    """A solver's integral assignment (`chosen` arcs) and, for the random method, each arc's probability."""

    problem: AssignmentProblem
    chosen: np.ndarray
    method: str
    marginals: np.ndarray | None = None
    solve_seconds: float = 0.0
    status: str = "optimal"
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def paper_totals(self) -> np.ndarray:
        """Sum of the assigned reviewers' affinities, per paper."""
        p = self.problem
        return np.bincount(p.edge_paper[self.chosen], weights=p.affinity[self.chosen], minlength=len(p.papers))

    def paper_counts(self) -> np.ndarray:
        """Reviewers assigned, per paper."""
        return np.bincount(self.problem.edge_paper[self.chosen], minlength=len(self.problem.papers))

    def loads(self) -> np.ndarray:
        """Papers assigned, per reviewer."""
        return np.bincount(self.problem.edge_reviewer[self.chosen], minlength=len(self.problem.reviewers))

    def attribute_counts(self, attribute: str) -> np.ndarray:
        """Assigned reviewers carrying `attribute`, per paper."""
        p = self.problem
        hit = self.chosen & p.attributes[attribute][p.edge_reviewer]
        return np.bincount(p.edge_paper[hit], minlength=len(p.papers))

    def requirement_units(self) -> int:
        """Satisfied requirement units, the quantity every solver maximises first."""
        return sum(int(np.minimum(self.attribute_counts(r.attribute), self.problem.need(r)).sum())
                   for r in self.problem.requirements)

    def requirement_coverage(self) -> dict[str, Coverage]:
        """Per requirement, the papers with demand > 0 that have min(at_least, demand) attribute reviewers."""
        p = self.problem
        wanted = p.demand > 0
        coverage = {}
        for requirement in p.requirements:
            met = self.attribute_counts(requirement.attribute) >= p.need(requirement)
            missing = np.flatnonzero(wanted & ~met)
            coverage[requirement.attribute] = Coverage(
                requirement.attribute, requirement.at_least, int(wanted.sum()), int((wanted & met).sum()),
                [p.papers[i] for i in missing])
        return coverage


def check_feasibility(problem: AssignmentProblem) -> list[Shortage]:
    """Counting arguments that prove infeasibility in O(E) without solving; an empty list proves nothing."""
    p = problem
    shortages: list[Shortage] = []
    slots = int(p.demand.sum())
    capacity = int(p.max_load.sum())
    if capacity < slots:
        shortages.append(Shortage("capacity", f"reviewer capacity {capacity:,} < {slots:,} slots "
                                  f"({_papers_times_demand(p.demand)}): short by {slots - capacity:,}",
                                  slots - capacity))
    usable = p.max_load[p.edge_reviewer] > 0
    candidates = np.bincount(p.edge_paper[usable], minlength=len(p.papers))
    wanted_arc = p.demand[p.edge_paper] > 0
    reachable = np.bincount(p.edge_reviewer[wanted_arc], minlength=len(p.reviewers))
    forced_paper = np.bincount(p.edge_paper[p.forced], minlength=len(p.papers))
    forced_reviewer = np.bincount(p.edge_reviewer[p.forced], minlength=len(p.reviewers))
    floor = int(p.min_load.sum())
    found = [
        _node_shortage("candidates", p.papers, candidates, p.demand, "<", "paper",
                       "fewer candidates than reviewers wanted after conflicts"),
        None if floor <= slots else Shortage(
            "min_load", f"minimum loads need {floor:,} assignments but only {slots:,} slots exist: over by "
                        f"{floor - slots:,}", floor - slots),
        _node_shortage("min_load", p.reviewers, reachable, p.min_load, "<", "reviewer",
                       "fewer candidate papers than their minimum load"),
        _node_shortage("forced", p.papers, forced_paper, p.demand, ">", "paper",
                       "more forced reviewers than reviewers wanted"),
        _node_shortage("forced", p.reviewers, forced_reviewer, p.max_load, ">", "reviewer",
                       "more forced papers than their maximum load"),
    ]
    shortages += [s for s in found if s is not None]
    for requirement in p.requirements:
        name = requirement.attribute
        need = p.need(requirement)
        needed = int(need.sum())
        supply = int(p.max_load[p.attributes[name]].sum())
        if supply < needed:
            n_needing = int((need > 0).sum())
            if requirement.at_least == 1:
                what = f"{n_needing:,} papers needing 1 {name}"
            else:
                what = f"{needed:,} for {n_needing:,} papers needing {requirement.at_least} {name}"
            shortages.append(Shortage("requirement", f"{name} capacity {supply:,} < {what}: "
                                      f"short by {needed - supply:,}", needed - supply))
    return shortages


def require_feasible(problem: AssignmentProblem) -> None:
    """Raise InfeasibleAssignment naming every shortage check_feasibility finds."""
    shortages = check_feasibility(problem)
    if shortages:
        raise InfeasibleAssignment("infeasible assignment: " + "; ".join(s.message for s in shortages), shortages)


def _vector(values, length: int, dtype, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=dtype).reshape(-1)
    if len(array) != length:
        raise ValueError(f"{name} has {len(array)} entries, expected {length}")
    return array


def _papers_times_demand(demand: np.ndarray) -> str:
    wanting = demand[demand > 0]
    if not len(wanting):
        return "no paper wants reviewers"
    low, high = int(wanting.min()), int(wanting.max())
    if low == high:
        return f"{len(wanting):,} papers x {low}"
    return f"{len(wanting):,} papers, {low} to {high} each"


def _node_shortage(kind: str, ids: list[str], have: np.ndarray, bound: np.ndarray, sign: str, noun: str,
                   what: str) -> Shortage | None:
    """The papers or reviewers whose count is below (sign "<") or above (">") their bound, named, with the
    total gap; None when there are none."""
    gap = bound - have if sign == "<" else have - bound
    where = np.flatnonzero(gap > 0)
    if not len(where):
        return None
    return Shortage(kind, f"{count(len(where), noun)} {_verb(len(where), 'has', 'have')} {what}: "
                          f"{_listed(ids, where, have, bound, sign)}", int(gap[where].sum()))


def _listed(ids: list[str], where: np.ndarray, have: np.ndarray, bound: np.ndarray, sign: str) -> str:
    shown = ", ".join(f"{ids[i]} ({have[i]} {sign} {bound[i]})" for i in where[:LISTED])
    return shown + (", ..." if len(where) > LISTED else "")


def _verb(n: int, singular: str, plural: str) -> str:
    return singular if n == 1 else plural
