"""How well name occurrences are grouped into people, against gold people, as S2AND reports it: pairwise F1
per ambiguous name, macro-averaged over names, and B3 F1 pooled over every occurrence; with percentile
intervals from resampling names. Pure: no store, no CLI.

An occurrence is one line of the gold file: (paper, name as the paper gives it, n), where n counts the earlier
lines with the same paper and name (0 for most; DBLP has papers with two authors named `Xin Dong` who are two
people, and they are matched to the paper's authors of that name in order). A clustering maps each occurrence
to a cluster id (a person of the graph, or any label); only occurrences of the same name are ever compared,
since the gold only says who is who within a name."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scholargraph.errors import UsageError

Occurrence = tuple[str, str, int]  # (paper id, name as written, n-th of that name on that paper)
GOLD_HEADER = ("paper", "name", "person")


def read_gold(path: str | Path) -> dict[Occurrence, str]:
    """`paper<TAB>name<TAB>person` lines under that header -> {(paper, name, n): person}. A missing file, another
    header or a line without three non-empty fields is a UsageError naming the file and line (the CLI's one line
    and exit 2)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--gold {path}: cannot read it ({exc.__class__.__name__}: {exc})") from None
    if not lines or tuple(lines[0].rstrip("\r").split("\t")) != GOLD_HEADER:
        raise UsageError(f"--gold {path}:1: expected the header line `paper<TAB>name<TAB>person`")
    gold: dict[Occurrence, str] = {}
    seen: Counter = Counter()  # lines so far with this paper and name
    for number, line in enumerate(lines[1:], start=2):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) != 3 or not all(fields):
            raise UsageError(f"--gold {path}:{number}: expected three non-empty tab-separated fields "
                             f"(paper, name, person), got {line[:80]!r}")
        paper, name, person = fields
        gold[(paper, name, seen[(paper, name)])] = person
        seen[(paper, name)] += 1
    if not gold:
        raise UsageError(f"--gold {path}: no occurrences under the header")
    return gold


@dataclass(frozen=True)
class NameScore:
    """One name's counts: occurrences, gold people, predicted clusters, and its pairwise and B3 terms."""

    name: str
    occurrences: int
    people: int
    clusters: int
    pairwise_f1: float
    b3_precision_sum: float  # sums over the name's occurrences, pooled over names for B3
    b3_recall_sum: float


def _pairs(sizes: Counter) -> int:
    return sum(c * (c - 1) // 2 for c in sizes.values())


def score_name(name: str, gold: Mapping, predicted: Mapping) -> NameScore:
    """One name's occurrences (any keys, the same in both): gold person and predicted cluster of each."""
    keys = list(gold)
    both = Counter((predicted[k], gold[k]) for k in keys)
    by_cluster = Counter(predicted[k] for k in keys)
    by_person = Counter(gold[k] for k in keys)
    together, pred_pairs, gold_pairs = _pairs(both), _pairs(by_cluster), _pairs(by_person)
    # No pair on one side: that side has nothing wrong (all singletons predicted and all singletons true: 1).
    precision = together / pred_pairs if pred_pairs else 1.0
    recall = together / gold_pairs if gold_pairs else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    b3_p = sum(both[(predicted[k], gold[k])] / by_cluster[predicted[k]] for k in keys)
    b3_r = sum(both[(predicted[k], gold[k])] / by_person[gold[k]] for k in keys)
    return NameScore(name, len(keys), len(by_person), len(by_cluster), f1, b3_p, b3_r)


@dataclass(frozen=True)
class ClusteringScore:
    names: list[NameScore]
    missing: list[Occurrence]  # gold occurrences the clustering does not place (counted, never scored)

    @property
    def macro_pairwise_f1(self) -> float:
        return _macro_f1(self.names)

    @property
    def b3_f1(self) -> float:
        return _b3_f1(self.names)

    def intervals(self, samples: int = 1000, seed: int = 0, level: float = 0.95) -> dict[str, tuple[float, float]]:
        """Percentile intervals of both metrics over the names resampled with replacement."""
        rng = np.random.default_rng(seed)
        k = len(self.names)
        picks = rng.integers(0, k, size=(samples, k))
        tails = [(1 - level) / 2, 1 - (1 - level) / 2]
        macro = [_macro_f1([self.names[i] for i in row]) for row in picks]
        b3 = [_b3_f1([self.names[i] for i in row]) for row in picks]
        lo_m, hi_m = np.quantile(macro, tails)
        lo_b, hi_b = np.quantile(b3, tails)
        return {"macro_pairwise_f1": (float(lo_m), float(hi_m)), "b3_f1": (float(lo_b), float(hi_b))}


def _macro_f1(names: list[NameScore]) -> float:
    return float(np.mean([n.pairwise_f1 for n in names])) if names else float("nan")


def _b3_f1(names: list[NameScore]) -> float:
    total = sum(n.occurrences for n in names)
    if not total:
        return float("nan")
    precision = sum(n.b3_precision_sum for n in names) / total
    recall = sum(n.b3_recall_sum for n in names) / total
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def score_clustering(gold: Mapping[Occurrence, str], predicted: Mapping[Occurrence, str]) -> ClusteringScore:
    """Every gold name's occurrences that `predicted` places, scored; the ones it does not are listed in
    `missing` (an occurrence with no person in the graph is reported, not guessed)."""
    by_name: dict[str, dict[Occurrence, str]] = defaultdict(dict)
    missing: list[Occurrence] = []
    for occurrence, person in gold.items():
        if occurrence in predicted:
            by_name[occurrence[1]][occurrence] = person
        else:
            missing.append(occurrence)
    names = [score_name(name, people, {o: predicted[o] for o in people}) for name, people in sorted(by_name.items())]
    return ClusteringScore(names, sorted(missing))


def one_name_one_person(gold: Mapping[Occurrence, str]) -> dict[Occurrence, str]:
    """The clustering of a graph whose authors are name strings: every occurrence of a name is one person."""
    return {occurrence: occurrence[1] for occurrence in gold}
