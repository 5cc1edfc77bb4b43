"""The parameters that determine a synthetic world (the same parameters and seed give byte-identical files)."""

from __future__ import annotations

from dataclasses import dataclass

FORMATS = ("aminer", "openalex")
CORPUS_FILES = {"aminer": "corpus.aminer.jsonl", "openalex": "corpus.openalex.jsonl"}
GENERATOR_VERSION = 1


@dataclass(frozen=True)
class SynthParams:
    """Everything that determines the world: the same parameters and seed give byte-identical files."""

    papers: int
    seed: int = 0
    start_year: int = 1990
    end_year: int = 2023
    fmt: str = "aminer"
    topics: int = 10
    mean_refs: float = 10.0
    as_of: int | None = None  # rising-star as-of year T; None -> end_year - 3
    horizon: int = 3  # rising-star horizon D: increments count citing papers in (T, T+D]
    window: int = 5  # young author: first first-author paper in [T-W+1, T]
    reviewer_queries: int = 50
    citation_queries: int = 100
    # reviewer candidates per submission: deep experts writing its modern vocabulary, and planted
    # cross-domain experts of each kind (traditional vocabulary; neighbouring field's vocabulary)
    reviewer_experts: int = 6
    reviewer_cross_experts: int = 2
    # model knobs; the defaults are documented in docs/synthetic.md
    growth: float = 0.06  # papers per year grow by this rate (science grows ~4-6%/yr)
    p_cross: float = 0.15  # share of papers mixing two topics
    p_external: float = 0.06  # share of references to works outside the corpus (stubs)
    p_self: float = 0.08  # share of references drawn from the team's own earlier papers
    entrants_per_paper: float = 0.7  # new authors entering per paper published that year
    core_terms: int = 150  # non-drifting terms per topic
    concepts: int = 40  # concepts per topic, each with traditional, modern and neighbour-field names

    @property
    def as_of_year(self) -> int:
        return self.end_year - 3 if self.as_of is None else self.as_of

    def validate(self) -> None:
        """Raise ValueError naming the first bad parameter."""
        if self.fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {self.fmt!r}")
        if not 200 <= self.papers <= 100_000_000:
            raise ValueError(f"papers must be between 200 and 100,000,000, not {self.papers}")
        if self.seed < 0:
            raise ValueError("seed must be >= 0")
        if not 1800 <= self.start_year <= 2100 or not 1800 <= self.end_year <= 2100:
            raise ValueError("years must lie between 1800 and 2100")
        if self.end_year - self.start_year < 10:
            raise ValueError("end year must be at least 10 years after start year")
        if not 2 <= self.topics <= 50:
            raise ValueError(f"topics must be between 2 and 50, not {self.topics}")
        if not 1.0 <= self.mean_refs <= 100.0:
            raise ValueError(f"mean references must be between 1 and 100, not {self.mean_refs}")
        if not 1 <= self.horizon <= 20 or not 1 <= self.window <= 20:
            raise ValueError("horizon and window must be between 1 and 20 years")
        t = self.as_of_year
        if t + self.horizon > self.end_year:
            raise ValueError(f"as-of year {t} + horizon {self.horizon} goes past end year {self.end_year}")
        if t - self.window < self.start_year:
            raise ValueError(f"as-of year {t} - window {self.window} is before start year {self.start_year}")
        if not 0 <= self.reviewer_experts <= 20 or not 0 <= self.reviewer_cross_experts <= 20:
            raise ValueError("reviewer experts and cross-domain experts per submission must be between 0 and 20")
        if not 0 <= self.reviewer_queries <= 10_000 or not 0 <= self.citation_queries <= 100_000:
            raise ValueError("query counts must be between 0 and 10,000 (reviewers) / 100,000 (citations)")
        for name in ("p_cross", "p_external", "p_self"):
            if not 0.0 <= getattr(self, name) <= 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5")
        if not 0.0 < self.growth <= 0.3 or not 0.1 <= self.entrants_per_paper <= 2.0:
            raise ValueError("growth must be in (0, 0.3] and entrants per paper in [0.1, 2]")
        if not 20 <= self.core_terms <= 2000 or not 5 <= self.concepts <= 500:
            raise ValueError("core terms must be in [20, 2000] and concepts in [5, 500]")
