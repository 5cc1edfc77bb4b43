"""Summary statistics of an assignment, for the terminal and for side-by-side comparison of methods."""

from __future__ import annotations

import numpy as np

from scholargraph.tables import text_table

from .problem import LISTED, Assignment

QUANTILES = {"min": 0.0, "p10": 0.1, "p25": 0.25, "median": 0.5, "p75": 0.75, "p90": 0.9, "max": 1.0}


def summarize(assignment: Assignment) -> dict:
    """Plain-Python figures (JSON-ready) on quality, fairness, loads and requirement coverage."""
    a = assignment
    p = a.problem
    wanted = np.flatnonzero(p.demand > 0)
    totals = a.paper_totals()[wanted]  # an unscored arc adds nothing (its affinity is 0 to the solvers)
    pair_affinity = p.affinity[a.chosen & p.scored]
    unscored = np.flatnonzero(a.chosen & ~p.scored)
    loads = a.loads()
    values, counts = np.unique(loads, return_counts=True)
    worst = int(wanted[np.argmin(totals)]) if len(wanted) else None
    summary = {
        "method": a.method,
        "status": a.status,
        "solve_seconds": round(a.solve_seconds, 4),
        "total_affinity": float(pair_affinity.sum()),
        "mean_paper_total": float(totals.mean()) if len(totals) else 0.0,
        "worst_paper_total": float(totals.min()) if len(totals) else 0.0,
        "worst_paper": p.papers[worst] if worst is not None else None,
        "paper_total_quantiles": {name: float(np.quantile(totals, q)) if len(totals) else 0.0
                                  for name, q in QUANTILES.items()},
        "mean_pair_affinity": float(pair_affinity.mean()) if len(pair_affinity) else 0.0,
        "load_histogram": {int(v): int(c) for v, c in zip(values, counts)},
        "slots_filled": int(np.minimum(a.paper_counts(), p.demand).sum()),
        "slots_wanted": int(p.demand.sum()),
        "requirements": {
            name: {"at_least": c.at_least, "fraction": c.fraction, "papers_missing": len(c.missing),
                   "missing": c.missing[:LISTED]}
            for name, c in a.requirement_coverage().items()},
        "notes": list(a.notes),
        "unscored_pairs": len(unscored),
        "unscored_examples": [f"{p.papers[p.edge_paper[e]]} {p.reviewers[p.edge_reviewer[e]]}"
                              for e in unscored[:LISTED]],
    }
    if a.marginals is not None:
        summary["expected_total_affinity"] = float(a.marginals @ p.affinity)
        free = ~p.forced
        summary["max_pair_probability"] = float(a.marginals[free].max()) if free.any() else 0.0
    return summary


def format_summary(summary: dict) -> list[str]:
    """Lines for a terminal."""
    s = summary
    q = s["paper_total_quantiles"]
    lines = [
        f"method {s['method']} ({s['status']}) in {s['solve_seconds']:.2f} s",
        f"total affinity {s['total_affinity']:,.4f}; per paper mean {s['mean_paper_total']:.4f}, "
        f"worst {s['worst_paper_total']:.4f}" + (f" ({s['worst_paper']})" if s["worst_paper"] is not None else ""),
        "per-paper totals: " + "  ".join(f"{name} {value:.4f}" for name, value in q.items()),
        f"mean affinity per assigned pair {s['mean_pair_affinity']:.4f}"
        + (" (scored pairs)" if s.get("unscored_pairs") else ""),
        f"slots filled {s['slots_filled']:,} / {s['slots_wanted']:,}",
        "reviewer loads: " + ", ".join(f"{load}: {n:,}" for load, n in s["load_histogram"].items()),
    ]
    if "expected_total_affinity" in s:
        lines.append(f"expected total affinity {s['expected_total_affinity']:,.4f}; "
                     f"largest pair probability {s['max_pair_probability']:.4f}")
    for name, r in s["requirements"].items():
        line = f"requirement {name} (>= {r['at_least']}): {r['fraction']:.1%} of papers"
        if r["papers_missing"]:
            more = ", ..." if r["papers_missing"] > len(r["missing"]) else ""
            line += f" ({r['papers_missing']:,} missing: {', '.join(r['missing'])}{more})"
        lines.append(line)
    if s.get("unscored_pairs"):
        more = ", ..." if s["unscored_pairs"] > len(s["unscored_examples"]) else ""
        lines.append(f"{s['unscored_pairs']:,} assigned pair(s) have no affinity (no eligible evidence) and count in "
                     f"no total or mean: {', '.join(s['unscored_examples'])}{more}")
    lines += [f"note: {note}" for note in s["notes"]]
    return lines


def compare_lines(summaries: list[dict]) -> list[str]:
    """A small side-by-side table, one row per method."""
    requirement_names = sorted({name for s in summaries for name in s["requirements"]})
    header = ["method", "status", "total", "mean", "worst", "filled"] + requirement_names + ["seconds"]
    rows = [header]
    for s in summaries:
        rows.append([s["method"], s["status"], f"{s['total_affinity']:,.3f}", f"{s['mean_paper_total']:.4f}",
                     f"{s['worst_paper_total']:.4f}", f"{s['slots_filled']:,}/{s['slots_wanted']:,}"]
                    + [f"{s['requirements'][n]['fraction']:.1%}" if n in s["requirements"] else "-"
                       for n in requirement_names]
                    + [f"{s['solve_seconds']:.2f}"])
    return text_table(rows[0], rows[1:], left=2, rule=None).split("\n")
