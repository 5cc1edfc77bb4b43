"""Synthetic scholarly world with planted ground truth, streamed year by year as AMiner or OpenAlex JSON."""

from __future__ import annotations

import array
import json
import math
import mmap
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from scholargraph.graph.records import source_id

FORMATS = ("aminer", "openalex")
CORPUS_FILES = {"aminer": "corpus.aminer.jsonl", "openalex": "corpus.openalex.jsonl"}
OPENALEX_PREFIX = "https://openalex.org/"
GENERATOR_VERSION = 1

# --- ids -------------------------------------------------------------------------------------------

# kind -> (AMiner prefix, AMiner digits, OpenAlex prefix). OpenAlex ids are a letter and digits only, so the
# leading digit after the letter keeps corpus works, outside works and held-out queries apart.
_ID_SHAPES = {
    "paper": ("synth-p", 7, "W1"),
    "stub": ("synth-x", 7, "W2"),
    "reviewer_query": ("synth-r", 5, "W3"),
    "citation_query": ("synth-c", 5, "W4"),
    "author": ("synth-a", 6, "A1"),
    "venue": ("synth-v", 3, "S1"),
    "org": ("synth-i", 4, "I1"),
}


def id_template(kind: str, fmt: str, record: bool = False) -> str:
    """str.format template of an id taking the 1-based number: 'synth-p{:07d}', 'https://openalex.org/W1{:09d}'.

    `record=True` gives the form written inside corpus records (OpenAlex writes full URLs).
    """
    prefix, width, oa_prefix = _ID_SHAPES[kind]
    if fmt == "aminer":
        return prefix + "{:0" + str(width) + "d}"
    return (OPENALEX_PREFIX if record else "") + oa_prefix + "{:09d}"


def local_id(kind: str, index: int, fmt: str) -> str:
    """The source's own id for the `index`-th (0-based) object: 'synth-p0000001' or 'W1000000001'."""
    return id_template(kind, fmt).format(index + 1)


def record_id(kind: str, index: int, fmt: str) -> str:
    """The id as written inside a corpus record."""
    return id_template(kind, fmt, record=True).format(index + 1)


def graph_id(kind: str, index: int, fmt: str) -> str:
    """The node id ingestion gives this object ('aminer:synth-p0000001', 'openalex:W1000000001').

    Every ground-truth file writes ids through this function (or its template below), so the truth always
    matches the graph built from the corpus. No synthetic paper has a DOI, so its graph id is never a DOI.
    """
    return source_id(fmt, local_id(kind, index, fmt))


def graph_id_template(kind: str, fmt: str) -> str:
    """graph_id as a str.format template of the 1-based number, for hot loops."""
    return source_id(fmt, id_template(kind, fmt))


# --- parameters ------------------------------------------------------------------------------------


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


# --- vocabulary and names --------------------------------------------------------------------------

_STOP = ("the of and a in to is for that with on by as we this are an from be which these our its at it can "
         "their or both than into such each also not under two over between how when where while all").split()
_GENERAL = list(dict.fromkeys((
    "method methods results analysis approach model models data study performance framework evaluation "
    "experiments propose present show novel new based using problem problems paper work effect effects "
    "significant improve improved efficient structure process large small high low set different several "
    "various existing previous recent general specific important case cases order terms time number function "
    "properties system systems technique techniques application applications theory practical empirical "
    "simulation measure measures estimate observed demonstrate compare compared provide investigate describe "
    "derive obtain obtained consider result evidence range level levels rate quality standard common complex "
    "simple robust accurate").split()))
_FIELDS = ("Dynamics", "Theory", "Systems", "Analysis", "Networks", "Mechanics", "Inference", "Design",
           "Chemistry", "Informatics", "Engineering", "Modelling", "Computing", "Physics", "Biology",
           "Statistics", "Studies", "Methods", "Sciences", "Optimization")
_ONSETS = ("b c d f g h k l m n p r s t v z b d l m n r s t br cr dr fr gr pr tr bl cl fl gl pl sl st sp "
           "sc th ch sh").split()
_VOWELS = "a e i o u a e i o a e o ai ou ei ia".split()
_CODAS = "- - - - - - n r l s m t x".split()
_TERM_SUFFIXES = "- - - ic ics ation ity al ism ance ose ase on ine ide ure ent ar or ous ion".split()
_NAME_SUFFIXES = "- - - son ova elli ez sen ura ian berg ski ani er ov in".split()
_SAFE = re.compile(r"^[A-Za-z][A-Za-z .-]*$")  # what lets records be written as JSON by string building


def _dash(s: str) -> str:
    return "" if s == "-" else s


def _pseudo_words(rng: np.random.Generator, n: int, taken: set[str], syllables: tuple[int, int],
                  suffixes: tuple[str, ...] | list[str], min_len: int = 4, max_len: int = 13) -> list[str]:
    """`n` distinct pronounceable pseudo-words (consonant-vowel syllables plus a suffix), none in `taken`."""
    out: list[str] = []
    codas = [c for c in _CODAS if c != "-"]
    while len(out) < n:
        k = int(rng.integers(syllables[0], syllables[1] + 1))
        word = "".join(_ONSETS[int(rng.integers(len(_ONSETS)))] + _VOWELS[int(rng.integers(len(_VOWELS)))]
                       for _ in range(k))
        suffix = _dash(suffixes[int(rng.integers(len(suffixes)))])
        if suffix[:1] in "aeiouy" and suffix:
            word += codas[int(rng.integers(len(codas)))]  # no vowel pile-up before a vowel suffix
        else:
            word += _dash(_CODAS[int(rng.integers(len(_CODAS)))])
        word += suffix
        if min_len <= len(word) <= max_len and word not in taken:
            taken.add(word)
            out.append(word)
    return out


@dataclass
class _Vocab:
    """All words of the world and the string tables texts are assembled from."""

    stop: list[str]
    general: list[str]
    core: list[list[str]]  # per topic
    concepts: list[list[tuple[str, str, str]]]  # per topic: (traditional, modern, neighbour-field) names
    topic_names: list[str]
    words: list[str]  # global word table: stop, general, then per topic core + 3 forms per concept
    topic_base: np.ndarray  # global id of each topic's first word

    @property
    def per_topic(self) -> int:
        return len(self.core[0]) + 3 * len(self.concepts[0])


def _build_vocab(rng: np.random.Generator, topics: int, core_terms: int, concepts: int) -> _Vocab:
    taken = set(_STOP) | set(_GENERAL)
    core, conc, names = [], [], []
    for t in range(topics):
        words = _pseudo_words(rng, core_terms + 3 * concepts, taken, (2, 3), _TERM_SUFFIXES, 5, 11)
        core.append(words[:core_terms])
        rest = words[core_terms:]
        conc.append([(rest[3 * c], rest[3 * c + 1], rest[3 * c + 2]) for c in range(concepts)])
        names.append(f"{core[-1][0].capitalize()} {_FIELDS[t % len(_FIELDS)]}")
    words = list(_STOP) + list(_GENERAL)
    base = []
    for t in range(topics):
        base.append(len(words))
        words.extend(core[t])
        for triple in conc[t]:
            words.extend(triple)
    return _Vocab(list(_STOP), list(_GENERAL), core, conc, names, words, np.array(base, dtype=np.int64))


@dataclass
class _Names:
    given: list[str]
    surnames: list[str]
    orgs: list[str]


def _build_names(rng: np.random.Generator, n_orgs: int, taken: set[str]) -> _Names:
    given = [w.capitalize() for w in _pseudo_words(rng, 400, taken, (2, 2), ("-",), 3, 8)]
    surnames = [w.capitalize() for w in _pseudo_words(rng, 6000, taken, (1, 3), _NAME_SUFFIXES, 4, 12)]
    place_suffixes = ("-", "-", "ia", "ton", "burg")
    places = [w.capitalize() for w in _pseudo_words(rng, n_orgs, taken, (2, 3), place_suffixes)]
    shapes = ("University of {}", "{} Institute of Technology", "{} State University", "{} Research Centre",
              "University of {}", "{} University")
    orgs = [shapes[int(rng.integers(len(shapes)))].format(p) for p in places]
    return _Names(given, surnames, orgs)


# --- growable columns ------------------------------------------------------------------------------


