"""solve(): one entry point for every assignment method; checks feasibility before any solver runs."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import cast

from scholargraph.errors import UsageError

from .flow import solve_flow, solve_random
from .greedy import solve_greedy
from .milp import solve_maxmin, solve_milp
from .problem import Assignment, AssignmentProblem, require_feasible

Solver = Callable[[AssignmentProblem, float | None, int, float | None], Assignment]

# Looked up at call time, so tests can swap a solver out.
SOLVERS: dict[str, Solver] = {
    "flow": lambda problem, max_prob, seed, time_limit: solve_flow(problem),
    "milp": lambda problem, max_prob, seed, time_limit: solve_milp(problem, time_limit),
    "maxmin": lambda problem, max_prob, seed, time_limit: solve_maxmin(problem, time_limit),
    "greedy": lambda problem, max_prob, seed, time_limit: solve_greedy(problem),
    # solve() has checked that the random method has a max_prob.
    "random": lambda problem, max_prob, seed, time_limit: solve_random(problem, cast(float, max_prob), seed),
}
METHODS = tuple(SOLVERS)
ONE_REQUIREMENT = ("flow", "random")


def solve(problem: AssignmentProblem, method: str = "flow", *, max_prob: float | None = None, seed: int = 0,
          time_limit: float | None = None) -> Assignment:
    """Solve with `method`; `flow` with a max_prob means `random`. time_limit applies to milp and maxmin.

    Raises UsageError for a bad method/option combination and InfeasibleAssignment (before solving) when
    counting alone shows the problem infeasible.
    """
    if max_prob is not None and method == "flow":
        method = "random"
    if method not in SOLVERS:
        raise UsageError(f"unknown assignment method {method!r}; choose one of {', '.join(METHODS)}")
    if method == "random":
        if max_prob is None:
            raise UsageError("the random method needs max_prob, the cap on each pair's probability")
        if not 0 < max_prob <= 1:
            raise UsageError(f"max_prob must be in (0, 1], got {max_prob:g}")
    elif max_prob is not None:
        raise UsageError(f"max_prob works with the flow method only, not {method}")
    if method in ONE_REQUIREMENT and len(problem.requirements) > 1:
        names = ", ".join(r.attribute for r in problem.requirements)
        hint = "use the milp method without max_prob" if method == "random" else "use the milp method"
        raise UsageError(f"the {method} method handles one requirement, got {len(problem.requirements)} "
                         f"({names}); {hint}")
    if time_limit is not None and time_limit <= 0:
        raise UsageError(f"time_limit must be positive, got {time_limit:g}")
    require_feasible(problem)
    started = time.perf_counter()
    with _solver_output_to_stderr():
        assignment = SOLVERS[method](problem, max_prob, seed, time_limit)
    assignment.solve_seconds = time.perf_counter() - started
    return assignment


@contextlib.contextmanager
def _solver_output_to_stderr() -> Iterator[None]:
    """HiGHS can print debug lines to the process's stdout, which would land in a CLI's rows or TREC file:
    send file descriptor 1 to stderr while a solver runs."""
    try:
        out = sys.stdout.fileno()
        err = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):  # captured streams without descriptors (pytest, notebooks)
        yield
        return
    sys.stdout.flush()
    saved = os.dup(out)
    try:
        os.dup2(err, out)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, out)
        os.close(saved)
