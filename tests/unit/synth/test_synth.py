"""The synthetic world: determinism, plausible statistics, and ground truth that matches the corpus."""

from __future__ import annotations

import collections
import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from scholargraph.graph.records import source_id
from scholargraph.ingest import normalize
from scholargraph.synth import SynthParams, generate
from scholargraph.synth.cli import synth_command
from scholargraph.synth.ids import graph_id, graph_id_template, id_template, local_id
from scholargraph.synth.params import CORPUS_FILES

N = 6000
SEED = 7


def _make(tmp_path_factory, name: str, **kw) -> Path:
    out = tmp_path_factory.mktemp(name)
    generate(SynthParams(**kw), out)
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return _make(tmp_path_factory, "world", papers=N, seed=SEED)


@pytest.fixture(scope="module")
def world_oa(tmp_path_factory) -> Path:
    return _make(tmp_path_factory, "world_oa", papers=2000, seed=SEED, fmt="openalex", reviewer_queries=10,
                 citation_queries=20)


class Corpus:
    """The corpus file read back independently of the generator (plain json)."""

    def __init__(self, out: Path):
        self.world = json.loads((out / "world.json").read_text())
        self.fmt = self.world["params"]["fmt"]
        self.papers: dict[str, dict] = {}
        self.author_papers: dict[str, list[str]] = collections.defaultdict(list)
        with open(out / self.world["corpus_file"], encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                pid = source_id("aminer", r["id"])
                authors = [source_id("aminer", a["id"]) for a in r["authors"]]
                self.papers[pid] = {"year": r["year"], "authors": authors, "n_citation": r["n_citation"],
                                    "refs": [source_id("aminer", x) for x in r["references"]],
                                    "text": r["title"] + " " + r["abstract"], "title": r["title"],
                                    "abstract": r["abstract"], "venue": r["venue"]}
                for a in authors:
                    self.author_papers[a].append(pid)
        self.in_cites = collections.Counter(x for p in self.papers.values() for x in p["refs"]
                                            if x in self.papers)


@pytest.fixture(scope="module")
def corpus(world) -> Corpus:
    return Corpus(world)


def _hashes(out: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())}


def _tsv(path: Path) -> list[list[str]]:
    return [line.rstrip("\n").split("\t") for line in path.read_text().splitlines(keepends=True)[1:]]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _qrels(path: Path) -> list[tuple[str, str, int]]:
    rows = []
    for line in path.read_text().splitlines():
        qid, zero, doc, grade = line.split(" ")
        assert zero == "0"
        rows.append((qid, doc, int(grade)))
    return rows


# --- determinism and ids ---------------------------------------------------------------------------


def test_same_seed_gives_byte_identical_files(world, tmp_path_factory):
    again = _make(tmp_path_factory, "again", papers=N, seed=SEED)
    first, second = _hashes(world), _hashes(again)
    assert len(first) == 11
    assert first == second


def test_different_seed_gives_a_different_world(world, tmp_path_factory):
    other = _hashes(_make(tmp_path_factory, "other", papers=N, seed=SEED + 1))
    mine = _hashes(world)
    for name in ("corpus.aminer.jsonl", "rising_stars.tsv", "reviewers.qrels", "citations.qrels"):
        assert other[name] != mine[name], name


def test_ids_come_from_one_mapping():
    for fmt in ("aminer", "openalex"):
        for kind in ("paper", "stub", "author", "reviewer_query", "citation_query"):
            assert graph_id(kind, 41, fmt) == source_id(fmt, local_id(kind, 41, fmt))
            assert graph_id_template(kind, fmt).format(42) == graph_id(kind, 41, fmt)
    assert graph_id("paper", 0, "aminer") == "aminer:synth-p0000001"
    assert graph_id("author", 0, "aminer") == "aminer:synth-a000001"
    assert id_template("paper", "openalex", record=True).format(1) == "https://openalex.org/W1000000001"
    assert graph_id("paper", 0, "openalex") == "openalex:W1000000001"
    assert graph_id("author", 4, "openalex") == "openalex:A1000000005"


# --- the corpus goes through the project's ingestion path --------------------------------------------


