"""Citeomatic reading a pretrained encoder's evidence, on real arXiv hep-th papers (1992, and the 1993 papers
that cite them) in a real Neo4j through the CLI: `features` stores MiniLM vectors, `citations train` names
the encoder NNRank reads, the model keeps that encoder and its vectors, so that serving and a retrain after
the Citeomatic encoder became the graph's still read it; a wrong --encoder is one line and exit 2; the same
--seed trains the same model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from tests.cli import run as cli
from tests.conftest import cli_env, open_test_store, require_shared_data

ENCODER = "minilm-onnx-int8"


@pytest.fixture(scope="module")
def library(neo4j_settings, tmp_path_factory):
    dump = require_shared_data("hepth", "hepth-1992-2000.aminer.jsonl")
    rows = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines() if line.strip()]
    # The first 250 papers of 1992 and the first 200 papers of 1993 that cite one of them: with the 6 of 1992 that
    # cite inside, just over the 200 citing papers Citeomatic trains on (MIN_CITING_PAPERS; fewer, and `citations
    # train` trains nothing). All of 1992 and its 652 citing papers took three times as long as 400 and 262, and
    # neither showed more.
    early = {r["id"] for r in [r for r in rows if r.get("year") == 1992][:250]}
    citing = [r for r in rows if r.get("year") == 1993 and early.intersection(r.get("references") or [])][:200]
    papers = [r for r in rows if r["id"] in early] + citing
    work = tmp_path_factory.mktemp("encoder")
    corpus = work / "hepth-1992-1993.aminer.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in papers), encoding="utf-8")
    drafts = work / "drafts.jsonl"  # in-graph papers of 1993, as drafts under their node ids
    drafts.write_text("".join(json.dumps({"id": f"aminer:{r['id']}", "title": r["title"], "abstract": r["abstract"],
                                          "year": 1993}) + "\n" for r in citing[:3]), encoding="utf-8")
    env = cli_env(neo4j_settings, work / "home")
    with open_test_store(neo4j_settings) as store:
        store.apply_schema()
        store.reset()
        cli(env, "ingest", "aminer", str(corpus))
        cli(env, "features", "--encoder", ENCODER, "--topics", "4")
        yield env, work, drafts, len(papers)
        store.reset()


def train(env, *extra):
    return cli(env, "citations", "train", "--epochs", "1", "--max-triplets", "5000", *extra)


def _weights(work: Path) -> dict[str, torch.Tensor]:
    """The current model's NNSelect and NNRank tensors."""
    path = Path(json.loads((work / "home" / "models" / "citations" / "current.json").read_text())["path"])
    return {f"{part}.{k}": v for part in ("encoder/nnselect", "nnrank")
            for k, v in torch.load(path / part / "state.pt", weights_only=True).items()}


@pytest.mark.long(reason="the module's graph (450 real hep-th papers encoded with MiniLM) and four trainings "
                         "(the first with the previous-year model that chooses the fusion)")
def test_the_ranker_reads_the_graphs_encoder_keeps_it_and_one_seed_trains_one_model(library):
    env, work, drafts, n = library
    first = train(env, "--seed", "3")
    assert f"NNRank reads the pretrained encoder {ENCODER}: its vectors of {n:,} papers are in the graph" \
        in first.stderr, first.stderr
    path = Path(json.loads((work / "home" / "models" / "citations" / "current.json").read_text())["path"])
    assert json.loads((path / "config.json").read_text())["text_encoder"] == "text-encoder"
    assert (path / "text-vectors.npz").is_file()
    features = json.loads((path / "nnrank" / "config.json").read_text())["features"]
    assert features[-2:] == ["encoder_cosine", "log_encoder_neighbour_citations"]
    weights = _weights(work)
    # Served from the model's own vectors: the in-graph drafts never get themselves back.
    rows = [json.loads(line) for line in cli(env, "citations", "recommend", "--queries", str(drafts), "--k", "10",
                                             "--format", "jsonl").stdout.splitlines() if line.strip()]
    assert len(rows) == 30 and {r["ranker"] for r in rows} <= {"citeomatic", "citeomatic+bm25"}
    ids = {json.loads(line)["id"] for line in drafts.read_text(encoding="utf-8").splitlines()}
    assert {r["query"] for r in rows} == ids and not [r for r in rows if r["paper_id"] == r["query"]]
    # The graph's encoder is now Citeomatic's; a retrain (auto) still reads MiniLM, from the current model, and
    # the same seed trains the same model, with or without the previous-year model that chose the fusion
    # training beside it (--fusion none trains the served one only).
    again = train(env, "--seed", "3", "--fusion", "none")
    assert f"NNRank reads the pretrained encoder {ENCODER}" in again.stderr, again.stderr
    assert "served ranker: citeomatic (as --fusion gave it: nothing validated)" in again.stdout, again.stdout
    same = _weights(work)
    assert weights.keys() == same.keys() and all(torch.equal(weights[k], same[k]) for k in weights)
    train(env, "--seed", "4", "--fusion", "none")
    other = _weights(work)
    assert not all(torch.equal(weights[k], other[k]) for k in weights)
    assert "without a pretrained encoder" in train(env, "--encoder", "none", "--fusion", "10").stderr
    assert json.loads((work / "home" / "models" / "citations" / "current.json").read_text())["fusion"] == \
        {"lexical": "bm25", "rrf_k": 10}


def test_a_wrong_encoder_is_one_line_and_exit_2(library):
    env, work, drafts, _ = library
    proc = cli(env, "citations", "train", "--encoder", "tfidf-svd", check=False)
    assert proc.returncode == 2 and "not a pretrained encoder" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli(env, "citations", "train", "--fusion", "0", check=False)
    assert proc.returncode == 2 and "expected auto, none or a positive number" in proc.stderr
    qrels = work / "qrels.txt"
    qrels.write_text("q 0 aminer:9201001 1\n", encoding="utf-8")
    proc = cli(env, "citations", "evaluate", "--queries", str(drafts), "--qrels", str(qrels), "--encoder", "none",
               check=False)
    assert proc.returncode == 2 and "--encoder is for --time-split" in proc.stderr and "Traceback" not in proc.stderr


def test_training_options_are_for_training_and_time_split_evaluation(library):
    env, work, drafts, _ = library
    qrels = work / "qrels.txt"
    qrels.write_text("q 0 aminer:9201001 1\n", encoding="utf-8")
    for option, value in (("--seed", "3"), ("--epochs", "1"), ("--max-triplets", "5000")):
        proc = cli(env, "citations", "evaluate", "--queries", str(drafts), "--qrels", str(qrels), option, value,
                   check=False)
        assert proc.returncode == 2 and f"{option} is for --time-split" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    # With --time-split they size the model it trains (the demo evaluates what it trains: 2 epochs, not 8).
    proc = cli(env, "citations", "evaluate", "--time-split", "1992", "--max-queries", "20", "--epochs", "1",
               "--max-triplets", "1000", "--encoder", "none")
    assert "time split at 1992: training on 250 papers, 20 later papers as queries" in proc.stderr, proc.stderr
    assert re.search(r"NNSelect trained 1 epoch\(s\) on [\d,]+ triplets \(--epochs 1", proc.stderr), proc.stderr
    assert {"bm25", "nnselect", "nnselect+nnrank"} <= {line.split()[0] for line in proc.stdout.splitlines()[2:]}
