"""Reviewer-paper assignment: min-cost flow, integer programs, max-min fairness, randomised and greedy."""

from __future__ import annotations

from .dispatch import METHODS, solve
from .flow import FlowNetwork, build_network, probability_cap, round_flow, solve_flow, solve_network, solve_random
from .greedy import solve_greedy
from .milp import solve_maxmin, solve_milp
from .problem import (
    Assignment,
    AssignmentProblem,
    Coverage,
    InfeasibleAssignment,
    Requirement,
    Shortage,
    SolverTimeLimit,
    check_feasibility,
    require_feasible,
)
from .report import compare_lines, format_summary, summarize

__all__ = [
    "METHODS",
    "Assignment",
    "AssignmentProblem",
    "Coverage",
    "FlowNetwork",
    "InfeasibleAssignment",
    "Requirement",
    "Shortage",
    "SolverTimeLimit",
    "build_network",
    "check_feasibility",
    "compare_lines",
    "format_summary",
    "probability_cap",
    "require_feasible",
    "round_flow",
    "solve",
    "solve_flow",
    "solve_greedy",
    "solve_maxmin",
    "solve_milp",
    "solve_network",
    "solve_random",
    "summarize",
]