def _bundles(out: Path, fmt: str):
    path = str(out / CORPUS_FILES[fmt])
    return [normalize.normalize(fmt, raw) for raw in normalize.iter_raw(fmt, path)]


def test_aminer_corpus_normalizes_to_the_ids_of_the_ground_truth(world, corpus):
    bundles = _bundles(world, "aminer")
    assert len(bundles) == N
    ids = [b.paper.id for b in bundles]
    assert ids == list(corpus.papers)  # papers keep their AMiner ids: no DOIs
    topics = [row[0] for row in _tsv(world / "paper_topics.tsv")]
    assert topics == ids
    b = bundles[-1]
    assert b.paper.title and b.paper.abstract and b.paper.year and b.venue is not None
    assert all(a.id.startswith("aminer:synth-a") for a in b.authors)
    # n_citation was patched in at the end: it equals the in-corpus citations the graph will hold.
    in_deg = collections.Counter(c.cited_id for x in bundles for c in x.citations)
    assert all(x.paper.n_citation == in_deg.get(x.paper.id, 0) for x in bundles)


def test_openalex_corpus_normalizes(world_oa):
    bundles = _bundles(world_oa, "openalex")
    assert len(bundles) == 2000
    with (world_oa / "corpus.openalex.jsonl").open() as f:
        raw = json.loads(f.readline())
    assert raw["id"].startswith("https://openalex.org/W1")
    assert raw["authorships"][0]["author_position"] == "first"
    ids = {b.paper.id for b in bundles}
    assert all(i.startswith("openalex:W1") for i in ids)
    assert [r[0] for r in _tsv(world_oa / "paper_topics.tsv")] == [b.paper.id for b in bundles]
    cited = {c.cited_id for b in bundles for c in b.citations}
    assert cited - ids and all(c.startswith("openalex:W2") for c in cited - ids)  # stubs
    assert all(b.paper.abstract and len(b.paper.abstract.split()) >= 60 for b in bundles[:50])
    in_deg = collections.Counter(c.cited_id for x in bundles for c in x.citations)
    assert all(x.paper.n_citation == in_deg.get(x.paper.id, 0) for x in bundles)
    for row in _tsv(world_oa / "rising_stars.tsv"):
        assert row[0].startswith("openalex:A1")
    for qid, doc, _ in _qrels(world_oa / "citations.qrels"):
        assert qid.startswith("openalex:W4") and doc in ids


def _as_aminer_ids(text: str) -> str:
    """OpenAlex graph ids rewritten as the AMiner graph ids of the same objects."""
    for kind in ("paper", "author", "reviewer_query", "citation_query"):
        prefix = graph_id_template(kind, "openalex").split("{")[0]  # e.g. 'openalex:W1'
        text = re.sub(re.escape(prefix) + r"(\d{9})",
                      lambda m, k=kind: graph_id(k, int(m.group(1)) - 1, "aminer"), text)
    return text


def test_both_formats_describe_the_same_world(world_oa, tmp_path_factory):
    aminer = _make(tmp_path_factory, "world_am", papers=2000, seed=SEED, reviewer_queries=10,
                   citation_queries=20)
    for name in ("rising_stars.tsv", "reviewers.qrels", "citations.qrels", "paper_topics.tsv"):
        as_openalex = (world_oa / name).read_text()
        assert as_openalex.count("openalex:") > 10
        assert _as_aminer_ids(as_openalex) == (aminer / name).read_text(), name


# --- statistics --------------------------------------------------------------------------------------


