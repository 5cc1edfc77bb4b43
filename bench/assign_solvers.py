"""Reviewer-paper assignment solvers on a random instance: min-cost flow at scale against the greedy baseline.

    python bench/assign_solvers.py                                   # 10,000 papers x 5,000 reviewers, 1M arcs
    python bench/assign_solvers.py --methods milp,maxmin,random --small-papers 500

Affinities are the cosine of latent paper and reviewer vectors plus noise; each paper's candidates are its
top reviewers by a noisier score (what a recommender would shortlist), 20% of reviewers are senior and every
paper wants at least one. Seniors' max load is raised to cover that (10% spare) unless --senior-max-load is
given: 20% of 5,000 reviewers at 7 papers cannot serve 10,000 papers, which check_feasibility rejects.

Prints instance build time, solve times, peak RSS, and total/worst affinity of the optimum against greedy
(the baseline, timed in the same run).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scholargraph.conference.assignment import (  # noqa: E402
    AssignmentProblem,
    Requirement,
    compare_lines,
    solve,
    summarize,
)


def _peak_rss_mb() -> float:
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def random_problem(n_papers: int, n_reviewers: int, candidates: int, k: int, max_load: int, *,
                   senior: float = 0.2, senior_max_load: int | None = None, dim: int = 16, seed: int = 0,
                   block: int = 500) -> AssignmentProblem:
    """Latent-vector affinities and top-`candidates` shortlists, built in blocks of papers to bound memory."""
    rng = np.random.default_rng(seed)
    paper_vectors = _unit(rng.standard_normal((n_papers, dim)))
    reviewer_vectors = _unit(rng.standard_normal((n_reviewers, dim)))
    candidates = min(candidates, n_reviewers)
    edge_paper, edge_reviewer, affinity = [], [], []
    for start in range(0, n_papers, block):
        stop = min(start + block, n_papers)
        cosine = paper_vectors[start:stop] @ reviewer_vectors.T
        shortlist_score = cosine + 0.5 * rng.standard_normal(cosine.shape)
        top = np.argpartition(-shortlist_score, candidates - 1, axis=1)[:, :candidates]
        rows = np.repeat(np.arange(start, stop), candidates)
        edge_paper.append(rows)
        edge_reviewer.append(top.reshape(-1))
        affinity.append(cosine[rows - start, top.reshape(-1)] + 0.1 * rng.standard_normal(rows.shape))
    flags = rng.random(n_reviewers) < senior
    loads = np.full(n_reviewers, max_load)
    if flags.any():
        if senior_max_load is None:
            senior_max_load = max(max_load, int(np.ceil(1.1 * n_papers / flags.sum())))
        loads[flags] = senior_max_load
    return AssignmentProblem(
        papers=[f"p{i}" for i in range(n_papers)], reviewers=[f"r{i}" for i in range(n_reviewers)],
        edge_paper=np.concatenate(edge_paper), edge_reviewer=np.concatenate(edge_reviewer),
        affinity=np.concatenate(affinity), demand=np.full(n_papers, k), max_load=loads,
        attributes={"senior": flags}, requirements=[Requirement("senior", 1)] if senior > 0 else [])


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _run(problem: AssignmentProblem, method: str, **options) -> dict:
    assignment = solve(problem, method, **options)
    summary = summarize(assignment)
    extra = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in assignment.timings.items())
    print(f"  {method:<7} {assignment.solve_seconds:7.2f} s" + (f"  ({extra})" if extra else "")
          + f"  peak RSS {_peak_rss_mb():,.0f} MB", flush=True)
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--reviewers", type=int, default=5_000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--max-load", type=int, default=7)
    parser.add_argument("--senior", type=float, default=0.2, help="fraction of senior reviewers (0: no requirement)")
    parser.add_argument("--senior-max-load", type=int, default=None,
                        help="max load of senior reviewers (default: enough for every paper, 10%% spare)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", default="", help="comma list among milp,maxmin,random, run on the small size")
    parser.add_argument("--small-papers", type=int, default=500)
    parser.add_argument("--max-prob", type=float, default=0.5)
    parser.add_argument("--time-limit", type=float, default=60.0, help="for milp and maxmin")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    problem = random_problem(args.papers, args.reviewers, args.candidates, args.k, args.max_load,
                             senior=args.senior, senior_max_load=args.senior_max_load, seed=args.seed)
    built = time.perf_counter() - started
    print(f"instance: {args.papers:,} papers x {args.reviewers:,} reviewers, {problem.n_edges:,} arcs, k={args.k}, "
          f"max load {args.max_load} (senior {int(problem.max_load.max())}); built in {built:.2f} s, "
          f"peak RSS {_peak_rss_mb():,.0f} MB", flush=True)
    flow = _run(problem, "flow")
    greedy = _run(problem, "greedy")
    comparable = [flow, greedy]
    if problem.requirements:  # greedy ignores the requirement; the optimum without it is the fair comparison
        unconstrained = _run(replace(problem, requirements=[]), "flow")
        unconstrained["method"] = "flow, no requirement"
        comparable.append(unconstrained)
    print(f"flow / greedy time: {flow['solve_seconds'] / max(greedy['solve_seconds'], 1e-9):.1f}x; "
          f"total affinity {flow['total_affinity'] - greedy['total_affinity']:+,.2f} "
          f"({flow['total_affinity'] / greedy['total_affinity'] - 1:+.2%}), worst paper "
          f"{greedy['worst_paper_total']:.4f} -> {flow['worst_paper_total']:.4f}")
    print("\n".join(compare_lines(comparable)))

    methods = [m for m in args.methods.split(",") if m]
    if methods:
        small_reviewers = max(1, args.reviewers * args.small_papers // args.papers)
        small = random_problem(args.small_papers, small_reviewers, min(args.candidates, small_reviewers), args.k,
                               args.max_load, senior=args.senior, senior_max_load=args.senior_max_load,
                               seed=args.seed)
        print(f"\nsmall instance: {args.small_papers:,} papers x {small_reviewers:,} reviewers, "
              f"{small.n_edges:,} arcs", flush=True)
        summaries = [_run(small, "flow"), _run(small, "greedy")]
        for method in methods:
            options = {"max_prob": args.max_prob} if method == "random" else {}
            if method in ("milp", "maxmin"):
                options["time_limit"] = args.time_limit
            summaries.append(_run(small, method, **options))
        print("\n".join(compare_lines(summaries)))


if __name__ == "__main__":
    main()
