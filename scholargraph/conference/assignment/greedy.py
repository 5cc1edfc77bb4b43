"""Greedy baseline: what a chair gets by walking the papers in order and taking each one's best free reviewers."""

from __future__ import annotations

import numpy as np

from .problem import Assignment, AssignmentProblem


def solve_greedy(problem: AssignmentProblem) -> Assignment:
    """Forced arcs first, then papers in input order take their best candidates whose load is below max_load.

    It ignores minimum loads and requirements and can leave slots unfilled; the notes say how many.
    """
    p = problem
    n_papers, n_reviewers = len(p.papers), len(p.reviewers)
    chosen = p.forced.copy()
    load = np.bincount(p.edge_reviewer[chosen], minlength=n_reviewers)
    missing = p.demand - np.bincount(p.edge_paper[chosen], minlength=n_papers)
    order = np.lexsort((-p.affinity, p.edge_paper))
    order = order[~chosen[order]]
    bounds = np.searchsorted(p.edge_paper[order], np.arange(n_papers + 1))
    for paper in np.flatnonzero(missing > 0):
        arcs = order[bounds[paper]:bounds[paper + 1]]
        reviewers = p.edge_reviewer[arcs]
        taken = arcs[load[reviewers] < p.max_load[reviewers]][:missing[paper]]
        chosen[taken] = True
        load[p.edge_reviewer[taken]] += 1
    notes = []
    unfilled = p.demand - np.bincount(p.edge_paper[chosen], minlength=n_papers)
    if unfilled.any():
        short = int((unfilled > 0).sum())
        notes.append(f"greedy left {int(unfilled.sum()):,} of {int(p.demand.sum()):,} slots unfilled "
                     f"({short:,} paper{'' if short == 1 else 's'} short)")
    below = int((load < p.min_load).sum())
    if below:
        notes.append(f"{below:,} reviewer{'' if below == 1 else 's'} below their minimum load "
                     "(greedy ignores minimum loads)")
    if p.requirements:
        notes.append("greedy ignores requirements; coverage is whatever the order gave")
    return Assignment(p, chosen, "greedy", status="greedy", notes=notes)
