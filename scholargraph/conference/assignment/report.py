"""Summary statistics of an assignment, for the terminal and for side-by-side comparison of methods."""

from __future__ import annotations

import numpy as np

from scholargraph.graph.ids import output_id
from scholargraph.tables import text_table

from .problem import LISTED, Assignment

QUANTILES = {"min": 0.0, "p10": 0.1, "p25": 0.25, "median": 0.5, "p75": 0.75, "p90": 0.9, "max": 1.0}


def summarize(assignment: Assignment) -> dict:
    """Plain-Python figures (JSON-ready) on quality, fairness, loads and requirement coverage.

    An assigned arc whose affinity could not be computed (`problem.scored` False: a forced pair without
    eligible evidence) is no number: it adds to no total or mean, and its paper's total is unknown, so such a
    paper is left out of the per-paper figures (mean, worst, quantiles) and counted apart with examples. A
    figure with nothing to compute it from is None, never 0."""
    a = assignment
    p = a.problem
    unscored = np.flatnonzero(a.chosen & ~p.scored)
    wanted = np.flatnonzero(p.demand > 0)
    open_total = np.isin(wanted, p.edge_paper[unscored])  # a paper with an unscored assigned pair
    counted, left_out = wanted[~open_total], wanted[open_total]
    totals = a.paper_totals()[counted]
    pair_affinity = p.affinity[a.chosen & p.scored]
    loads = a.loads()
    values, counts = np.unique(loads, return_counts=True)
    worst = int(counted[np.argmin(totals)]) if len(counted) else None
    summary = {
        "method": a.method,
        "status": a.status,
        "solve_seconds": round(a.solve_seconds, 4),
        "total_affinity": float(pair_affinity.sum()),
        "mean_paper_total": float(totals.mean()) if len(totals) else None,
        "worst_paper_total": float(totals.min()) if len(totals) else None,
        "worst_paper": output_id(p.papers[worst]) if worst is not None else None,
        "paper_total_quantiles": {name: float(np.quantile(totals, q)) if len(totals) else None
                                  for name, q in QUANTILES.items()},
        "papers_totalled": len(counted),
        "papers_without_total": len(left_out),
        "papers_without_total_examples": [output_id(p.papers[i]) for i in left_out[:LISTED]],
        "mean_pair_affinity": float(pair_affinity.mean()) if len(pair_affinity) else None,
        "load_histogram": {int(v): int(c) for v, c in zip(values, counts)},
        "slots_filled": int(np.minimum(a.paper_counts(), p.demand).sum()),
        "slots_wanted": int(p.demand.sum()),
        "requirements": {
            name: {"at_least": c.at_least, "fraction": c.fraction, "papers_missing": len(c.missing),
                   "missing": [output_id(m) for m in c.missing[:LISTED]]}
            for name, c in a.requirement_coverage().items()},
        "notes": list(a.notes),
        "unscored_pairs": len(unscored),
        "unscored_examples": [f"{output_id(p.papers[p.edge_paper[e]])} {output_id(p.reviewers[p.edge_reviewer[e]])}"
                              for e in unscored[:LISTED]],
    }
    if a.marginals is not None:
        summary["expected_total_affinity"] = float(a.marginals[p.scored] @ p.affinity[p.scored])
        free = ~p.forced
        summary["max_pair_probability"] = float(a.marginals[free].max()) if free.any() else 0.0
    return summary


def _number(value: float | None, spec: str) -> str:
    """A figure, or `n/a` where there was nothing to compute it from (the lines around say why)."""
    return "n/a" if value is None else format(value, spec)


def format_summary(summary: dict) -> list[str]:
    """Lines for a terminal."""
    s = summary
    q = s["paper_total_quantiles"]
    without = s.get("papers_without_total", 0)
    line = f"total affinity {s['total_affinity']:,.4f}"
    if s["mean_paper_total"] is not None:
        line += (f"; per paper mean {s['mean_paper_total']:.4f}, worst {s['worst_paper_total']:.4f}"
                 + (f" ({s['worst_paper']})" if s["worst_paper"] is not None else "")
                 + (f" (over {s['papers_totalled']:,} papers)" if without else ""))
    else:
        line += "; no per-paper total" + (" (see below)" if without else "")
    lines = [f"method {s['method']} ({s['status']}) in {s['solve_seconds']:.2f} s", line]
    if s["mean_paper_total"] is not None:
        lines.append("per-paper totals: " + "  ".join(f"{name} {value:.4f}" for name, value in q.items()))
    if s["mean_pair_affinity"] is not None:
        lines.append(f"mean affinity per assigned pair {s['mean_pair_affinity']:.4f}"
                     + (" (scored pairs)" if s.get("unscored_pairs") else ""))
    lines += [
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
    if without:
        more = ", ..." if without > len(s["papers_without_total_examples"]) else ""
        lines.append(f"{without:,} paper(s) have such a pair, so their total is unknown: they count in no per-paper "
                     f"mean, worst or quantile: {', '.join(s['papers_without_total_examples'])}{more}")
    lines += [f"note: {note}" for note in s["notes"]]
    return lines


def compare_lines(summaries: list[dict]) -> list[str]:
    """A small side-by-side table, one row per method."""
    requirement_names = sorted({name for s in summaries for name in s["requirements"]})
    header = ["method", "status", "total", "mean", "worst", "filled"] + requirement_names + ["seconds"]
    rows = [header]
    for s in summaries:
        rows.append([s["method"], s["status"], f"{s['total_affinity']:,.3f}", _number(s["mean_paper_total"], ".4f"),
                     _number(s["worst_paper_total"], ".4f"), f"{s['slots_filled']:,}/{s['slots_wanted']:,}"]
                    + [f"{s['requirements'][n]['fraction']:.1%}" if n in s["requirements"] else "-"
                       for n in requirement_names]
                    + [f"{s['solve_seconds']:.2f}"])
    return text_table(rows[0], rows[1:], left=2, rule=None).split("\n")