def test_corpus_statistics_are_plausible(world, corpus):
    papers = corpus.papers
    n_refs = [len(p["refs"]) for p in papers.values()]
    assert 8.0 <= np.mean(n_refs) <= 12.0
    outside = sum(1 for p in papers.values() for x in p["refs"] if x not in papers)
    assert 0.04 <= outside / sum(n_refs) <= 0.14
    cites = np.sort(np.array([corpus.in_cites.get(pid, 0) for pid in papers]))
    median = max(1.0, float(np.median(cites)))
    assert cites[-1] / median >= 30  # heavy tail
    top1 = cites[-len(cites) // 100:].sum() / cites.sum()
    assert 0.08 <= top1 <= 0.45
    assert 0.05 <= float((cites == 0).mean()) <= 0.5
    rows = _tsv(world / "paper_topics.tsv")
    cross = sum(1 for r in rows if r[2] != "-") / len(rows)
    assert 0.10 <= cross <= 0.20
    assert all(p["refs"] == list(dict.fromkeys(p["refs"])) for p in papers.values())
    # Citations point back in time, and the world grows.
    assert all(papers[x]["year"] < p["year"] for p in papers.values() for x in p["refs"] if x in papers)
    years = collections.Counter(p["year"] for p in papers.values())
    assert years[2023] > 3 * years[1990]
    counts = corpus.world["counts"]
    assert counts["papers"] == N and counts["references"] == sum(n_refs)
    assert counts["in_citations_max"] == int(cites[-1])


def test_texts_look_like_the_brief(corpus):
    for p in list(corpus.papers.values())[:500]:
        assert 6 <= len(p["title"].split()) <= 12
        assert 60 <= len(p["abstract"].split()) <= 150
        assert p["abstract"][0].isupper() and p["abstract"].endswith(".")


def test_world_json_describes_topics_and_vocabulary(world):
    w = json.loads((world / "world.json").read_text())
    assert w["params"]["seed"] == SEED and w["params"]["as_of"] == 2020
    assert len(w["topics"]) == 10
    all_words = [word for t in w["topics"] for word in t["words"]]
    assert len(all_words) == len(set(all_words))  # topic vocabularies are disjoint
    for t in w["topics"]:
        assert 150 <= len(t["words"]) <= 300
        assert len(t["concepts"]) == 40
    assert len(w["venues"]) == 42


def test_vocabulary_drifts_towards_modern_names(corpus):
    w = corpus.world
    forms = {}
    for t in w["topics"]:
        for c in t["concepts"]:
            forms[c["traditional"]] = 0
            forms[c["modern"]] = 1
    share = {}
    for years in ((1990, 1999), (2016, 2023)):
        counts = [0, 0]
        for p in corpus.papers.values():
            if years[0] <= p["year"] <= years[1]:
                for word in re.findall(r"[a-z]+", p["text"].lower()):
                    if word in forms:
                        counts[forms[word]] += 1
        share[years] = counts[1] / sum(counts)
    assert share[(1990, 1999)] < 0.3 < 0.7 < share[(2016, 2023)]


# --- ground truth ------------------------------------------------------------------------------------


def test_ground_truth_ids_exist_in_the_corpus(world, corpus):
    papers, authors = corpus.papers, corpus.author_papers
    cq = _jsonl(world / "citations.queries.jsonl")
    assert len(cq) == 100
    for qid, doc, grade in _qrels(world / "citations.qrels"):
        assert doc in papers and grade == 1 and qid not in papers
    rq = _jsonl(world / "reviewers.queries.jsonl")
    assert len(rq) == 50
    for q in rq:
        assert q["id"] not in papers and q["year"] == 2024
        assert q["references"] and all(r in papers for r in q["references"])
        assert q["authors"] and all(isinstance(a, str) for a in q["authors"])
    qrels = _qrels(world / "reviewers.qrels")
    for _, author, grade in qrels:
        assert author in authors and 0 <= grade <= 3
    cands = [tuple(line.split(" ")) for line in (world / "reviewers.candidates").read_text().splitlines()]
    assert cands == [(q, a) for q, a, _ in qrels]
    for row in _tsv(world / "rising_stars.tsv"):
        assert row[0] in authors
    for row in _tsv(world / "authors.tsv"):
        assert row[0] in authors
    assert len(_tsv(world / "authors.tsv")) == len(authors)


def test_citation_queries_are_held_out_with_their_true_references(world, corpus):
    queries = {q["id"]: q for q in _jsonl(world / "citations.queries.jsonl")}
    by_q = collections.defaultdict(list)
    for qid, doc, _ in _qrels(world / "citations.qrels"):
        by_q[qid].append(doc)
    assert set(by_q) == set(queries)
    for qid, docs in by_q.items():
        q = queries[qid]
        assert set(q) == {"id", "title", "abstract", "year"}
        assert q["year"] >= 2021 and len(docs) >= 5 and len(set(docs)) == len(docs)
        assert all(corpus.papers[d]["year"] < q["year"] for d in docs)
        # The true references are on-topic: they share the query's topic words.
        q_words = set(re.findall(r"[a-z]+", (q["title"] + " " + q["abstract"]).lower()))
        shared = [len(q_words & set(re.findall(r"[a-z]+", corpus.papers[d]["text"].lower()))) for d in docs]
        assert np.median(shared) >= 8


def _rising(corpus: Corpus, T: int, D: int, W: int):
    """Young authors and their citation counts, recomputed from the corpus file alone."""
    first_lead: dict[str, int] = {}
    for p in corpus.papers.values():
        lead = p["authors"][0]
        first_lead[lead] = min(first_lead.get(lead, 9999), p["year"])
    young = {a for a, y in first_lead.items() if T - W + 1 <= y <= T}
    before, after = collections.Counter(), collections.Counter()
    for p in corpus.papers.values():
        for x in p["refs"]:
            if x not in corpus.papers:
                continue
            target = before if p["year"] <= T else (after if p["year"] <= T + D else None)
            if target is not None:
                for a in corpus.papers[x]["authors"]:
                    target[a] += 1
    return young, before, after


def test_rising_star_increments_match_the_corpus(world, corpus):
    rows = _tsv(world / "rising_stars.tsv")
    assert (world / "rising_stars.tsv").read_text().startswith(
        "author_id\tcitations_as_of_T\tfuture_increment\ttalent\n")
    young, before, after = _rising(corpus, 2020, 3, 5)
    assert {r[0] for r in rows} == young
    for author, as_of, inc, _ in rows:
        assert int(as_of) == before[author] and int(inc) == after[author], author


def test_talent_predicts_rising_stars_only_partially(world):
    rows = _tsv(world / "rising_stars.tsv")
    talent = np.array([float(r[3]) for r in rows])
    inc = np.array([int(r[2]) for r in rows])
    past = np.array([int(r[1]) for r in rows])
    assert len(rows) > 300
    assert 0.5 <= float((inc > 0).mean()) < 1.0

    def spearman(a, b):
        ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
        return float(np.corrcoef(ra, rb)[0, 1])

    assert 0.1 < spearman(talent, inc) < 0.8
    assert 0.2 < spearman(past, inc) < 0.95


# --- reviewers: graded judgments with planted cross-domain experts ----------------------------------


def _bag(text: str, stop: set[str]) -> collections.Counter:
    return collections.Counter(w for w in re.findall(r"[a-z]+", text.lower()) if w not in stop)


def _cos(a: collections.Counter, b: collections.Counter) -> float:
    num = sum(v * b.get(k, 0) for k, v in a.items())
    den = math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))
    return num / den if den else 0.0


