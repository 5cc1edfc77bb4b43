"""The generative model of the synthetic scholarly world: authors, topics, citations and text, streamed year
by year into a corpus file; `generate` writes the corpus and its planted ground truth."""

from __future__ import annotations

import array
import math
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from scholargraph.synth.dumps import NC_WIDTH, RecordWriter, patch_counts
from scholargraph.synth.ids import graph_id_template
from scholargraph.synth.lexicon import SAFE, build_names, build_vocab
from scholargraph.synth.params import CORPUS_FILES, GENERATOR_VERSION, SynthParams
from scholargraph.synth.truth import write_truth

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


class World:
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
        self.vocab = build_vocab(r_vocab, p.topics, p.core_terms, p.concepts)
        n_orgs = int(max(30, min(5000, p.papers // 400)))
        self.names = build_names(r_vocab, n_orgs, set(self.vocab.words))
        for w in self.vocab.words + self.names.given + self.names.surnames + self.names.orgs:
            assert SAFE.match(w), w
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
        self.records = RecordWriter(self.fmt, self.venue_names, self.names.orgs)

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

    def names_for(self, authors: np.ndarray) -> list[str]:
        A, nm = self.A, self.names
        g = A.given[authors].tolist()
        i = A.initial[authors].tolist()
        s = A.surname[authors].tolist()
        given, sur = nm.given, nm.surnames
        return [f"{given[a]} {chr(65 + b)}. {sur[c]}" for a, b, c in zip(g, i, s, strict=True)]

    # --- per-year citation pools -----------------------------------------------------------------------

    def pool_cdfs(self, y: int) -> list[tuple[np.ndarray, np.ndarray] | None]:
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

    def batch(self, y: int, leads: np.ndarray, P: np.ndarray, S: np.ndarray, wS: np.ndarray,
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

    def texts(self, P, S, wS, vocab_year, writer_home) -> tuple[list[str], list[str]]:
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

    # --- the main loop ---------------------------------------------------------------------------------


    def run(self) -> Path:
        """Write the corpus (citation counts still placeholders) and paper_topics.tsv; returns the corpus path."""
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
                pools = self.pool_cdfs(y)
                leads, P, S, wS = self._leads_and_topics(y, n_corp + n_cq)
                n = len(leads)
                held = np.zeros(n, dtype=bool)
                held[n_corp:] = True
                min_refs = np.where(held, 10, 0)
                tf, to, venue, fit, refs = self.batch(y, leads, P, S, wS, held, min_refs, pools, self.rs,
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
        return corpus_path

    def _write_chunk(self, fh, ft, y, g0, c0, c1, n_corp, P, S, wS, vocab_year, writer_home, tf, to_l, venue,
                     refs, pos) -> int:
        """Text and records for batch rows [c0, c1): corpus rows are written, held-out rows kept aside."""
        sl = slice(c0, c1)
        titles, abstracts = self.texts(P[sl], S[sl], wS[sl], vocab_year[sl], writer_home[sl])
        base = to_l[c0]
        members = tf[base:to_l[c1]]
        names = self.names_for(members)
        mem_l, org_l = members.tolist(), self.A.org[members].tolist()
        line_fn, ref_strings = self.records.line, self.records.ref_strings
        # The citation count is known only at the end: it goes last, as a space-padded placeholder that
        # dumps.patch_counts fills in (JSON allows the padding).
        nc_key = self.records.nc_key
        pad = " " * NC_WIDTH + "}\n"
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
                           org_l[a0:a1]) + ref_strings(refs[i]) + nc_key
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


def generate(params: SynthParams, out_dir: str | os.PathLike,
             on_progress: Callable[[int], None] | None = None) -> dict:
    """Write the corpus and its ground truth into `out_dir`; returns the corpus statistics.

    `on_progress(n)` is called as each chunk of `n` corpus papers is written (for a progress bar).
    """
    params.validate()
    world = World(params, Path(out_dir), on_progress)
    corpus_path = world.run()
    patch_counts(corpus_path, world.nc_offset[:world.n_pap], world.cites[:world.n_pap])
    return write_truth(world, corpus_path)
