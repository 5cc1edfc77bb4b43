"""The planted ground truth of a generated world: rising stars, citation and reviewer queries with their
judgments, authors, and world.json (parameters, vocabulary, venues, corpus statistics)."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from scholargraph.synth.ids import graph_id, graph_id_template
from scholargraph.synth.params import GENERATOR_VERSION, SynthParams

if TYPE_CHECKING:
    from scholargraph.synth.world import World

BLOCK = 65536  # rows per write when the ground-truth files are written


def write_truth(world: World, corpus_path: Path) -> dict:
    """Write the planted ground truth and world.json beside the corpus; returns the corpus statistics."""
    p, out = world.p, world.out
    rising = _write_rising_stars(world)
    cq = _write_citation_queries(world)
    rq = _write_reviewer_queries(world)
    n_auth = _write_authors(world)
    stats = _corpus_stats(world)
    stats.update(rising)
    stats.update(cq)
    stats.update(rq)
    stats["authors_with_papers"] = n_auth
    meta = {
        # the generator as every world.json names it (the module has moved since)
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
        "papers_per_year": {int(y): int(c) for y, c in zip(world.years, world.per_year, strict=True)},
        "stop_words": world.vocab.stop,
        "general_words": world.vocab.general,
        "topics": [
            {"id": t, "name": world.vocab.topic_names[t],
             "words": world.vocab.core[t] + [w for tr in world.vocab.concepts[t] for w in tr],
             "core_words": world.vocab.core[t],
             "concepts": [{"traditional": a, "modern": b, "neighbour_field": c,
                           "midpoint_year": round(float(world.concept_mid[t * p.concepts + j]), 2)}
                          for j, (a, b, c) in enumerate(world.vocab.concepts[t])]}
            for t in range(world.R)],
        "venues": [{"id": graph_id("venue", v, p.fmt), "name": world.venue_names[v],
                    "topic": world.venue_topic[v], "prestige": round(float(world.venue_prestige[v]), 3)}
                   for v in range(len(world.venue_names))],
        "files": {
            "corpus": corpus_path.name, "paper_topics": "paper_topics.tsv", "authors": "authors.tsv",
            "rising_stars": "rising_stars.tsv", "citation_queries": "citations.queries.jsonl",
            "citation_qrels": "citations.qrels", "reviewer_queries": "reviewers.queries.jsonl",
            "reviewer_qrels": "reviewers.qrels", "reviewer_candidates": "reviewers.candidates",
            "reviewer_roles": "reviewers.roles.tsv"},
    }
    with open(out / "world.json", "w", encoding="ascii") as fh:
        json.dump(meta, fh, indent=1)
        fh.write("\n")
    return stats


def _corpus_stats(world: World) -> dict:
    n = world.n_pap
    c = np.sort(world.cites[:n])
    total = int(c.sum())
    top = max(1, n // 100)
    refs = world.stats["refs_in"] + world.stats["refs_out"]
    stubs = int(world.stubs_seen.sum())
    med = float(np.median(c))
    return {
        "papers": n,
        "references": refs,
        "mean_references": round(refs / n, 3),
        "in_corpus_references": world.stats["refs_in"],
        "stub_reference_share": round(world.stats["refs_out"] / max(1, refs), 4),
        "stub_papers": stubs,
        "stub_node_share": round(stubs / (n + stubs), 4),
        "self_citation_share": round(world.stats["self_refs"] / max(1, refs), 4),
        "cross_domain_share": round(world.stats["cross"] / n, 4),
        "in_citations_max": int(c[-1]),
        "in_citations_median": med,
        "in_citations_max_over_median": round(float(c[-1]) / max(med, 1.0), 1),
        "in_citations_top1pct_share": round(float(c[-top:].sum()) / max(1, total), 4),
        "uncited_share": round(float((c == 0).mean()), 4),
        "authorships": int(world.auth_flat.n),
        "mean_authors_per_paper": round(world.auth_flat.n / n, 3),
    }


def _write_rising_stars(world: World) -> dict:
    p, A = world.p, world.A
    T, W = p.as_of_year, p.window
    na = A.n
    snap_T = np.zeros(na, np.int64)
    snap_T[: len(world.snap_T)] = world.snap_T
    # Both snapshots were taken when fewer authors existed (when T + D is before the end year).
    snap_TD = np.zeros(na, np.int64)
    snap_TD[: len(world.snap_TD)] = world.snap_TD
    inc = snap_TD - snap_T
    fl = A.first_lead[:na]
    young = np.flatnonzero((fl >= T - W + 1) & (fl <= T))
    rows = ["author_id\tcitations_as_of_T\tfuture_increment\ttalent\n"]
    for a, c, f, t in zip(young.tolist(), snap_T[young].tolist(), inc[young].tolist(),
                          A.talent[young].tolist(), strict=True):
        rows.append(f"{graph_id('author', a, p.fmt)}\t{c}\t{f}\t{t:.4f}\n")
    with open(world.out / "rising_stars.tsv", "w", encoding="ascii") as fh:
        fh.write("".join(rows))
    nz = int((inc[young] > 0).sum())
    return {"young_authors": len(young),
            "young_nonzero_increment_share": round(nz / max(1, len(young)), 4)}


def _write_citation_queries(world: World) -> dict:
    p = world.p
    q_lines, qrels = [], []
    n_refs = 0
    for j, q in enumerate(world.cite_queries):
        qid = graph_id("citation_query", j, p.fmt)
        q_lines.append(json.dumps({"id": qid, "title": q["title"], "abstract": q["abstract"],
                                   "year": q["year"]}) + "\n")
        for r in q["refs"]:
            qrels.append(f"{qid} 0 {graph_id('paper', r, p.fmt)} 1\n")
            n_refs += 1
    with open(world.out / "citations.queries.jsonl", "w", encoding="ascii") as fh:
        fh.write("".join(q_lines))
    with open(world.out / "citations.qrels", "w", encoding="ascii") as fh:
        fh.write("".join(qrels))
    return {"citation_queries": len(world.cite_queries),
            "citation_qrels_per_query": round(n_refs / max(1, len(world.cite_queries)), 2)}


def _write_authors(world: World) -> int:
    p, A = world.p, world.A
    na = A.n
    keep_all = np.flatnonzero(A.n_papers[:na] > 0)
    has_papers = A.n_papers[:na] > 0
    gfmt = graph_id_template("author", p.fmt)
    with open(world.out / "authors.tsv", "w", encoding="ascii") as fh:
        fh.write("author_id\tname\thome_topic\tsecondary_topic\tstart_year\tend_year\ttalent\tadvisor_id\t"
                 "n_papers\tfirst_first_author_year\n")
        for b0 in range(0, len(keep_all), BLOCK):
            keep = keep_all[b0:b0 + BLOCK]
            adv = A.advisor[keep]
            adv_ok = (adv >= 0) & has_papers[np.maximum(adv, 0)]
            rows = []
            for a, nm, h, s, st, en, t, ad, ok, n_, fl in zip(
                    keep.tolist(), world.names_for(keep), A.home[keep].tolist(), A.sec[keep].tolist(),
                    A.start[keep].tolist(), np.minimum(A.end[keep], p.end_year).tolist(),
                    A.talent[keep].tolist(), adv.tolist(), adv_ok.tolist(), A.n_papers[keep].tolist(),
                    A.first_lead[keep].tolist(), strict=True):
                rows.append(f"{gfmt.format(a + 1)}\t{nm}\t{h}\t{s}\t{st}\t{en}\t{t:.4f}\t"
                            f"{gfmt.format(ad + 1) if ok else '-'}\t{n_}\t{fl if fl else '-'}\n")
            fh.write("".join(rows))
    return len(keep_all)


# --- reviewer queries: held-out submissions with planted cross-domain experts ----------------------


def role_quotas(p: SynthParams) -> tuple[tuple[str, int], ...]:
    """Candidate reviewers drawn per submission, by role, in drawing order."""
    return (("expert", p.reviewer_experts), ("cross-traditional", p.reviewer_cross_experts),
            ("cross-neighbour", p.reviewer_cross_experts), ("same-topic", 6), ("neighbour-field", 5),
            ("random", 6))


def _write_reviewer_queries(world: World) -> dict:
    p, A, R = world.p, world.A, world.R
    na = A.n
    stats = {"reviewer_queries": 0, "reviewer_candidates_per_query": 0.0, "cross_domain_experts": 0,
             "cross_traditional": 0, "cross_neighbour": 0, "grade3_per_query": 0.0}
    files: dict[str, list[str]] = {
        "reviewers.queries.jsonl": [], "reviewers.qrels": [], "reviewers.candidates": [],
        "reviewers.roles.tsv": ["qid\tauthor_id\trole\tgrade\tdepth\tcited_by_query\tmodern_share\t"
                                "neighbour_share\n"]}
    if p.reviewer_queries and world.n_pap:
        af, ap = world.auth_flat.view, world.auth_paper.view
        order = np.argsort(af, kind="stable")
        ctx = {
            # Each author's papers (to plant citations to them) and each paper's authors (to count links);
            # authorships were appended paper by paper, so they are already grouped by paper.
            "a_papers": ap[order], "a_off": np.searchsorted(af[order], np.arange(na + 1)),
            "p_off": np.searchsorted(ap, np.arange(world.n_pap + 1)),
            "pools": world.pool_cdfs(p.end_year + 1),
            "has": A.n_papers[:na] > 0,
            "columns": {},
        }
        total, grade3 = 0, 0
        # Queries go topic by topic so that only a few per-topic author columns are alive at once.
        for topic in range(R):
            ctx["columns"] = {t: c for t, c in ctx["columns"].items() if abs(t - topic) <= 1}
            for _ in range(topic, p.reviewer_queries, R):
                done = _reviewer_query(world, topic, stats["reviewer_queries"], ctx, files)
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
        with open(world.out / name, "w", encoding="ascii") as fh:
            fh.write("".join(rows))
    return stats


def _topic_columns(world: World, t: int, ctx: dict) -> tuple[np.ndarray, ...]:
    """Per author, for topic `t`: papers on it (mixed papers count by their share), papers whose primary
    topic it is, the mean share of modern concept names in those, and the share written in the
    neighbouring field's names. Computed from the authorships at the end, not carried along."""
    if t not in ctx["columns"]:
        na = world.A.n
        af, ap = world.auth_flat.view, world.auth_paper.view
        P, S = world.pap_P[ap], world.pap_S[ap]
        w = world.pap_wS[ap].astype(np.float64)
        depth = np.bincount(af, weights=np.where(P == t, 1.0 - w, 0.0) + np.where(S == t, w, 0.0),
                            minlength=na)
        on = P == t
        a_on, m_on = af[on], world.pap_modern[ap[on]].astype(np.float64)
        count = np.bincount(a_on, minlength=na)
        n = np.maximum(count, 1)
        modern = np.bincount(a_on, weights=np.maximum(m_on, 0.0), minlength=na) / n
        alt = np.bincount(a_on, weights=(m_on < 0).astype(np.float64), minlength=na) / n
        ctx["columns"][t] = (depth, count, modern, alt)
    return ctx["columns"][t]