class _Cols:
    """Named numpy columns that grow together by doubling: compact per-object state without Python objects."""

    def __init__(self, cap: int, spec: dict[str, tuple]):
        self.n = 0
        self._spec = spec
        for name, (dtype, width, fill) in spec.items():
            shape = (cap,) if width is None else (cap, width)
            setattr(self, name, np.full(shape, fill, dtype=dtype))

    def add(self, m: int) -> slice:
        need = self.n + m
        cap = len(getattr(self, next(iter(self._spec))))
        if need > cap:
            new_cap = max(need, 2 * cap)
            for name, (dtype, width, fill) in self._spec.items():
                old = getattr(self, name)
                shape = (new_cap,) if width is None else (new_cap, width)
                grown = np.full(shape, fill, dtype=dtype)
                grown[: self.n] = old[: self.n]
                setattr(self, name, grown)
        sl = slice(self.n, need)
        self.n = need
        return sl


class _Growing:
    """One growable numpy vector (amortised doubling)."""

    def __init__(self, dtype, cap: int = 1024):
        self.a = np.empty(cap, dtype=dtype)
        self.n = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.n + len(values)
        if need > len(self.a):
            grown = np.empty(max(need, 2 * len(self.a)), dtype=self.a.dtype)
            grown[: self.n] = self.a[: self.n]
            self.a = grown
        self.a[self.n:need] = values
        self.n = need

    @property
    def view(self) -> np.ndarray:
        return self.a[: self.n]


def _sample(rng: np.random.Generator, weights: np.ndarray, size: int) -> np.ndarray:
    """Indices drawn with replacement proportionally to `weights` (cumulative sum + binary search)."""
    cdf = np.cumsum(weights, dtype=np.float64)
    return np.searchsorted(cdf, rng.random(size) * cdf[-1], side="right").clip(0, len(cdf) - 1)


_TABLE = 1 << 16


def _lookup_table(weights: np.ndarray) -> np.ndarray:
    """Quantised inverse CDF: a uniform integer in [0, 2**16) indexes it, far faster than a binary search per
    word, at a probability resolution of 2**-16."""
    cdf = np.cumsum(weights / weights.sum())
    return np.searchsorted(cdf, (np.arange(_TABLE) + 0.5) / _TABLE).clip(0, len(cdf) - 1).astype(np.int32)


RING = 8  # recent co-authors / recent papers remembered per author


# --- the world -------------------------------------------------------------------------------------


