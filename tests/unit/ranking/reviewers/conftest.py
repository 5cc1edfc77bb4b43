"""Hand-built worlds for the reviewer tests: a tiny snapshot with chosen vectors, and evidence made to order."""

from __future__ import annotations

import numpy as np
import pytest

from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.ranking.reviewers.evidence import QUERY_FEATURES, Evidence, EvidenceIndex, combine_citation

# Text axes: modern words of field A, traditional words of A, field B, field C, general words.
A, A_OLD, B, C, GEN = range(5)


def _text(*pairs) -> list[float]:
    v = [0.0] * 5
    for axis, w in pairs:
        v[axis] = w
    return v


def tiny_world():
    """Reviewers: expert E (modern A words), cross X (traditional A words, cited by the submission),
    junior J (one A paper), other-field O, noisy N (one A-topic paper, no citations), plus background papers
    by one-paper authors. Returns (snapshot, text, topics, citation vectors)."""
    rng = np.random.default_rng(0)
    papers, texts, topics, cvecs, auth, cites = [], [], [], [], [], []

    def add(pid, year, author, text, topic, cvec, title=None, abstract="study"):
        papers.append({"id": pid, "year": year, "title": title or "background study", "abstract": abstract})
        texts.append(text)
        topics.append(topic)
        cvecs.append(cvec)
        for pos, a in enumerate(author if isinstance(author, list) else [author], start=1):
            auth.append((a, pid, pos))

    topic_a, topic_b, topic_c = [0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.05, 0.05, 0.9]
    ca, cb, cc = [1.0, 0.1, 0.0, 0.0], [0.0, 1.0, 0.1, 0.0], [0.0, 0.0, 1.0, 0.1]
    for i in range(30):
        t = rng.dirichlet(np.ones(3))
        add(f"bg{i}", 2000 + i % 10, f"bga{i}", list(rng.random(5)), list(t), list(rng.normal(size=4)))
    add("r1", 2010, "bga0", _text((A, 1), (GEN, 0.3)), topic_a, ca)
    for i in range(4):
        add(f"e{i}", 2016 + i, ["E", "E2"] if i == 0 else "E", _text((A, 1), (A_OLD, 0.1), (GEN, 0.3)), topic_a, ca,
            title="gradient boosting ensembles")
        add(f"x{i}", 2012 + i, "X", _text((A, 0.25), (A_OLD, 1), (GEN, 0.3)), topic_a, ca,
            title="additive stagewise fitting")
    add("e_future", 2025, "E", _text((A, 1), (GEN, 0.3)), topic_a, ca)
    add("e_old", 2005, ["E", "E3"], _text((A, 1), (GEN, 0.3)), topic_a, ca)
    add("j0", 2019, "J", _text((A, 0.95), (GEN, 0.3)), topic_a, ca)
    for i in range(3):
        add(f"o{i}", 2015 + i, "O", _text((B, 1), (GEN, 0.3)), topic_b, cb, title="protein folding kinetics")
    add("n0", 2017, "N", _text((A, 0.2), (C, 1), (GEN, 0.3)), topic_a, [0.0] * 4)
    add("n1", 2018, "N", _text((C, 1), (GEN, 0.3)), topic_c, cc)
    add("n2", 2019, "N", _text((C, 1), (GEN, 0.3)), topic_c, cc)
    add("c1", 2015, "bga1", _text((A, 0.5), (GEN, 0.3)), topic_a, ca)
    add("notext", 2017, "E", [0.0] * 5, [0.0] * 3, ca, title=None, abstract=None)
    papers[-1]["title"] = None
    papers[-1]["abstract"] = None
    # Citations: x2 cites r1 (coupling with a submission citing r1); c1 cites r1 and x3 (co-citation).
    cites += [("x2", "r1"), ("c1", "r1"), ("c1", "x3"), ("e1", "r1"), ("e2", "e1"), ("x1", "x0"), ("o1", "o0"),
              ("n1", "n2"), ("notext", "e1")]
    cites += [(f"bg{i}", f"bg{(i + 1) % 30}") for i in range(30)]
    snap = GraphSnapshot.build(papers, auth, cites, authors=[("E", "José Pérez"), ("X", "Xu Li"), ("J", "Jo Ng"),
                                                             ("O", "Olu Ade"), ("N", "Nia Noise"),
                                                             ("E2", "Eve Two"), ("E3", "Eli Three")])
    return snap, np.array(texts, np.float32), np.array(topics, np.float32), np.array(cvecs, np.float32)


@pytest.fixture
def world():
    snap, text, topics, cvec = tiny_world()
    return EvidenceIndex(snap, text, topics, cvec, background=30, seed=0)


def submission(index: EvidenceIndex, refs=("x0", "x1", "r1"), text=None, authors=("Sub Mitter",), year=2021,
               qid="q1"):
    tv = np.array(text if text is not None else _text((A, 1), (GEN, 0.3)), np.float32)
    top = np.array([0.9, 0.05, 0.05], np.float32) if float(np.abs(tv).sum()) > 0 else np.zeros(3, np.float32)
    return index.query_from_submission({"id": qid, "title": "t", "abstract": "a", "year": year,
                                        "authors": list(authors), "references": list(refs)},
                                       text_vector=tv, topic_vector=top)


def make_evidence(reviewers: list[list[dict]], background=(0.0, 0.1, 0.0, 0.1, 0.0, 0.1, 0.0, 1.0)) -> Evidence:
    """Evidence for one query from per-paper dicts: sem, top, vec, direct, coupling, cocit (raw values), and
    optional has=(semantic, topic, citation) availability; no lexical scores. Background spreads of 0.1 make
    z = raw / 0.1."""
    R = len(reviewers)
    P = max(1, max(len(r) for r in reviewers))
    papers = np.full((R, P), -1, np.int64)
    sem = np.zeros((R, P), np.float32)
    top = np.zeros((R, P), np.float32)
    parts = np.zeros((R, P, 4), np.float32)
    mask = np.zeros((R, P, 3), bool)
    k = 0
    for r, rev in enumerate(reviewers):
        for j, p in enumerate(rev):
            papers[r, j] = k
            k += 1
            has = p.get("has", (True, True, True))
            mask[r, j] = has
            sem[r, j] = p.get("sem", 0.0) * has[0]
            top[r, j] = p.get("top", 0.0) * has[1]
            parts[r, j] = [p.get("vec", 0.0), p.get("direct", 0.0), p.get("coupling", 0.0), p.get("cocit", 0.0)]
            parts[r, j] *= has[2]
    bg = np.array(background, np.float32)
    qf = np.zeros(len(QUERY_FEATURES), np.float32)
    qf[:8] = bg
    qf[8:11] = 1.0
    return Evidence(query_id="q", reviewer_rows=np.arange(R), reviewer_ids=[f"r{r}" for r in range(R)],
                    papers=papers, valid=papers >= 0, semantic=sem, topic=top, citation_parts=parts,
                    citation=combine_citation(parts) * mask[..., 2], mask=mask, background=bg, query_features=qf,
                    n_papers=(papers >= 0).sum(axis=1), no_history=~(papers >= 0).any(axis=1))