def test_reviewer_candidates_are_graded_sets(world):
    qrels = _qrels(world / "reviewers.qrels")
    per_q = collections.defaultdict(list)
    for qid, _, grade in qrels:
        per_q[qid].append(grade)
    assert len(per_q) == 50
    for grades in per_q.values():
        assert 20 <= len(grades) <= 40
        assert 3 in grades and 0 in grades


def test_planted_cross_domain_experts_share_topic_and_citations_not_words(world, corpus):
    stop = set(corpus.world["stop_words"]) | set(corpus.world["general_words"])
    queries = {q["id"]: q for q in _jsonl(world / "reviewers.queries.jsonl")}
    topic_of = {r[0]: int(r[1]) for r in _tsv(world / "paper_topics.tsv")}
    overlap = collections.defaultdict(list)
    planted = collections.Counter()
    for qid, author, role, grade, _, cited, _, _ in _tsv(world / "reviewers.roles.tsv"):
        q = queries[qid]
        q_bag = _bag(q["title"] + " " + q["abstract"], stop)
        own = corpus.author_papers[author]
        top3 = sorted((_cos(q_bag, _bag(corpus.papers[p]["text"], stop)) for p in own), reverse=True)[:3]
        overlap[role].append(float(np.mean(top3)))
        if role.startswith("cross"):
            planted[role] += 1
            assert grade == "3"
            # Citation evidence: the submission cites their papers ...
            assert int(cited) >= 1 and set(own) & set(q["references"])
            # ... and topic evidence: they have written on the submission's main topic.
            q_topic = collections.Counter(topic_of[r] for r in q["references"]).most_common(1)[0][0]
            assert sum(topic_of[p] == q_topic for p in own) >= 4
    assert planted["cross-traditional"] >= 20 and planted["cross-neighbour"] >= 20
    expert = np.mean(overlap["expert"])
    # Word overlap misses them: lower than for same-vocabulary experts, even lower than for juniors.
    for role in ("cross-traditional", "cross-neighbour"):
        assert np.mean(overlap[role]) < 0.75 * expert, (role, np.mean(overlap[role]), expert)
        assert np.mean(overlap[role]) < np.mean(overlap["same-topic"])
    assert np.mean(overlap["random"]) < 0.1 < np.mean(overlap["same-topic"])