class _World:
    """Generates the corpus year by year and keeps only compact numpy state about papers and authors."""

    TITLE_WORDS = (6, 12)
    ABSTRACT_WORDS = (60, 150)
    # Citation attachment: weight = (citations + A0) ** EXP x fitness ** FIT_EXP x ageing (with a floor that
    # lets classics keep being cited). Sublinear EXP and FIT_EXP < 1 keep the top 1% near a fifth of all
    # citations, as in real corpora; EARLY_TAU makes the first years cite mostly pre-corpus literature.
    ATTACH_A0 = 3.0
    ATTACH_EXP = 0.8
    FIT_EXP = 0.5
    AGING_FLOOR = 0.02
    EARLY_TAU = 0.09  # x (years spanned - 1): 3 years for the default 34-year span
    CHUNK = 4096  # papers whose text is assembled at once: bounds the token arrays' memory
    BLOCK = 65536  # rows per write when the ground-truth files are written
    PATCH_BLOCK = 16384  # records per mapped window when citation counts are patched in

    def __init__(self, p: SynthParams, out: Path, on_progress: Callable[[int], None] | None):
        self.p = p
        self.out = out
        self.fmt = p.fmt
        self.on_progress = on_progress or (lambda n: None)
        seq = np.random.SeedSequence([p.seed, GENERATOR_VERSION])
        # Independent streams: changing how text is drawn never changes who cites whom.
        r_vocab, self.rs, self.rc, self.rt, self.rq = (np.random.default_rng(s) for s in seq.spawn(5))
        self.R = p.topics
        self.years = np.arange(p.start_year, p.end_year + 1)
        self.span = len(self.years)
        self.vocab = _build_vocab(r_vocab, p.topics, p.core_terms, p.concepts)
        n_orgs = int(max(30, min(5000, p.papers // 400)))
        self.names = _build_names(r_vocab, n_orgs, set(self.vocab.words))
        for w in self.vocab.words + self.names.given + self.names.surnames + self.names.orgs:
            assert _SAFE.match(w), w
        self._setup_world(r_vocab)
        self._setup_state()

    # --- fixed structure: topics, concepts, venues, growth ---------------------------------------------

    def _setup_world(self, rng: np.random.Generator) -> None:
        p, R = self.p, self.R
        weights = np.exp(p.growth * (self.years - p.start_year))
        exact = p.papers * weights / weights.sum()
        per_year = np.floor(exact).astype(np.int64)
        # Largest remainders get the leftover papers so that the total is exactly `papers`.
        left = p.papers - per_year.sum()
        per_year[np.argsort(-(exact - per_year), kind="stable")[:left]] += 1
        self.per_year = per_year
        # Held-out citation queries come from the last three years, in proportion to their output.
        last = per_year[-3:].astype(float)
        cq = np.floor(p.citation_queries * last / last.sum()).astype(np.int64)
        cq[-1] += p.citation_queries - cq.sum()
        self.cq_per_year = np.zeros(self.span, dtype=np.int64)
        self.cq_per_year[-3:] = cq
        # Topics differ in size and in growth: some fields are hot late, some fade.
        self.topic_a = rng.normal(0.0, 0.35, R)
        self.topic_b = rng.normal(0.0, 0.03, R)
        # Concept drift: the modern name of a concept takes over around its midpoint year.
        C = p.concepts
        lo, hi = p.start_year + 0.3 * (self.span - 1), p.start_year + 0.85 * (self.span - 1)
        self.concept_mid = rng.uniform(lo, hi, R * C)
        self.concept_slope = rng.uniform(1.5, 3.5, R * C)
        self.vmin = p.start_year - 40
        vs = np.arange(self.vmin, p.end_year + 3)
        self.pmod = 1.0 / (1.0 + np.exp(-(vs[None, :] - self.concept_mid[:, None])
                                        / self.concept_slope[:, None]))
        self.pmod_topic = self.pmod.reshape(R, C, -1).mean(axis=1)  # modern share per topic and vocab year
        # Venues: four prestige tiers per topic plus a broad flagship and a broad mega-journal.
        tiers = np.array([2.5, 1.5, 1.0, 0.6])
        prestige = (tiers[None, :] * rng.uniform(0.85, 1.15, (R, 4))).ravel()
        self.venue_prestige = np.concatenate([prestige, [3.0, 0.5]])
        names = []
        for t in range(R):
            tn = self.vocab.topic_names[t]
            names += [f"Journal of {tn}", f"International Conference on {tn}", f"{tn} Letters",
                      f"Workshop on {tn}"]
        names += ["Synthetic Science", "Open Synthetic Letters"]
        self.venue_names = names
        self.venue_topic = [t for t in range(R) for _ in range(4)] + [-1, -1]
        # Citation ageing: attention peaks ~3 years after publication and decays slowly (log-normal shape).
        ages = np.arange(self.span + 3, dtype=float)
        ages[0] = 1.0
        self.aging = np.exp(-((np.log(ages) - math.log(3.0)) ** 2) / (2 * 0.9 ** 2)) + self.AGING_FLOOR
        # Outside works: a Zipf-like pool so that popular classics are cited by many corpus papers.
        self.n_external = int(max(500, p.papers // 8))
        # Topic-word slots: concept names carry most of a topic's text, so that vocabulary drift shows.
        cw = (np.arange(C) + 1.0) ** -0.7
        kw = (np.arange(p.core_terms) + 1.0) ** -0.8
        slot_p = np.concatenate([0.65 * cw / cw.sum(), 0.35 * kw / kw.sum()])
        sw = (np.arange(len(self.vocab.stop)) + 1.0) ** -0.8
        gw = (np.arange(len(self.vocab.general)) + 1.0) ** -0.5
        self.slot_table = _lookup_table(slot_p)
        self.stop_table = _lookup_table(sw)
        self.gen_table = _lookup_table(gw)
        words = self.vocab.words
        v = len(words)
        # String table: plain, sentence-final, capitalised, capitalised and final.
        table = [w + " " for w in words] + [w + ". " for w in words] + [w.capitalize() + " " for w in words] \
            + [w.capitalize() + ". " for w in words]
        self.tok_str = np.array(table, dtype=object)
        self.V = v
        # Bound str.format of each id template: the hot loop formats millions of ids.
        self._tpl = {k: id_template(k, self.fmt, record=True).format for k in _ID_SHAPES}

    def _setup_state(self) -> None:
        R, N = self.R, self.p.papers
        # Papers: exact size known up front.
        self.pap_year = np.zeros(N, np.int16)
        self.pap_P = np.zeros(N, np.int8)
        self.pap_S = np.full(N, -1, np.int8)
        self.pap_fit = np.zeros(N, np.float32)
        self.pap_wS = np.zeros(N, np.float16)
        # Share of modern concept names among its primary-topic words; -1: the neighbouring field's names.
        self.pap_modern = np.zeros(N, np.float16)
        self.pap_venue = np.zeros(N, np.int16)
        self.cites = np.zeros(N, np.int32)
        self.nc_offset = np.zeros(N, np.int64)  # byte offset of each record's citation-count placeholder
        self.n_pap = 0
        self.auth_flat = _Growing(np.int32, 4 * N + 16)  # authorships: author index ...
        self.auth_paper = _Growing(np.int32, 4 * N + 16)  # ... and paper index
        # Per-topic citable pools (primary members and secondary members at half weight).
        self.pool = [_Growing(np.int32) for _ in range(R)]
        self.pool_sec = [_Growing(np.uint8) for _ in range(R)]
        cap = int(N * 0.8) + 1000
        self.A = _Cols(cap, {
            "start": (np.int16, None, 0), "end": (np.int16, None, 0), "home": (np.int8, None, 0),
            "sec": (np.int8, None, 0), "talent": (np.float32, None, 1.0), "prod": (np.float32, None, 1.0),
            "breadth": (np.float32, None, 0.1), "advisor": (np.int32, None, -1),
            "last_student": (np.int32, None, -1), "org": (np.int32, None, 0),
            "given": (np.int16, None, 0), "initial": (np.int8, None, 0), "surname": (np.int16, None, 0),
            "first_lead": (np.int16, None, 0), "last_year": (np.int16, None, 0),
            "n_papers": (np.int32, None, 0),
        })
        # Hot per-author state touched one element at a time in the team loop: array.array gives fast
        # scalar access from Python while staying 4 bytes an entry.
        self.end_y = array.array("h")
        self.ring_c = array.array("i")
        self.ptr_c = array.array("B")
        self.ring_p = array.array("i")
        self.ptr_p = array.array("B")
        self.snap_T: np.ndarray | None = None
        self.snap_TD: np.ndarray | None = None
        self.cite_queries: list[dict] = []
        self.stats = {"refs_in": 0, "refs_out": 0, "self_refs": 0, "cross": 0}
        self.stubs_seen = np.zeros(self.n_external, dtype=bool)
        self.topic_draw_pool: list[list[int]] = [[] for _ in range(R)]

    # --- authors ---------------------------------------------------------------------------------------

    def _topic_share(self, y: int) -> np.ndarray:
        s = np.exp(self.topic_a + self.topic_b * (y - self.p.start_year))
        return s / s.sum()

    def _new_authors(self, m: int, y: int, founders: bool) -> None:
        if m <= 0:
            return
        rs, A, R = self.rs, self.A, self.R
        sl = A.add(m)
        idx = np.arange(sl.start, sl.stop)
        home = _sample(rs, self._topic_share(y), m).astype(np.int8)
        start = np.full(m, y, np.int16)
        advisor = np.full(m, -1, np.int32)
        talent_log = rs.normal(0.0, 0.55, m)
        if founders:
            # The field's senior researchers at the first year: they started before the corpus begins.
            start = (y - rs.integers(1, 26, m)).astype(np.int16)
            end = start + rs.integers(20, 46, m)
            end = np.maximum(end, y + 2)
        else:
            # Students get an advisor from their topic: an active researcher of at least five years.
            na = sl.start
            a_start, a_end = A.start[:na], A.end[:na]
            eligible = (a_start <= y - 5) & (a_end >= y)
            want = rs.random(m) < 0.75
            for t in range(R):
                rows = np.flatnonzero(want & (home == t))
                cand = np.flatnonzero(eligible & (A.home[:na] == t))
                if len(rows) == 0 or len(cand) == 0:
                    continue
                w = A.talent[cand] * A.prod[cand]
                advisor[rows] = cand[_sample(rs, w, len(rows))]
            has = advisor >= 0
            talent_log[has] = 0.8 * talent_log[has] + 0.2 * np.log(A.talent[advisor[has]])
            # Almost half of the students leave after their PhD; the others (and outside hires) stay on.
            leave = rs.random(m) < 0.45
            end = np.where(has & leave, y + rs.integers(3, 7, m), y + rs.integers(8, 41, m))
        talent = np.exp(talent_log).astype(np.float32)
        A.start[sl] = start
        A.end[sl] = end.astype(np.int16)
        A.home[sl] = home
        # The second topic is usually a neighbouring field (topics sit on a ring).
        side = np.where(rs.random(m) < 0.5, 1, -1)
        sec = np.where(rs.random(m) < 0.75, (home + side) % R, (home + rs.integers(1, R, m)) % R)
        A.sec[sl] = sec.astype(np.int8)
        A.talent[sl] = talent
        A.prod[sl] = (talent ** 0.8 * np.exp(rs.normal(0.0, 0.35, m))).astype(np.float32)
        A.breadth[sl] = np.where(rs.random(m) < 0.25, 0.45, 0.12).astype(np.float32)
        A.advisor[sl] = advisor
        orgs = len(self.names.orgs)
        org = _sample(rs, (np.arange(orgs) + 1.0) ** -0.7, m)
        has = advisor >= 0
        stay = has & (rs.random(m) < 0.8)
        org[stay] = A.org[advisor[stay]]
        A.org[sl] = org
        if has.any():
            A.last_student[advisor[has]] = idx[has]
        A.given[sl] = rs.integers(0, len(self.names.given), m)
        A.initial[sl] = rs.integers(0, 26, m)
        A.surname[sl] = rs.integers(0, len(self.names.surnames), m)
        self.end_y.extend(A.end[sl].tolist())
        self.ring_c.extend([-1] * (RING * m))
        self.ring_p.extend([-1] * (RING * m))
        self.ptr_c.extend(bytes(m))
        self.ptr_p.extend(bytes(m))

    def _names_for(self, authors: np.ndarray) -> list[str]:
        A, nm = self.A, self.names
        g = A.given[authors].tolist()
        i = A.initial[authors].tolist()
        s = A.surname[authors].tolist()
        given, sur = nm.given, nm.surnames
        return [f"{given[a]} {chr(65 + b)}. {sur[c]}" for a, b, c in zip(g, i, s, strict=True)]

    # --- per-year citation pools -----------------------------------------------------------------------

    def _pool_cdfs(self, y: int) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """Per topic: (paper indices, cumulative attachment weight) as of the start of year `y`.

        Attachment = (citations so far + A0) ** EXP x fitness (quality and venue) x ageing x membership (half
        for papers whose secondary topic it is): preferential attachment with fitness and ageing gives
        heavy-tailed, time-limited citation counts.
        """
        out = []
        for t in range(self.R):
            idx = self.pool[t].view
            if len(idx) == 0:
                out.append(None)
                continue
            w = (self.cites[idx] + self.ATTACH_A0) ** self.ATTACH_EXP * self.pap_fit[idx]
            w *= self.aging[y - self.pap_year[idx]]
            w = w * np.where(self.pool_sec[t].view == 1, 0.5, 1.0)
            out.append((idx, np.cumsum(w, dtype=np.float64)))
        return out

    def _draw_topic_author(self, t: int, y: int, rng: np.random.Generator) -> int:
        pool = self.topic_draw_pool[t]
        if not pool:
            A = self.A
            na = A.n
            cand = np.flatnonzero((A.home[:na] == t) & (A.start[:na] <= y) & (A.end[:na] >= y))
            if len(cand) == 0:
                return -1
            pool.extend(cand[_sample(rng, A.prod[cand], 256)][::-1].tolist())
        return pool.pop()

    # --- one batch of papers (a year's corpus papers plus any held-out ones) ---------------------------

    def _batch(self, y: int, leads: np.ndarray, P: np.ndarray, S: np.ndarray, wS: np.ndarray,
               held: np.ndarray, min_refs: np.ndarray, pools: list, rs: np.random.Generator,
               rc: np.random.Generator):
        """Teams, quality, venue and references for papers led by `leads` in year `y`.

        Returns (team_flat, team_off, venue, fit, refs) where refs[i] is a list of ints: >= 0 a corpus paper,
        < 0 the outside work -(v+1). Held-out papers never cite outside works and leave no trace in the
        co-author memories.
        """
        A, R = self.A, self.R
        n = len(leads)
        frac = (y - self.p.start_year) / max(1, self.span - 1)
        mu_team = 1.6 + 1.6 * min(1.0, max(0.0, frac))  # teams grow over the decades
        sizes = (1 + np.minimum(rs.poisson(mu_team, n), 11)).tolist()
        lead_age = y - A.start[leads]
        adv = A.advisor[leads]
        adv_ok = (adv >= 0) & (lead_age <= 6) & (rs.random(n) < 0.9)
        adv_ok &= A.end[np.maximum(adv, 0)] >= y
        adv_l = np.where(adv_ok, adv, -1).tolist()
        lab_l = np.where(adv >= 0, adv, leads).tolist()
        st = A.last_student[leads]
        st0 = np.maximum(st, 0)
        st_ok = (st >= 0) & (A.start[st0] >= y - 6) & (A.start[st0] <= y) & (A.end[st0] >= y)
        st_ok &= rs.random(n) < 0.35
        stud_l = np.where(st_ok, st, -1).tolist()
        leads_l = leads.tolist()
        P_l, S_l = P.tolist(), S.tolist()
        upd_l = (~held).tolist()
        U = rs.random(n * 8 + 64).tolist()
        up = 0
        ring_c, ptr_c, end_y = self.ring_c, self.ptr_c, self.end_y
        team_flat: list[int] = []
        team_off = [0]
        for i in range(n):
            lead = leads_l[i]
            team = [lead]
            size = sizes[i]
            adv_i = adv_l[i]
            if adv_i >= 0:
                size -= 1  # the advisor goes last, as in most author lists
            if stud_l[i] >= 0 and len(team) < size:
                team.append(stud_l[i])
            tries = 0
            while len(team) < size and tries < 2 * size + 2:
                tries += 1
                if up + 2 > len(U):
                    U = rs.random(n * 8 + 64).tolist()
                    up = 0
                u, v = U[up], U[up + 1]
                up += 2
                if u < 0.45:  # a repeat collaborator of the lead
                    c = ring_c[lead * RING + int(v * RING)]
                elif u < 0.6:  # a lab mate: someone the lead's advisor (or the lead) worked with
                    c = ring_c[lab_l[i] * RING + int(v * RING)]
                else:  # someone new from the paper's topics
                    t = S_l[i] if S_l[i] >= 0 and v < 0.5 else P_l[i]
                    c = self._draw_topic_author(t, y, rs)
                if c < 0 or c in team or end_y[c] < y:
                    continue
                team.append(c)
            if adv_i >= 0 and adv_i not in team:
                team.append(adv_i)
            if upd_l[i] and len(team) > 1:
                for a in team:
                    base = a * RING
                    for b in team:
                        if b != a:
                            k = ptr_c[a]
                            ring_c[base + k] = b
                            ptr_c[a] = (k + 1) & (RING - 1)
            team_flat.extend(team)
            team_off.append(len(team_flat))
        tf = np.array(team_flat, dtype=np.int32)
        to = np.array(team_off, dtype=np.int64)
        tsize = np.diff(to)
        # Quality: the lead's and the team's talent plus luck; it picks the venue tier and drives citations.
        mean_t = np.add.reduceat(np.log(A.talent[tf]), to[:-1]) / tsize
        logq = 0.6 * np.log(A.talent[leads]) + 0.4 * mean_t + rs.normal(0.0, 0.6, n)
        z = logq + rs.normal(0.0, 0.35, n)
        rank = np.empty(n)
        rank[np.argsort(z, kind="stable")] = (np.arange(n) + 0.5) / n
        tier = np.select([rank >= 0.88, rank >= 0.65, rank >= 0.3], [0, 1, 2], 3)
        venue = 4 * P.astype(np.int64) + tier
        u = rs.random(n)
        venue = np.where((rank >= 0.985) & (u < 0.5), 4 * R, venue)
        venue = np.where((tier == 3) & (u < 0.08), 4 * R + 1, venue)
        fit = (np.exp(self.FIT_EXP * logq) * np.sqrt(self.venue_prestige[venue])).astype(np.float32)
        refs = self._references(y, P, S, wS, held, min_refs, pools, tf, to, rc)
        return tf, to, venue, fit, refs

    def _references(self, y, P, S, wS, held, min_refs, pools, tf, to, rc) -> list[list[int]]:
        """Reference lists: topic-matched preferential attachment, outside works, and self-citations."""
        R, p = self.R, self.p
        n = len(P)
        r_disp = 4.0
        k = rc.negative_binomial(r_disp, r_disp / (r_disp + p.mean_refs), n)
        k = np.minimum(np.maximum(k, min_refs), 300)
        m = k + np.ceil(0.3 * k).astype(np.int64) + 1  # oversample: duplicates are dropped below
        tot = int(m.sum())
        pidx = np.repeat(np.arange(n), m)
        tt = np.where(rc.random(tot) < wS[pidx], S[pidx], P[pidx]).astype(np.int64)
        noise = rc.random(tot) < 0.04  # a few references to any field
        tt[noise] = rc.integers(0, R, int(noise.sum()))
        tg = np.full(tot, -1, dtype=np.int64)
        order = np.argsort(tt, kind="stable")
        counts = np.bincount(tt, minlength=R)
        bounds = np.concatenate([[0], np.cumsum(counts)])
        for t in range(R):
            if counts[t] == 0 or pools[t] is None:
                continue
            idx, cdf = pools[t]
            sel = order[bounds[t]:bounds[t + 1]]
            pick = np.searchsorted(cdf, rc.random(len(sel)) * cdf[-1], side="right").clip(0, len(cdf) - 1)
            tg[sel] = idx[pick]
        held_r = held[pidx]
        # The field is older than the corpus: early papers mostly cite pre-corpus (outside) literature.
        tau = max(0.5, self.EARLY_TAU * (self.span - 1))
        p_ext = p.p_external + (1.0 - p.p_external) * math.exp(-(y - p.start_year) / tau)
        ext = ((rc.random(tot) < p_ext) | (tg < 0)) & ~held_r
        ext_id = np.floor(self.n_external * rc.random(tot) ** 3).astype(np.int64)
        tg = np.where(ext, -(ext_id + 1), tg)
        tg = np.where(held_r & (tg < 0), -(1 << 40), tg)  # marks nothing to cite; dropped below
        self_slots = np.flatnonzero(rc.random(tot) < p.p_self).tolist()
        su = rc.random((len(self_slots), 2)).tolist()
        tg_l = tg.tolist()
        tf_l, to_l, held_l = tf.tolist(), to.tolist(), held.tolist()
        ring_p = self.ring_p
        for j, s in enumerate(self_slots):
            i = int(pidx[s])
            a0, a1 = to_l[i], to_l[i + 1]
            member = tf_l[a0 + int(su[j][0] * (a1 - a0))]
            c = ring_p[member * RING + int(su[j][1] * RING)]
            if c >= 0:
                tg_l[s] = c
                self.stats["self_refs"] += not held_l[i]
        m_l = m.tolist()
        k_l = k.tolist()
        out = []
        o = 0
        for i in range(n):
            seg = tg_l[o:o + m_l[i]]
            o += m_l[i]
            uniq = list(dict.fromkeys(seg))
            if held_l[i]:
                uniq = [v for v in uniq if v >= 0]
            out.append(uniq[: k_l[i]])
        return out

    # --- text ------------------------------------------------------------------------------------------

    def _texts(self, P, S, wS, vocab_year, writer_home) -> tuple[list[str], list[str]]:
        """Titles and abstracts: sentences of stop words, general science words and topic words.

        Each concept word is written in its traditional or modern form depending on the writer's vocabulary
        year (the modern form's probability rises over time), or in the neighbouring field's form when the
        writer's home field is not the topic the word belongs to.
        """
        rt, C = self.rt, self.p.concepts
        n = len(P)
        lt = rt.integers(self.TITLE_WORDS[0], self.TITLE_WORDS[1] + 1, n)
        la = rt.integers(self.ABSTRACT_WORDS[0], self.ABSTRACT_WORDS[1] + 1, n)
        sent = rt.integers(9, 19, n)
        L = lt + la
        tot = int(L.sum())
        doc = np.repeat(np.arange(n), L)
        starts = np.concatenate([[0], np.cumsum(L)[:-1]])
        pos = np.arange(tot) - starts[doc]
        in_title = pos < lt[doc]
        apos = pos - lt[doc]
        last = pos == L[doc] - 1
        end = ~in_title & (last | ((apos + 1) % sent[doc] == 0) & (apos + 3 < la[doc]))
        u = rt.random(tot)
        is_topic = np.where(in_title, u < 0.65, u < 0.48)
        is_gen = ~is_topic & np.where(in_title, u < 0.85, u < 0.64)
        # Keep stop words inside phrases: never two in a row, never ending a sentence, opening or closing a
        # title.
        stop = ~is_topic & ~is_gen
        edge = end | (pos == 0) | (pos == lt[doc] - 1)
        edge[1:] |= stop[:-1] & (pos[1:] > 0)
        is_topic |= stop & edge
        ids = self.stop_table[rt.integers(0, _TABLE, tot)].astype(np.int64)
        gi = np.flatnonzero(is_gen)
        ids[gi] = len(self.vocab.stop) + self.gen_table[rt.integers(0, _TABLE, len(gi))]
        ti = np.flatnonzero(is_topic)
        td = doc[ti]
        tt = np.where(rt.random(len(ti)) < wS[td], S[td], P[td]).astype(np.int64)
        slot = self.slot_table[rt.integers(0, _TABLE, len(ti))].astype(np.int64)
        is_c = slot < C
        outsider = writer_home[td] != tt
        ua = rt.random(len(ti))
        alt = is_c & np.where(outsider, ua < 0.85, ua < 0.03)
        cid = tt * C + np.minimum(slot, C - 1)
        vy = np.clip(vocab_year[td] - self.vmin, 0, self.pmod.shape[1] - 1)
        modern = is_c & ~alt & (rt.random(len(ti)) < self.pmod[cid, vy])
        form = np.where(alt, 2, np.where(modern, 1, 0))
        per_core = self.p.core_terms
        local = np.where(is_c, per_core + 3 * np.minimum(slot, C - 1) + form, slot - C)
        ids[ti] = self.vocab.topic_base[tt] + local
        # Capitals: first title word, first word of each sentence.
        cap = (pos == 0) | (apos == 0)
        cap[1:] |= end[:-1] & ~in_title[1:]
        ids += self.V * end + 2 * self.V * cap
        toks = self.tok_str[ids].tolist()
        titles, abstracts = [], []
        s_l, lt_l, L_l = starts.tolist(), lt.tolist(), L.tolist()
        for i in range(n):
            a = s_l[i]
            b = a + lt_l[i]
            titles.append("".join(toks[a:b]).rstrip())
            abstracts.append("".join(toks[b:a + L_l[i]]).rstrip())
        return titles, abstracts

    # --- records ---------------------------------------------------------------------------------------

    def _ref_strings(self, refs: list[int]) -> str:
        pf, xf = self._tpl["paper"], self._tpl["stub"]
        return ", ".join(['"' + (pf(r + 1) if r >= 0 else xf(-r)) + '"' for r in refs])

    def _aminer_line(self, pid, title, abstract, y, venue, authors, names, org_ids) -> str:
        af, orgs = self._tpl["author"], self.names.orgs
        auth = ", ".join([f'{{"name": "{nm}", "id": "{af(a + 1)}", "org": "{orgs[o]}"}}'
                          for a, nm, o in zip(authors, names, org_ids, strict=True)])
        return (f'{{"id": "{self._tpl["paper"](pid + 1)}", "title": "{title}", "abstract": "{abstract}", '
                f'"year": {y}, "venue": {{"raw": "{self.venue_names[venue]}", '
                f'"id": "{self._tpl["venue"](venue + 1)}"}}, "authors": [{auth}], "references": [')

    def _openalex_line(self, pid, title, abstract, y, venue, authors, names, org_ids) -> str:
        af, of, orgs = self._tpl["author"], self._tpl["org"], self.names.orgs
        k = len(authors)
        parts = []
        for j, (a, nm, o) in enumerate(zip(authors, names, org_ids, strict=True)):
            position = "first" if j == 0 else ("last" if j == k - 1 else "middle")
            parts.append(f'{{"author_position": "{position}", "author": {{"id": "{af(a + 1)}", '
                         f'"display_name": "{nm}"}}, "institutions": [{{"id": "{of(o + 1)}", '
                         f'"display_name": "{orgs[o]}"}}]}}')
        inv: dict[str, list[int]] = {}
        for j, w in enumerate(abstract.split(" ")):
            inv.setdefault(w, []).append(j)
        vname = self.venue_names[venue]
        kind = "conference" if vname.startswith(("International", "Workshop")) else "journal"
        return (f'{{"id": "{self._tpl["paper"](pid + 1)}", "doi": null, "title": "{title}", '
                f'"display_name": "{title}", "publication_year": {y}, "type": "article", '
                f'"authorships": [{", ".join(parts)}], "primary_location": {{"source": {{"id": '
                f'"{self._tpl["venue"](venue + 1)}", "display_name": "{vname}", "type": "{kind}"}}}}, '
                f'"abstract_inverted_index": {json.dumps(inv)}, "referenced_works": [')

    # --- the main loop ---------------------------------------------------------------------------------

    NC_WIDTH = 10  # citation-count placeholder: JSON allows the spaces that pad it

    def run(self) -> dict:
        p, A, R = self.p, self.A, self.R
        out = self.out
        out.mkdir(parents=True, exist_ok=True)
        corpus_path = out / CORPUS_FILES[p.fmt]
        T, D = p.as_of_year, p.horizon
        founders = int(max(30, round(self.per_year[0] * 1.5)))
        self._new_authors(founders, p.start_year, founders=True)
        pos = 0
        with open(corpus_path, "wb") as fh, open(out / "paper_topics.tsv", "w", encoding="ascii") as ft:
            ft.write("paper_id\ttopic\tsecondary_topic\n")
            for yi, y in enumerate(self.years.tolist()):
                n_corp, n_cq = int(self.per_year[yi]), int(self.cq_per_year[yi])
                if yi > 0:
                    self._new_authors(int(round(p.entrants_per_paper * n_corp)), y, founders=False)
                self.topic_draw_pool = [[] for _ in range(R)]
                pools = self._pool_cdfs(y)
                leads, P, S, wS = self._leads_and_topics(y, n_corp + n_cq)
                n = len(leads)
                held = np.zeros(n, dtype=bool)
                held[n_corp:] = True
                min_refs = np.where(held, 10, 0)
                tf, to, venue, fit, refs = self._batch(y, leads, P, S, wS, held, min_refs, pools, self.rs,
                                                       self.rc)
                g0 = self.n_pap
                # The lead author writes, in the names they learnt in their first ten years of research.
                vocab_year = np.minimum(y, A.start[leads].astype(np.int64) + 10)
                writer_home = A.home[leads].astype(np.int64)
                to_l = to.tolist()
                for c0 in range(0, n, self.CHUNK):
                    c1 = min(n, c0 + self.CHUNK)
                    pos = self._write_chunk(fh, ft, y, g0, c0, c1, n_corp, P, S, wS, vocab_year, writer_home,
                                            tf, to_l, venue, refs, pos)
                self._commit_year(y, g0, n_corp, leads, P, S, wS, tf, to, venue, fit, refs, vocab_year,
                                  writer_home)
                if y == T:
                    self.snap_T = self._author_citations()
                if y == T + D:
                    self.snap_TD = self._author_citations()
        self._patch_counts(corpus_path)
        return self._finish(corpus_path)

    def _write_chunk(self, fh, ft, y, g0, c0, c1, n_corp, P, S, wS, vocab_year, writer_home, tf, to_l, venue,
                     refs, pos) -> int:
        """Text and records for batch rows [c0, c1): corpus rows are written, held-out rows kept aside."""
        sl = slice(c0, c1)
        titles, abstracts = self._texts(P[sl], S[sl], wS[sl], vocab_year[sl], writer_home[sl])
        base = to_l[c0]
        members = tf[base:to_l[c1]]
        names = self._names_for(members)
        mem_l, org_l = members.tolist(), self.A.org[members].tolist()
        line_fn = self._aminer_line if self.fmt == "aminer" else self._openalex_line
        # The citation count is known only at the end: it goes last, as a space-padded placeholder that
        # _patch_counts fills in (JSON allows the padding).
        nc_key = '], "n_citation": ' if self.fmt == "aminer" else '], "cited_by_count": '
        pad = " " * self.NC_WIDTH + "}\n"
        gfmt = graph_id_template("paper", self.fmt)
        P_l, S_l, v_l = P[sl].tolist(), S[sl].tolist(), venue[sl].tolist()
        lines, topic_lines, offsets = [], [], []
        for i in range(c0, c1):
            j = i - c0
            a0, a1 = to_l[i] - base, to_l[i + 1] - base
            if i >= n_corp:
                self.cite_queries.append({"year": y, "title": titles[j], "abstract": abstracts[j],
                                          "refs": refs[i]})
                continue
            gid = g0 + i
            line = line_fn(gid, titles[j], abstracts[j], y, v_l[j], mem_l[a0:a1], names[a0:a1],
                           org_l[a0:a1]) + self._ref_strings(refs[i]) + nc_key
            offsets.append(pos + len(line))
            line += pad
            pos += len(line)
            lines.append(line)
            sec = S_l[j]
            topic_lines.append(f"{gfmt.format(gid + 1)}\t{P_l[j]}\t{sec if sec >= 0 else '-'}\n")
        if offsets:
            first = g0 + c0
            self.nc_offset[first:first + len(offsets)] = offsets
        fh.write("".join(lines).encode("ascii"))
        ft.write("".join(topic_lines))
        self.on_progress(len(offsets))
        return pos

    def _leads_and_topics(self, y: int, n: int):
        rs, A, R = self.rs, self.A, self.R
        na = A.n
        start, end = A.start[:na], A.end[:na]
        act = np.flatnonzero((start <= y) & (end >= y))
        w = A.prod[act] * np.where(start[act] == y, 0.5, 1.0)
        leads = act[_sample(rs, w, n)].astype(np.int64)
        home = A.home[leads].astype(np.int64)
        sec = A.sec[leads].astype(np.int64)
        age = y - A.start[leads]
        # Expertise shifts: the second topic takes a growing share of a career.
        psec = A.breadth[leads] * np.minimum(1.0, 0.4 + age / 15.0)
        P = np.where(rs.random(n) < psec, sec, home)
        cross = rs.random(n) < self.p.p_cross
        other = np.where(P == home, sec, home)
        side = np.where(rs.random(n) < 0.5, 1, -1)
        S = np.where(rs.random(n) < 0.6, other, (P + side) % R)
        S = np.where(S == P, (P + 1) % R, S)
        S = np.where(cross, S, -1)
        wS = np.where(cross, rs.uniform(0.25, 0.45, n), 0.0)
        return leads, P, S, wS

    def _commit_year(self, y, g0, n_corp, leads, P, S, wS, tf, to, venue, fit, refs, vocab_year,
                     writer_home) -> None:
        """Fold this year's corpus papers into the state the next years draw on."""
        A, R = self.A, self.R
        if n_corp == 0:
            return
        g = np.arange(g0, g0 + n_corp)
        self.pap_year[g] = y
        self.pap_P[g] = P[:n_corp]
        self.pap_S[g] = S[:n_corp]
        self.pap_fit[g] = fit[:n_corp]
        self.pap_venue[g] = venue[:n_corp]
        self.n_pap = g0 + n_corp
        self.stats["cross"] += int((S[:n_corp] >= 0).sum())
        na_end = int(to[n_corp])
        members = tf[:na_end]
        sizes = np.diff(to[: n_corp + 1])
        mpaper = np.repeat(g, sizes)
        self.auth_flat.extend(members)
        self.auth_paper.extend(mpaper.astype(np.int32))
        L = leads[:n_corp]
        self.pap_wS[g] = wS[:n_corp]
        Pc = P[:n_corp]
        vy = np.clip(vocab_year[:n_corp] - self.vmin, 0, self.pmod.shape[1] - 1)
        self.pap_modern[g] = np.where(writer_home[:n_corp] != Pc, -1.0, self.pmod_topic[Pc, vy])
        A.n_papers[: A.n] += np.bincount(members, minlength=A.n).astype(np.int32)
        A.last_year[members] = y
        first = A.first_lead[L] == 0
        A.first_lead[L[first]] = y
        for t in range(R):
            prim = g[P[:n_corp] == t]
            secm = g[S[:n_corp] == t]
            self.pool[t].extend(prim.astype(np.int32))
            self.pool_sec[t].extend(np.zeros(len(prim), np.uint8))
            self.pool[t].extend(secm.astype(np.int32))
            self.pool_sec[t].extend(np.ones(len(secm), np.uint8))
        cited, ext = [], []
        for r in refs[:n_corp]:
            for v in r:
                (cited if v >= 0 else ext).append(v)
        self.stats["refs_in"] += len(cited)
        self.stats["refs_out"] += len(ext)
        if cited:
            self.cites[: self.n_pap] += np.bincount(np.array(cited, dtype=np.int64),
                                                   minlength=self.n_pap).astype(np.int32)
        if ext:
            self.stubs_seen[-np.array(ext, dtype=np.int64) - 1] = True
        # Papers enter their authors' memories only now, so that self-citations always point backwards.
        ring_p, ptr_p = self.ring_p, self.ptr_p
        for a, pp in zip(members.tolist(), mpaper.tolist(), strict=True):
            k = ptr_p[a]
            ring_p[a * RING + k] = pp
            ptr_p[a] = (k + 1) & (RING - 1)

    def _author_citations(self) -> np.ndarray:
        """Per author: citations so far to all their corpus papers."""
        af, ap = self.auth_flat.view, self.auth_paper.view
        return np.bincount(af, weights=self.cites[ap], minlength=self.A.n).astype(np.int64)

    def _patch_counts(self, path: Path) -> None:
        """Write each paper's final in-corpus citation count into its padded placeholder.

        The file is mapped one window of records at a time, so that only that window's pages are resident.
        """
        w = self.NC_WIDTH
        cols = np.arange(w)
        with open(path, "r+b") as fh:
            for b0 in range(0, self.n_pap, self.PATCH_BLOCK):
                b1 = min(self.n_pap, b0 + self.PATCH_BLOCK)
                offs = self.nc_offset[b0:b1]
                start = int(offs[0]) // mmap.ALLOCATIONGRANULARITY * mmap.ALLOCATIONGRANULARITY
                stop = int(offs[-1]) + w
                mm = np.memmap(fh, dtype=np.uint8, mode="r+", offset=start, shape=(stop - start,))
                mm[(offs - start)[:, None] + cols] = _ascii_counts(self.cites[b0:b1], w)
                mm.flush()
                del mm

    # --- ground truth ----------------------------------------------------------------------------------

    def _finish(self, corpus_path: Path) -> dict:
        p, out = self.p, self.out
        rising = self._write_rising_stars()
        cq = self._write_citation_queries()
        rq = self._write_reviewer_queries()
        n_auth = self._write_authors()
        stats = self._corpus_stats()
        stats.update(rising)
        stats.update(cq)
        stats.update(rq)
        stats["authors_with_papers"] = n_auth
        world = {
            "generator": "scholargraph.ingest.synth",
            "version": GENERATOR_VERSION,
            "params": {f.name: getattr(p, f.name) for f in fields(p)} | {"as_of": p.as_of_year},
            "corpus_file": corpus_path.name,
            "id_examples": {"paper": graph_id("paper", 0, p.fmt), "author": graph_id("author", 0, p.fmt),
                            "stub": graph_id("stub", 0, p.fmt)},
            "rising_star_definition": (
                f"young author: first first-author corpus paper in [{p.as_of_year - p.window + 1}, "
                f"{p.as_of_year}]; citations_as_of_T: citations from corpus papers published <= "
                f"{p.as_of_year} "
                f"to all their corpus papers; future_increment: citations from corpus papers published in "
                f"({p.as_of_year}, {p.as_of_year + p.horizon}] to all their corpus papers"),
            "counts": stats,
            "papers_per_year": {int(y): int(c) for y, c in zip(self.years, self.per_year, strict=True)},
            "stop_words": self.vocab.stop,
            "general_words": self.vocab.general,
            "topics": [
                {"id": t, "name": self.vocab.topic_names[t],
                 "words": self.vocab.core[t] + [w for tr in self.vocab.concepts[t] for w in tr],
                 "core_words": self.vocab.core[t],
                 "concepts": [{"traditional": a, "modern": b, "neighbour_field": c,
                               "midpoint_year": round(float(self.concept_mid[t * p.concepts + j]), 2)}
                              for j, (a, b, c) in enumerate(self.vocab.concepts[t])]}
                for t in range(self.R)],
            "venues": [{"id": graph_id("venue", v, p.fmt), "name": self.venue_names[v],
                        "topic": self.venue_topic[v], "prestige": round(float(self.venue_prestige[v]), 3)}
                       for v in range(len(self.venue_names))],
            "files": {
                "corpus": corpus_path.name, "paper_topics": "paper_topics.tsv", "authors": "authors.tsv",
                "rising_stars": "rising_stars.tsv", "citation_queries": "citations.queries.jsonl",
                "citation_qrels": "citations.qrels", "reviewer_queries": "reviewers.queries.jsonl",
                "reviewer_qrels": "reviewers.qrels", "reviewer_candidates": "reviewers.candidates",
                "reviewer_roles": "reviewers.roles.tsv"},
        }
        with open(out / "world.json", "w", encoding="ascii") as fh:
            json.dump(world, fh, indent=1)
            fh.write("\n")
        return stats

    def _corpus_stats(self) -> dict:
        n = self.n_pap
        c = np.sort(self.cites[:n])
        total = int(c.sum())
        top = max(1, n // 100)
        refs = self.stats["refs_in"] + self.stats["refs_out"]
        stubs = int(self.stubs_seen.sum())
        med = float(np.median(c))
        return {
            "papers": n,
            "references": refs,
            "mean_references": round(refs / n, 3),
            "in_corpus_references": self.stats["refs_in"],
            "stub_reference_share": round(self.stats["refs_out"] / max(1, refs), 4),
            "stub_papers": stubs,
            "stub_node_share": round(stubs / (n + stubs), 4),
            "self_citation_share": round(self.stats["self_refs"] / max(1, refs), 4),
            "cross_domain_share": round(self.stats["cross"] / n, 4),
            "in_citations_max": int(c[-1]),
            "in_citations_median": med,
            "in_citations_max_over_median": round(float(c[-1]) / max(med, 1.0), 1),
            "in_citations_top1pct_share": round(float(c[-top:].sum()) / max(1, total), 4),
            "uncited_share": round(float((c == 0).mean()), 4),
            "authorships": int(self.auth_flat.n),
            "mean_authors_per_paper": round(self.auth_flat.n / n, 3),
        }

    def _write_rising_stars(self) -> dict:
        p, A = self.p, self.A
        T, W = p.as_of_year, p.window
        na = A.n
        snap_T = np.zeros(na, np.int64)
        snap_T[: len(self.snap_T)] = self.snap_T
        # Both snapshots were taken when fewer authors existed (when T + D is before the end year).
        snap_TD = np.zeros(na, np.int64)
        snap_TD[: len(self.snap_TD)] = self.snap_TD
        inc = snap_TD - snap_T
        fl = A.first_lead[:na]
        young = np.flatnonzero((fl >= T - W + 1) & (fl <= T))
        rows = ["author_id\tcitations_as_of_T\tfuture_increment\ttalent\n"]
        for a, c, f, t in zip(young.tolist(), snap_T[young].tolist(), inc[young].tolist(),
                              A.talent[young].tolist(), strict=True):
            rows.append(f"{graph_id('author', a, p.fmt)}\t{c}\t{f}\t{t:.4f}\n")
        with open(self.out / "rising_stars.tsv", "w", encoding="ascii") as fh:
            fh.write("".join(rows))
        nz = int((inc[young] > 0).sum())
        return {"young_authors": len(young),
                "young_nonzero_increment_share": round(nz / max(1, len(young)), 4)}

    def _write_citation_queries(self) -> dict:
        p = self.p
        q_lines, qrels = [], []
        n_refs = 0
        for j, q in enumerate(self.cite_queries):
            qid = graph_id("citation_query", j, p.fmt)
            q_lines.append(json.dumps({"id": qid, "title": q["title"], "abstract": q["abstract"],
                                       "year": q["year"]}) + "\n")
            for r in q["refs"]:
                qrels.append(f"{qid} 0 {graph_id('paper', r, p.fmt)} 1\n")
                n_refs += 1
        with open(self.out / "citations.queries.jsonl", "w", encoding="ascii") as fh:
            fh.write("".join(q_lines))
        with open(self.out / "citations.qrels", "w", encoding="ascii") as fh:
            fh.write("".join(qrels))
        return {"citation_queries": len(self.cite_queries),
                "citation_qrels_per_query": round(n_refs / max(1, len(self.cite_queries)), 2)}

    def _write_authors(self) -> int:
        p, A = self.p, self.A
        na = A.n
        keep_all = np.flatnonzero(A.n_papers[:na] > 0)
        has_papers = A.n_papers[:na] > 0
        gfmt = graph_id_template("author", p.fmt)
        with open(self.out / "authors.tsv", "w", encoding="ascii") as fh:
            fh.write("author_id\tname\thome_topic\tsecondary_topic\tstart_year\tend_year\ttalent\tadvisor_id\t"
                     "n_papers\tfirst_first_author_year\n")
            for b0 in range(0, len(keep_all), self.BLOCK):
                keep = keep_all[b0:b0 + self.BLOCK]
                adv = A.advisor[keep]
                adv_ok = (adv >= 0) & has_papers[np.maximum(adv, 0)]
                rows = []
                for a, nm, h, s, st, en, t, ad, ok, n_, fl in zip(
                        keep.tolist(), self._names_for(keep), A.home[keep].tolist(), A.sec[keep].tolist(),
                        A.start[keep].tolist(), np.minimum(A.end[keep], p.end_year).tolist(),
                        A.talent[keep].tolist(), adv.tolist(), adv_ok.tolist(), A.n_papers[keep].tolist(),
                        A.first_lead[keep].tolist(), strict=True):
                    rows.append(f"{gfmt.format(a + 1)}\t{nm}\t{h}\t{s}\t{st}\t{en}\t{t:.4f}\t"
                                f"{gfmt.format(ad + 1) if ok else '-'}\t{n_}\t{fl if fl else '-'}\n")
                fh.write("".join(rows))
        return len(keep_all)

    # --- reviewer queries: held-out submissions with planted cross-domain experts ----------------------

    def role_quotas(self) -> tuple[tuple[str, int], ...]:
        p = self.p
        return (("expert", p.reviewer_experts), ("cross-traditional", p.reviewer_cross_experts),
                ("cross-neighbour", p.reviewer_cross_experts), ("same-topic", 6), ("neighbour-field", 5),
                ("random", 6))

    def _write_reviewer_queries(self) -> dict:
        p, A, R = self.p, self.A, self.R
        na = A.n
        stats = {"reviewer_queries": 0, "reviewer_candidates_per_query": 0.0, "cross_domain_experts": 0,
                 "cross_traditional": 0, "cross_neighbour": 0, "grade3_per_query": 0.0}
        files: dict[str, list[str]] = {
            "reviewers.queries.jsonl": [], "reviewers.qrels": [], "reviewers.candidates": [],
            "reviewers.roles.tsv": ["qid\tauthor_id\trole\tgrade\tdepth\tcited_by_query\tmodern_share\t"
                                    "neighbour_share\n"]}
        if p.reviewer_queries and self.n_pap:
            af, ap = self.auth_flat.view, self.auth_paper.view
            order = np.argsort(af, kind="stable")
            ctx = {
                # Each author's papers (to plant citations to them) and each paper's authors (to count links);
                # authorships were appended paper by paper, so they are already grouped by paper.
                "a_papers": ap[order], "a_off": np.searchsorted(af[order], np.arange(na + 1)),
                "p_off": np.searchsorted(ap, np.arange(self.n_pap + 1)),
                "pools": self._pool_cdfs(p.end_year + 1),
                "has": A.n_papers[:na] > 0,
                "columns": {},
            }
            total, grade3 = 0, 0
            # Queries go topic by topic so that only a few per-topic author columns are alive at once.
            for topic in range(R):
                ctx["columns"] = {t: c for t, c in ctx["columns"].items() if abs(t - topic) <= 1}
                for _ in range(topic, p.reviewer_queries, R):
                    done = self._reviewer_query(topic, stats["reviewer_queries"], ctx, files)
                    if done is None:
                        continue
                    stats["reviewer_queries"] += 1
                    total += done["candidates"]
                    grade3 += done["grade3"]
                    stats["cross_traditional"] += done["cross-traditional"]
                    stats["cross_neighbour"] += done["cross-neighbour"]
            nqw = max(1, stats["reviewer_queries"])
            stats["reviewer_candidates_per_query"] = round(total / nqw, 2)
            stats["grade3_per_query"] = round(grade3 / nqw, 2)
            stats["cross_domain_experts"] = stats["cross_traditional"] + stats["cross_neighbour"]
        for name, rows in files.items():
            with open(self.out / name, "w", encoding="ascii") as fh:
                fh.write("".join(rows))
        return stats

    def _topic_columns(self, t: int, ctx: dict) -> tuple[np.ndarray, ...]:
        """Per author, for topic `t`: papers on it (mixed papers count by their share), papers whose primary
        topic it is, the mean share of modern concept names in those, and the share written in the
        neighbouring field's names. Computed from the authorships at the end, not carried along."""
        if t not in ctx["columns"]:
            na = self.A.n
            af, ap = self.auth_flat.view, self.auth_paper.view
            P, S = self.pap_P[ap], self.pap_S[ap]
            w = self.pap_wS[ap].astype(np.float64)
            depth = np.bincount(af, weights=np.where(P == t, 1.0 - w, 0.0) + np.where(S == t, w, 0.0),
                                minlength=na)
            on = P == t
            a_on, m_on = af[on], self.pap_modern[ap[on]].astype(np.float64)
            count = np.bincount(a_on, minlength=na)
            n = np.maximum(count, 1)
            modern = np.bincount(a_on, weights=np.maximum(m_on, 0.0), minlength=na) / n
            alt = np.bincount(a_on, weights=(m_on < 0).astype(np.float64), minlength=na) / n
            ctx["columns"][t] = (depth, count, modern, alt)
        return ctx["columns"][t]

    def _reviewer_query(self, topic: int, number: int, ctx: dict, files: dict[str, list[str]]) -> dict | None:
        """One held-out submission on `topic`, its candidate reviewers and their grades (None: impossible)."""
        p, A, R, rq = self.p, self.A, self.R, self.rq
        na, yq = A.n, p.end_year + 1
        has, home = ctx["has"], A.home[:na]
        # The submission is a young researcher's: it is written in the topic's modern vocabulary.
        young = np.flatnonzero(has & (home == topic) & (A.start[:na] >= p.end_year - 6)
                               & (A.end[:na] >= p.end_year))
        pool = young if len(young) else np.flatnonzero(has & (home == topic))
        if len(pool) == 0:
            return None
        lead = int(pool[rq.integers(len(pool))])
        S = (topic + (1 if rq.random() < 0.5 else -1)) % R if rq.random() < 0.25 else -1
        S = -1 if S == topic else S
        wS = float(rq.uniform(0.25, 0.4)) if S >= 0 else 0.0
        Pa, Sa, wa = np.array([topic]), np.array([S]), np.array([wS])
        tf, _, _, _, refs = self._batch(yq, np.array([lead]), Pa, Sa, wa, np.array([True]), np.array([12]),
                                        ctx["pools"], rq, rq)
        team = tf.tolist()
        depth_t, count, modern, alt = self._topic_columns(topic, ctx)
        # Papers on the submission's topics (fractional for mixed papers).
        depth = (1.0 - wS) * depth_t + (wS * self._topic_columns(S, ctx)[0] if S >= 0 else 0.0)
        eligible = has & (A.last_year[:na] >= p.end_year - 10)
        eligible[team] = False
        deep = (depth >= 5.0) & (count >= 4)
        near = (home == (topic + 1) % R) | (home == (topic - 1) % R)
        masks = {
            "expert": deep & (home == topic) & (modern >= 0.6),
            "cross-traditional": deep & (home == topic) & (modern <= 0.15) & (alt < 0.2),
            "cross-neighbour": deep & (home != topic) & (alt >= 0.6),
            "same-topic": (home == topic) & (depth > 0) & (depth < 2.0),
            "neighbour-field": near & (depth < 0.5),
            "random": np.ones(na, dtype=bool),
        }
        roles: dict[int, str] = {}
        for role, quota in self.role_quotas():
            cand = np.flatnonzero(masks[role] & eligible)
            cand = cand[[c not in roles for c in cand.tolist()]] if roles else cand
            if len(cand) == 0:
                continue
            k = min(quota, len(cand))
            w = depth[cand] + 1e-9 if role.startswith(("expert", "cross")) else np.ones(len(cand))
            for c in sorted(rq.choice(cand, size=k, replace=False, p=w / w.sum()).tolist()):
                roles[int(c)] = role
        if len(roles) < 5:
            return None
        refs_q = list(refs[0])
        # Plant the citation evidence: the submission cites two of each cross-domain expert's papers on its
        # topic, so that topic and citation structure point to them while the words do not.
        for a, role in sorted(roles.items()):
            if not role.startswith("cross"):
                continue
            own = ctx["a_papers"][ctx["a_off"][a]:ctx["a_off"][a + 1]]
            own = own[self.pap_P[own] == topic]
            for c in sorted(rq.choice(own, size=min(2, len(own)), replace=False).tolist()):
                if c not in refs_q:
                    refs_q.append(c)
        refs_q = [refs_q[i] for i in rq.permutation(len(refs_q)).tolist()]
        cited = np.zeros(na, np.int64)
        af, p_off = self.auth_flat.view, ctx["p_off"]
        for r in refs_q:
            cited[af[p_off[r]:p_off[r + 1]]] += 1
        titles, abstracts = self._texts(Pa, Sa, wa, np.array([yq]), np.array([topic]))
        qid = graph_id("reviewer_query", number, p.fmt)
        files["reviewers.queries.jsonl"].append(json.dumps({
            "id": qid, "title": titles[0], "abstract": abstracts[0], "year": yq,
            "authors": self._names_for(np.array(team)),
            "references": [graph_id("paper", r, p.fmt) for r in refs_q]}) + "\n")
        out = {"candidates": len(roles), "grade3": 0, "cross-traditional": 0, "cross-neighbour": 0}
        for a in sorted(roles):
            grade = _grade(float(depth[a]), int(cited[a]))
            out["grade3"] += grade == 3
            if roles[a] in out:
                out[roles[a]] += 1
            aid = graph_id("author", a, p.fmt)
            files["reviewers.qrels"].append(f"{qid} 0 {aid} {grade}\n")
            files["reviewers.candidates"].append(f"{qid} {aid}\n")
            files["reviewers.roles.tsv"].append(
                f"{qid}\t{aid}\t{roles[a]}\t{grade}\t{float(depth[a]):.2f}\t{int(cited[a])}\t"
                f"{float(modern[a]):.3f}\t{float(alt[a]):.3f}\n")
        return out


def _ascii_counts(counts: np.ndarray, width: int) -> np.ndarray:
    """Counts as left-aligned, space-padded ASCII digits: one row of `width` bytes per count."""
    c = counts.astype(np.int64)
    ndig = np.ones(len(c), dtype=np.int64)
    for k in range(1, width):
        ndig += c >= 10 ** k
    out = np.full((len(c), width), ord(" "), dtype=np.uint8)
    for j in range(width):
        live = j < ndig
        digit = (c // 10 ** np.maximum(ndig - 1 - j, 0)) % 10
        out[live, j] = (ord("0") + digit[live]).astype(np.uint8)
    return out


def _grade(depth: float, cited: int) -> int:
    """Relevance of a reviewer from latent truth: papers on the submission's topics, and citation links.

    3: at least five papers on the topics, or three and the submission cites them; 2: at least two;
    1: some work on the topics; 0: none.
    """
    if depth >= 5.0 or (depth >= 3.0 and cited > 0):
        return 3
    if depth >= 2.0:
        return 2
    if depth >= 0.5:
        return 1
    return 0


def generate(params: SynthParams, out_dir: str | os.PathLike,
             on_progress: Callable[[int], None] | None = None) -> dict:
    """Write the corpus and its ground truth into `out_dir`; returns the corpus statistics.

    `on_progress(n)` is called as each chunk of `n` corpus papers is written (for a progress bar).
    """
    params.validate()
    world = _World(params, Path(out_dir), on_progress)
    return world.run()


__all__ = ["FORMATS", "CORPUS_FILES", "SynthParams", "generate", "graph_id", "local_id", "record_id"]
