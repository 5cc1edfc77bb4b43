"""Reviewer assignment: solver scale, end to end with affinities, and the quality tables on real and synthetic data.

    python bench/assign.py solver --papers 10000 --reviewers 5000 --candidates 100
    python bench/assign.py e2e --world /tmp/reco/synth20k --submissions 2000 --reviewers 1000
    python bench/assign.py quality nips
    python bench/assign.py quality synthetic --world /tmp/reco/synth5k

`solver` times the min-cost flow on a random instance against the greedy baseline in the same run, with peak
RSS. `e2e` times a conference from the graph snapshot to the assignment: the reviewer model's affinities for
every submission, the feasibility check and the solve. `quality` prints total, mean and worst-paper
affinity for the optimal, max-min and greedy assignments, and what the senior rule and a probability cap
of 0.5 cost. The affinities are RECO-Rank's, trained on the years before the submissions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reviewers import SHARED, _log, _peak_rss_mb, build_index  # noqa: E402

E2E_TARGET_S = 300.0


def _world(args, years: int = 1):
    """Snapshot, evidence index (features cached), submissions (papers of the last `years` years, from the
    test year on) and pool (authors with enough papers before the test year)."""
    from scholargraph.conference.submissions import ReviewerPool
    from scholargraph.ingest.offline import snapshot_from_files

    if args.data == "nips":
        snap = snapshot_from_files("aminer", [str(SHARED / "nips" / "nips-1987-1993.aminer.jsonl")])
        test_year, min_papers, topics = 1993, 2, 10
    else:
        snap = snapshot_from_files("aminer", [str(Path(args.world) / "corpus.aminer.jsonl")])
        test_year, min_papers, topics = snap.max_year - years + 1, 3, 10
    index = build_index(snap, Path(args.cache) / f"assign-{args.data}-{Path(args.world or 'nips').name}-{test_year}",
                        until_year=test_year - 1, num_topics=topics)
    pool = ReviewerPool.from_snapshot(snap, min_papers=min_papers, until_year=test_year - 1)
    papers = np.flatnonzero((snap.paper_year >= test_year) & ~snap.paper_stub)
    return snap, index, pool, papers, test_year


def _model(index, pool, test_year: int, n: int, seed: int = 0):
    from scholargraph.ranking.reviewers.evaluate import heldout_training
    from scholargraph.ranking.reviewers.reco_rank import RecoRank

    t0 = time.perf_counter()
    model = RecoRank(seed=seed).train_on(heldout_training(index, pool, test_year, n=n, seed=seed))
    _log(f"RECO-Rank trained on {n} hidden papers before {test_year} in {time.perf_counter() - t0:.0f} s")
    return model


def cmd_quality(args) -> None:
    from scholargraph.conference import assignment as solver
    from scholargraph.conference.assignment.plan import SENIOR, build_problem, senior_flags
    from scholargraph.ranking.reviewers.assign import affinity_table

    snap, index, pool, papers, test_year = _world(args)
    rng = np.random.default_rng(args.seed)
    if args.submissions and len(papers) > args.submissions:
        papers = np.sort(rng.choice(papers, args.submissions, replace=False))
    model = _model(index, pool, test_year, args.training)
    queries = [index.query_for_paper(int(p)) for p in papers]
    t0 = time.perf_counter()
    table = affinity_table(model, index, queries, pool, per_paper=args.candidates, quiet=False)
    _log(f"affinities: {len(queries)} submissions x {len(pool)} reviewers in {time.perf_counter() - t0:.0f} s")
    max_load = args.max_load or max(2, int(np.ceil(args.k * len(queries) / len(pool) * 1.5)))
    senior, rule = senior_flags(args.senior, pool, index.snapshot, lambda given: {})
    base = dict(demand=[args.k] * len(queries), max_load=max_load)
    plain = build_problem(table, **base)
    with_senior = build_problem(table, **base, attributes={SENIOR: senior},
                                requirements=[solver.Requirement(SENIOR, 1)])
    runs = {
        "optimal (min-cost flow)": (plain, "flow", None),
        "max-min fairness": (plain, "maxmin", None),
        "integer program (HiGHS)": (plain, "milp", None),
        "greedy": (plain, "greedy", None),
        f"optimal + senior ({rule})": (with_senior, "flow", None),
        "greedy + senior rule reported": (with_senior, "greedy", None),
        "randomised, Q = 0.5": (plain, "random", 0.5),
        "randomised, Q = 0.5 + senior": (with_senior, "random", 0.5),
    }
    rows = []
    for name, (problem, method, q) in runs.items():
        solver.require_feasible(problem)
        a = solver.solve(problem, method, max_prob=q, seed=args.seed, time_limit=args.time_limit)
        s = solver.summarize(a)
        s["name"] = name
        rows.append(s)
        _log(f"{name}: {s['solve_seconds']:.2f} s")
    lines = [f"{args.data}: {len(queries)} submissions of {test_year}, pool {len(pool)} (>= min papers before "
             f"{test_year}), k = {args.k}, max load {max_load}, {len(table.affinity):,} candidate pairs "
             f"(top {args.candidates} per paper, conflicts out: {int(table.conflicts.sum()):,}); "
             f"senior reviewers: {int(senior.sum())} ({rule})",
             f"{'assignment':<40} {'total':>9} {'E[total]':>9} {'mean/paper':>10} {'worst':>8} {'p10':>8} "
             f"{'senior %':>9} {'max P':>6} {'filled':>7} {'s':>7}"]
    for s in rows:
        cov = s["requirements"].get(SENIOR, {}).get("fraction")
        max_p = s.get("max_pair_probability")
        expected = s.get("expected_total_affinity")
        lines.append(f"{s['name']:<40} {s['total_affinity']:>9.2f} "
                     f"{'' if expected is None else f'{expected:.2f}':>9} {s['mean_paper_total']:>10.3f} "
                     f"{s['worst_paper_total']:>8.3f} {s['paper_total_quantiles']['p10']:>8.3f} "
                     f"{'' if cov is None else f'{100 * cov:.1f}':>9} {'' if max_p is None else f'{max_p:.2f}':>6} "
                     f"{100 * s['slots_filled'] / s['slots_wanted']:>6.1f}% {s['solve_seconds']:>7.2f}")
    print("\n".join(lines), flush=True)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"assign-{args.data}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (out / f"assign-{args.data}.json").write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")


def cmd_e2e(args) -> None:
    """A conference of `submissions` x `reviewers`: affinities, feasibility and the solve, timed."""
    from scholargraph.conference import assignment as solver
    from scholargraph.conference.assignment.plan import build_problem
    from scholargraph.conference.submissions import ReviewerPool
    from scholargraph.ranking.reviewers.assign import affinity_table

    t_all = time.perf_counter()
    snap, index, pool, papers, test_year = _world(args, years=2)
    t_index = time.perf_counter() - t_all
    rng = np.random.default_rng(args.seed)
    model = _model(index, pool, test_year, args.training)
    papers = np.sort(rng.choice(papers, min(args.submissions, len(papers)), replace=False))
    top = np.argsort(-pool.n_papers, kind="stable")[:args.reviewers]
    pool = ReviewerPool.from_snapshot(snap, author_ids=[pool.author_ids[r] for r in np.sort(top)])
    t0 = time.perf_counter()
    queries = [index.query_for_paper(int(p)) for p in papers]
    table = affinity_table(model, index, queries, pool, per_paper=args.candidates, quiet=False)
    t_aff = time.perf_counter() - t0
    t0 = time.perf_counter()
    max_load = int(np.ceil(args.k * len(queries) / len(pool) * 1.25))
    problem = build_problem(table, demand=[args.k] * len(queries), max_load=max_load)
    solver.require_feasible(problem)
    a = solver.solve(problem, "flow")
    t_solve = time.perf_counter() - t0
    total = t_aff + t_solve
    s = solver.summarize(a)
    print(f"end to end: {len(queries)} submissions x {len(pool)} reviewers (k={args.k}, max load {max_load}, "
          f"{len(table.affinity):,} candidate pairs)\n"
          f"  snapshot + features (cached) {t_index:.1f} s; model training {args.training} queries (once per "
          f"graph, not per assignment)\n"
          f"  affinities {t_aff:.1f} s ({1000 * t_aff / len(queries):.0f} ms/submission), feasibility + min-cost "
          f"flow {t_solve:.1f} s\n"
          f"  affinities + assignment {total:.1f} s: {total / E2E_TARGET_S:.2f} x the 300 s target; "
          f"peak RSS {_peak_rss_mb():.0f} MB\n"
          f"  total affinity {s['total_affinity']:.2f}, worst paper {s['worst_paper_total']:.3f}", flush=True)


def cmd_solver(args) -> None:
    from assign_solvers import main as solver_main

    solver_main(args.rest)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quality")
    q.add_argument("data", choices=["nips", "synthetic"])
    q.add_argument("--world", default="/tmp/reco/synth5k")
    q.add_argument("--submissions", type=int, default=0, help="Sample this many submissions (0: all).")
    q.add_argument("--candidates", type=int, default=100)
    q.add_argument("--k", type=int, default=3)
    q.add_argument("--max-load", type=int, default=0, help="0: 1.5 x the mean load.")
    q.add_argument("--senior", default="papers>=5")
    q.add_argument("--time-limit", type=float, default=300.0)
    q.add_argument("--training", type=int, default=600)
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--cache", default="/tmp/reco/cache")
    q.add_argument("--out", default=None)
    e = sub.add_parser("e2e")
    e.add_argument("--world", default="/tmp/reco/synth20k")
    e.add_argument("--submissions", type=int, default=2000)
    e.add_argument("--reviewers", type=int, default=1000)
    e.add_argument("--candidates", type=int, default=100)
    e.add_argument("--k", type=int, default=3)
    e.add_argument("--training", type=int, default=600)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--cache", default="/tmp/reco/cache")
    s = sub.add_parser("solver", help="Solver scale (bench/assign_solvers.py; its options follow).")
    s.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.cmd == "e2e":
        args.data = "synthetic"
    {"quality": cmd_quality, "e2e": cmd_e2e, "solver": cmd_solver}[args.cmd](args)


if __name__ == "__main__":
    main()
