"""Author disambiguation on the real gold people of ../shared/data/authors (ArnetMiner and DBLP dev halves):
macro-averaged pairwise F1 over names and pooled B3 F1, as S2AND reports them, each with a 95% interval from
resampling names, plus the time and peak RSS of the run.

Two rows per set: one name = one person, what the graph holds while authors are name strings (issue 45 measured
0.475 / 0.543 on ArnetMiner dev and 0.848 / 0.667 on DBLP dev), and the pairwise model with average-linkage
clustering (scholargraph/ranking/authors/pairwise.py), cross-validated over names: each fold's names are scored
by a model and a threshold chosen without them. S2AND's rows (its own venv) are not here yet.

    .venv/bin/python bench/authors.py [--bootstrap 1000] [--folds 5]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scholargraph.ranking.authors.metrics import (  # noqa: E402
    ClusteringScore,
    one_name_one_person,
    read_gold,
    score_clustering,
)
from scholargraph.ranking.authors.pairwise import collect, cross_validate, read_papers  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "authors"
SETS = ("arnetminer-dev", "dblp-dev")


def row(dataset: str, system: str, score: ClusteringScore, occurrences: int, bootstrap: int, seconds: float) -> None:
    intervals = score.intervals(samples=bootstrap)
    (m_lo, m_hi), (b_lo, b_hi) = intervals["macro_pairwise_f1"], intervals["b3_f1"]
    print(f"{dataset:<16} {system:<24} {len(score.names):>5} {occurrences:>11}  "
          f"{score.macro_pairwise_f1:.3f} [{m_lo:.3f}, {m_hi:.3f}]   {score.b3_f1:.3f} [{b_lo:.3f}, {b_hi:.3f}]"
          f"   ({seconds:.1f} s)", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", type=int, default=1000, help="resamples of the names for the intervals")
    parser.add_argument("--data", type=Path, default=DATA, help="the folder of the gold sets")
    parser.add_argument("--folds", type=int, default=5, help="folds of names for the cross-validation")
    args = parser.parse_args(argv)
    print(f"{'set':<16} {'system':<24} {'names':>5} {'occurrences':>11}  {'macro pairwise F1':<22} {'B3 F1':<22}")
    for name in SETS:
        gold_path = args.data / name / "gold.tsv"
        if not gold_path.is_file():
            print(f"{name}: no gold at {gold_path} (see ../shared/data/authors)", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        gold = read_gold(gold_path)
        baseline = score_clustering(gold, one_name_one_person(gold))
        row(name, "one name = one person", baseline, len(gold), args.bootstrap, time.perf_counter() - t0)
        t0 = time.perf_counter()
        papers = read_papers(args.data / name / "papers.aminer.jsonl")
        cv = cross_validate(collect(papers, list(gold)), gold, folds=args.folds)
        row(name, f"pairwise, {args.folds}-fold CV", cv.score, len(gold), args.bootstrap, time.perf_counter() - t0)
        print(f"{'':<16} thresholds chosen per fold: {', '.join(f'{t:.2f}' for t in cv.thresholds)}; "
              f"model / baseline: macro {cv.score.macro_pairwise_f1 / baseline.macro_pairwise_f1:.2f}x, "
              f"B3 {cv.score.b3_f1 / baseline.b3_f1:.2f}x")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