# --- parameters and CLI ------------------------------------------------------------------------------


@pytest.mark.parametrize("kw, word", [
    ({"papers": 10}, "papers"), ({"papers": 1000, "fmt": "csv"}, "format"),
    ({"papers": 1000, "as_of": 2022}, "horizon"), ({"papers": 1000, "topics": 1}, "topics"),
    ({"papers": 1000, "start_year": 2020}, "10 years"), ({"papers": 1000, "p_cross": 0.9}, "p_cross"),
    ({"papers": 1000, "mean_refs": 0}, "references"), ({"papers": 1000, "reviewer_experts": -1}, "experts"),
])
def test_bad_parameters_are_refused(kw, word):
    with pytest.raises(ValueError, match=word):
        SynthParams(**kw).validate()


def test_cli_writes_a_world_and_refuses_bad_arguments(tmp_path):
    runner = CliRunner()
    out = tmp_path / "w"
    ok = runner.invoke(synth_command, ["--papers", "500", "--out", str(out), "--quiet", "--seed", "3",
                                       "--reviewer-queries", "5", "--citation-queries", "5"])
    assert ok.exit_code == 0, ok.output
    assert (out / "corpus.aminer.jsonl").exists() and "500 papers" in ok.output
    again = runner.invoke(synth_command, ["--papers", "500", "--out", str(out), "--quiet"])
    assert again.exit_code == 2 and "--overwrite" in again.output
    for args in (["--papers", "5"], ["--papers", "500", "--format", "csv"], ["--papers", "x"],
                 ["--papers", "500", "--as-of", "2023"], ["--papers", "500", "--end-year", "2999",
                                                          "--start-year", "2980"]):
        res = runner.invoke(synth_command, [*args, "--out", str(tmp_path / "bad"), "--quiet"])
        assert res.exit_code == 2, (args, res.output)
        assert "Traceback" not in res.output and res.output.strip().splitlines()[-1].startswith("Error:")
    assert not (tmp_path / "bad" / "corpus.aminer.jsonl").exists()


def test_rising_star_horizon_before_the_end_year(tmp_path):
    """T + D before the end year: authors who appear after T + D get no increment, and nothing crashes."""
    from scholargraph.synth import SynthParams, generate

    stats = generate(SynthParams(papers=2000, seed=1, as_of=2015, horizon=3, reviewer_queries=2,
                                 citation_queries=2), tmp_path / "w")
    rows = (tmp_path / "w" / "rising_stars.tsv").read_text().splitlines()[1:]
    assert stats["young_authors"] == len(rows) > 0
    assert all(int(r.split("\t")[2]) >= 0 for r in rows)


def test_reviewer_role_quotas_are_parameters(tmp_path_factory):
    """A cross-domain-heavy world: fewer same-vocabulary experts, more planted cross-domain ones."""
    out = _make(tmp_path_factory, "cross_heavy", papers=N, seed=SEED, reviewer_experts=2, reviewer_cross_experts=4)
    per_query: dict[str, collections.Counter] = {}
    for qid, _, role, *_ in _tsv(out / "reviewers.roles.tsv"):
        per_query.setdefault(qid, collections.Counter())[role] += 1
    assert per_query
    assert max(c["expert"] for c in per_query.values()) <= 2
    assert max(c["cross-traditional"] + c["cross-neighbour"] for c in per_query.values()) > 4