def _reviewer_query(world: World, topic: int, number: int, ctx: dict, files: dict[str, list[str]]) -> dict | None:
    """One held-out submission on `topic`, its candidate reviewers and their grades (None: impossible)."""
    p, A, R, rq = world.p, world.A, world.R, world.rq
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
    tf, _, _, _, refs = world.batch(yq, np.array([lead]), Pa, Sa, wa, np.array([True]), np.array([12]),
                                    ctx["pools"], rq, rq)
    team = tf.tolist()
    depth_t, count, modern, alt = _topic_columns(world, topic, ctx)
    # Papers on the submission's topics (fractional for mixed papers).
    depth = (1.0 - wS) * depth_t + (wS * _topic_columns(world, S, ctx)[0] if S >= 0 else 0.0)
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
    for role, quota in role_quotas(world.p):
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
        own = own[world.pap_P[own] == topic]
        for c in sorted(rq.choice(own, size=min(2, len(own)), replace=False).tolist()):
            if c not in refs_q:
                refs_q.append(c)
    refs_q = [refs_q[i] for i in rq.permutation(len(refs_q)).tolist()]
    cited = np.zeros(na, np.int64)
    af, p_off = world.auth_flat.view, ctx["p_off"]
    for r in refs_q:
        cited[af[p_off[r]:p_off[r + 1]]] += 1
    titles, abstracts = world.texts(Pa, Sa, wa, np.array([yq]), np.array([topic]))
    qid = graph_id("reviewer_query", number, p.fmt)
    files["reviewers.queries.jsonl"].append(json.dumps({
        "id": qid, "title": titles[0], "abstract": abstracts[0], "year": yq,
        "authors": world.names_for(np.array(team)),
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
