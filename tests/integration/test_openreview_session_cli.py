"""An OpenReview chair's session through the real CLI and Neo4j, from openreview-expertise's dataset folder to the
files the chair uploads: `ingest openreview` of the folder `create_dataset.py` writes, the smallest model
trained, then `reviewers recommend --format openreview` (the affinity scores for the Paper Matching Setup and
the matcher's --scores) and `reviewers assign --format openreview` (Proposed_Assignment edges), both with the
venue's conflicts as the matcher's constraints file. Both files name profiles bare (`~Ana_Silva1`), carry a
number in every row, and pass openreview-py's own score-file reading (tests/openreview_api.py); the reviewer who
wrote a submission is neither scored nor assigned for it; each submission's two topical experts come first.

The folder is in exactly the shape openreview/openreview-expertise writes, at commit
4110008253381cc1b7cab203bfa6f1cd4cd5b7a1, expertise/create_dataset.py:
- archives/<profile id>.jsonl, one per reviewer, one publication a line (lines 745-752), each reduced to
  {id, cdate, mdate, content: {title, abstract, venueid}} plus pdate when the note has one (lines 259-275):
  API 2's {"value": ...} wrappers are taken off there (lines 239-249), cdate is the publication date in
  milliseconds (lines 231-232), mdate the note's tmdate (line 236). No author list travels: the file name is the
  reviewer.
- submissions.json, {note id: {id, mdate, content: {title, abstract}}} written with json.dump(indent=2)
  (lines 618-625, 778-781): OpenReview's submissions carry no authors here either.
- metadata.json, the run's counts (lines 31-35, 464, 753, 782-785).
archives/match_submissions.jsonl (lines 755-763) is written only for paper-paper matching (`match_paper_*`), which
a reviewer matching does not configure; the config here is the README's: match_group + paper_invitation.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import json
from pathlib import Path

import pytest

from tests.cli import run as cli
from tests.conftest import cli_env, open_test_store
from tests.openreview_api import VENUE_ID, upload_scores

# Four topics, two reviewers each, three public papers per reviewer: (title, abstract, year).
REVIEWERS: dict[str, tuple[str, list[tuple[str, str, int]]]] = {
    "~Ana_Silva1": ("proteins", [
        ("Predicting protein tertiary structure with deep residual networks",
         "We predict inter-residue distance maps from multiple sequence alignments with a deep residual network "
         "and fold the protein chain by gradient descent on the predicted distances, improving template-free "
         "structure prediction on CASP targets.", 2019),
        ("Coevolution signals in protein families for contact prediction",
         "Correlated mutations between residue pairs in large protein families reveal spatial contacts. We fit a "
         "pseudo-likelihood Potts model to the alignment and rank contacts for structure modelling of membrane "
         "proteins.", 2017),
        ("Refining predicted protein models with molecular dynamics",
         "Starting from predicted backbone structures, short restrained molecular dynamics simulations repair side "
         "chain packing and improve the GDT score of protein models without experimental data.", 2021),
    ]),
    "~Tomas_Berg1": ("proteins", [
        ("Attention over residue pairs for protein folding",
         "A pair representation of amino acid residues is updated by triangular attention and used to predict the "
         "three-dimensional coordinates of the protein backbone from its sequence and alignment.", 2022),
        ("Protein language models capture structural contacts",
         "Transformers trained on millions of protein sequences learn attention maps that recover residue contacts "
         "and secondary structure, enabling single-sequence structure prediction.", 2021),
        ("Benchmarking protein structure prediction on orphan sequences",
         "We evaluate folding methods on protein sequences with few homologs, where alignments are shallow and "
         "coevolution signals are weak, and measure accuracy of predicted tertiary structure.", 2023),
    ]),
    "~Bo_Zhang1": ("speech", [
        ("End-to-end speech recognition with connectionist temporal classification",
         "An acoustic model maps audio spectrogram frames directly to characters with the CTC loss, removing the "
         "pronunciation lexicon and lowering word error rate on conversational telephone speech.", 2018),
        ("Self-supervised speech representations for low-resource recognition",
         "Masked prediction of quantised latent speech units on unlabelled audio yields representations that, "
         "fine-tuned on ten minutes of transcribed speech, reach competitive word error rates.", 2021),
        ("Streaming transducer models for on-device speech recognition",
         "A recurrent neural network transducer with limited look-ahead recognises spoken words as the audio "
         "arrives, trading latency against word error rate on voice search.", 2020),
    ]),
    "~Maya_Cohen1": ("speech", [
        ("Speaker adaptation of acoustic models with i-vectors",
         "Appending i-vectors to the acoustic features adapts a deep neural network acoustic model to each "
         "speaker and reduces word error rate in automatic speech recognition of accented speech.", 2016),
        ("Data augmentation for robust speech recognition in noise",
         "Speed perturbation, room impulse responses and additive noise applied to training audio make acoustic "
         "models robust to far-field and noisy speech.", 2019),
        ("Conformer encoders for multilingual speech recognition",
         "Convolution-augmented transformer encoders trained on spoken audio in many languages share phonetic "
         "representations and improve recognition of low-resource languages.", 2022),
    ]),
    "~Dev_Patel2": ("databases", [
        ("Learned cardinality estimation for join queries",
         "A neural network trained on query plans and table samples estimates the cardinality of multi-way joins, "
         "which the relational query optimizer uses to choose cheaper join orders.", 2020),
        ("Cost-based join ordering with dynamic programming over hypergraphs",
         "We enumerate connected subgraphs of the query hypergraph to find optimal bushy join orders for SQL "
         "queries with complex predicates in a cost-based database optimizer.", 2017),
        ("Adaptive query processing for skewed data",
         "The database engine monitors intermediate result sizes during query execution and re-optimises the "
         "remaining plan when cardinality estimates prove wrong on skewed tables.", 2022),
    ]),
    "~Lena_Fischer1": ("databases", [
        ("Index selection for analytical database workloads",
         "Given a workload of SQL queries, we choose secondary indexes and materialised views under a storage "
         "budget using the query optimizer's what-if cost estimates.", 2018),
        ("Query optimization with learned cost models in column stores",
         "A learned model predicts the execution cost of physical operators in a columnar database, guiding the "
         "optimizer's choice of join algorithms and scan strategies.", 2021),
        ("Robust query plans under parameter uncertainty",
         "Parametric query optimization selects a small set of plans that remain near-optimal as selectivities of "
         "query predicates vary across executions of a prepared SQL statement.", 2019),
    ]),
    "~Femi_Okafor1": ("privacy", [
        ("Differentially private stochastic gradient descent at scale",
         "Clipping per-example gradients and adding calibrated Gaussian noise trains deep networks with formal "
         "differential privacy guarantees; a moments accountant tracks the privacy budget epsilon.", 2019),
        ("Privacy amplification by subsampling and shuffling",
         "We tighten differential privacy bounds for mechanisms run on random subsamples or shuffled reports, "
         "reducing the noise needed for a given privacy loss.", 2020),
        ("Differentially private release of census tables",
         "The discrete Gaussian mechanism and post-processing release counts of a population census with "
         "differential privacy while keeping tables consistent and non-negative.", 2022),
    ]),
    "~Sara_Lindqvist1": ("privacy", [
        ("Local differential privacy for frequency estimation",
         "Users randomise their own reports before collection; we design local differential privacy protocols "
         "that estimate item frequencies and heavy hitters with low error.", 2018),
        ("Membership inference attacks and private training",
         "We measure how much trained models leak about their training records through membership inference and "
         "show that differential privacy bounds the attacker's advantage.", 2021),
        ("Renyi differential privacy accounting for composition",
         "Renyi divergence gives tight composition of many private mechanisms; we convert the accounting to "
         "epsilon-delta differential privacy guarantees for iterative algorithms.", 2020),
    ]),
}
# The venue's submissions (note ids in OpenReview's form) and the topic each is on.
SUBMISSIONS: dict[str, tuple[str, str, str]] = {
    "Hk3xQ9pLm2": ("proteins", "Diffusion models for protein backbone generation and structure prediction",
                   "We generate protein backbones with an SE(3) diffusion model over residue frames and use it to "
                   "predict tertiary structure from amino acid sequences with shallow alignments."),
    "rJ8vN2tYa5": ("speech", "Whispered speech recognition with self-supervised acoustic models",
                   "Acoustic models pre-trained on unlabelled audio are adapted to whispered speech, cutting the word "
                   "error rate of automatic speech recognition on a new whisper corpus."),
    "Bx7kW4eRz1": ("databases", "Reinforcement learning for join order selection in query optimizers",
                   "A learned agent chooses join orders for SQL queries in a relational database optimizer, using "
                   "cardinality estimates and plan costs as state, and beats dynamic programming on latency."),
    "Sy2mP6cTq8": ("privacy", "Auditing differentially private machine learning",
                   "We audit the privacy guarantees of differentially private training with membership inference "
                   "canaries and estimate empirical lower bounds on epsilon."),
}
# OpenReview's Conflict edges of the venue (Reviewers/-/Conflict, weight -1), downloaded as the matcher's
# --constraints file: Ana wrote the protein submission, so she is its closest reviewer and must not get it.
CONFLICTS = [("Hk3xQ9pLm2", "~Ana_Silva1", -1)]


def ms(year: int) -> int:
    """Milliseconds since the epoch, as OpenReview dates notes: the first of March of `year`."""
    return int(datetime.datetime(year, 3, 1, tzinfo=datetime.UTC).timestamp() * 1000)


def note_id(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def write_expertise_dataset(root: Path) -> Path:
    """The folder create_dataset.py writes for a match_group + paper_invitation config (module docstring)."""
    archives = root / "archives"
    archives.mkdir(parents=True)
    for profile_id, (_, papers) in REVIEWERS.items():
        lines = []
        for k, (title, abstract, year) in enumerate(papers):
            # DBLP imports carry pdate (copied into cdate, line 232); OpenReview's own papers only cdate.
            note = {"id": note_id(title), "cdate": ms(year), "mdate": ms(2026),
                    "content": {"title": title, "abstract": abstract,
                                "venueid": "dblp.org/conf/2023" if k else f"ICLR.cc/{year}/Conference"}}
            if k:
                note["pdate"] = note["cdate"]
            lines.append(json.dumps(note) + "\n")
        (archives / f"{profile_id}.jsonl").write_text("".join(lines), encoding="utf-8")
    submissions = {sid: {"id": sid, "mdate": ms(2026), "content": {"title": title, "abstract": abstract}}
                   for sid, (_, title, abstract) in SUBMISSIONS.items()}
    (root / "submissions.json").write_text(json.dumps(submissions, indent=2), encoding="utf-8")
    archived = sum(len(papers) for _, papers in REVIEWERS.values())
    (root / "metadata.json").write_text(json.dumps(
        {"submission_count": len(submissions), "no_publications_count": 0, "no_publications": [], "no_profile": [],
         "archives_count": archived}, indent=2), encoding="utf-8")
    return root


def read_upload(path: Path) -> list[list[str]]:
    """The rows as the matcher (matcher/__main__.py lines 151-162) and openreview-py (csv.reader) read them."""
    with open(path, newline="", encoding="utf-8") as fh:
        return [row for row in csv.reader(fh) if row]


def check_upload(path: Path) -> list[tuple[str, str, float]]:
    """Each row is `submission,profile,number` with a bare profile id, and openreview-py posts every row as an
    edge: (head, tail, weight) as posted."""
    rows = read_upload(path)
    assert rows, f"{path.name} is empty"
    for row in rows:
        assert len(row) == 3 and row[0] in SUBMISSIONS, row
        assert row[1] in REVIEWERS, row  # a bare profile id: no `openreview:` prefix, no graph id
        assert row[2].strip() and float(row[2]) == float(row[2]), row  # a number, never empty or NaN
    api = upload_scores(path, list(SUBMISSIONS))
    posted = [(e.head, e.tail, e.weight) for e in api.posted]
    # openreview-py rounds to 4 digits and clips below 0 (matching.py lines 563-564); no row is dropped.
    assert posted == [(r[0], r[1], max(round(float(r[2]), 4), 0)) for r in rows]
    assert all(e.readers == [VENUE_ID, e.tail] for e in api.posted)
    return posted


@pytest.mark.long(reason="a chair's five CLI commands (ingest, features, train, recommend, assign), "
                         "4-5 s of imports each: 30 s alone on 2 cores")
def test_expertise_folder_to_uploaded_scores_and_assignment(neo4j_settings, tmp_path):
    env = cli_env(neo4j_settings, tmp_path / "home")
    dataset = write_expertise_dataset(tmp_path / "expertise-dir")
    # The Reviewers group's members, half as OpenReview names them and half as the graph does (a pool takes both):
    # the uploaded files name every one bare.
    pool = tmp_path / "pool.txt"
    pool.write_text("".join(f"openreview:{p}\n" if k % 2 else f"{p}\n" for k, p in enumerate(REVIEWERS)),
                    encoding="utf-8")
    constraints = tmp_path / "constraints.csv"
    constraints.write_text("".join(f"{p},{r},{v}\n" for p, r, v in CONFLICTS), encoding="utf-8")
    submissions = tmp_path / "submissions.jsonl"
    with open_test_store(neo4j_settings) as store:
        store.apply_schema()
        store.reset()
        try:
            done = cli(env, "ingest", "openreview", str(dataset), "--submissions-out", str(submissions))
            assert "submissions: 4 written" in done.stdout, done.stdout
            assert [json.loads(line)["id"] for line in submissions.read_text().splitlines()] == list(SUBMISSIONS)
            ids, _ = store.read_nodes("Author", ["name"])
            assert sorted(ids) == sorted(f"openreview:{p}" for p in REVIEWERS)  # the file names, nobody else

            # The steps RECO-Rank reads (topics and text vectors; no PageRank), with the default topic count.
            cli(env, "features", "--only", "topics,vectors")
            cli(env, "reviewers", "train", "--training-queries", "10", "--steps", "10")

            scores_csv = tmp_path / "scores.csv"
            done = cli(env, "reviewers", "recommend", "--queries", str(submissions), "--pool", str(pool),
                       "--k", "100", "--conflicts", str(constraints), "--format", "openreview",
                       "--out", str(scores_csv))
            assert "read as OpenReview constraints (paper,profile,-1|0|1): 1 conflict(s)" in done.stderr
            assert "1 (submission, reviewer) pair(s) are never suggested: declared (openreview) 1" in done.stderr
            scores = check_upload(scores_csv)
            by_paper: dict[str, list[tuple[float, str]]] = {}
            for paper, reviewer, weight in scores:
                by_paper.setdefault(paper, []).append((weight, reviewer))
            assert set(by_paper) == set(SUBMISSIONS)
            for paper, (topic, _, _) in SUBMISSIONS.items():
                ranked = [r for _, r in sorted(by_paper[paper], reverse=True)]
                experts = {r for r, (t, _) in REVIEWERS.items() if t == topic} - {r for p, r, _ in CONFLICTS
                                                                                  if p == paper}
                assert set(ranked[:len(experts)]) == experts, (paper, ranked)
            assert ("Hk3xQ9pLm2", "~Ana_Silva1") not in {(p, r) for p, r, _ in scores}
            assert len(scores) == len(SUBMISSIONS) * len(REVIEWERS) - len(CONFLICTS)

            assignment_csv = tmp_path / "assignment.csv"
            done = cli(env, "reviewers", "assign", "--queries", str(submissions), "--pool", str(pool),
                       "--per-paper", "2", "--max-load", "2", "--conflicts", str(constraints),
                       "--format", "openreview", "--out", str(assignment_csv))
            assert "declared conflicts ruled out: 1 (submission, reviewer) pair(s): declared (openreview) 1" \
                in done.stderr, done.stderr
            assigned = check_upload(assignment_csv)
            reviewers_of = {p: {r for q, r, _ in assigned if q == p} for p in SUBMISSIONS}
            assert len(assigned) == 2 * len(SUBMISSIONS)
            # Loads of 2 let every paper have its two best: both experts of its topic, except that the protein
            # paper's author is ruled out and its other expert comes with a reviewer of another topic.
            for paper, (topic, _, _) in SUBMISSIONS.items():
                experts = {r for r, (t, _) in REVIEWERS.items() if t == topic}
                if paper == "Hk3xQ9pLm2":
                    assert "~Tomas_Berg1" in reviewers_of[paper] and "~Ana_Silva1" not in reviewers_of[paper]
                else:
                    assert reviewers_of[paper] == experts, (paper, reviewers_of[paper])
            assert not (tmp_path / "assignment.no-affinity.csv").exists()  # every assigned pair has a number
        finally:
            store.reset()
