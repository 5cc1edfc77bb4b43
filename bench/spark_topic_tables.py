"""The tables that read topics, with a gensim-trained and a Spark-trained topic model, in the same run.

    .venv/bin/python bench/spark_topic_tables.py [--tables reviewers,rising-stars] [--seeds 0,1]
        [--master local[2]] [--encoder minilm-onnx-int8]

Rising stars (IIRL reads topics twice: the content features and the per-topic groups it ranks within): one
topic fit per seed on the papers known at the prediction year, gensim's or Spark's (the same hyperparameters),
then the same protocol on each, as bench/rising_stars.py runs it: NIPS 1987-1993 as of 1990 with a 3-year
horizon (30 % of the young researchers held out, 5 splits), and the forward dev protocol on arXiv hep-th
(trained as of 1994, ranking the cohort of 1997, labels without self-citations, 20 features, IIRL seeds 0-2).
Printed: Pre@5/10/20 % of IIRL, and of Base-2 (the average citation increment of the last 2 years: a score
that reads no topic) as the yardstick.

Reviewers: on the gold standard's dev half (29 reviewers, their rated papers, the S2 corpus of their papers): one
evidence index per topic fit, everything else equal (the same snapshot, the same pretrained text vectors, the same
citation vectors): the topic model is gensim's in-process LDA or Spark MLlib's online LDA (spark/topics.py),
both with `features`' defaults (10 topics) and the seed. RECO-Rank is trained self-supervised on each index with
the same seed, then the expertise protocol (weighted Kendall loss, 95 % bootstrap interval over reviewers) is
run; the rows that read topics are RECO-Rank's (topic evidence is one of its three).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
GENSIM, SPARK = "gensim (in process)", "Spark MLlib online"
KS = (5, 10, 20)  # the rising-star tables' Pre@k%


def reviewer_tables(spark, seeds: list[int], args) -> None:
    import pandas as pd
    from _gold import GoldStandard

    from scholargraph.graph.topics import TopicModel
    from scholargraph.graph.vectors import make_encoder
    from scholargraph.ranking.reviewers import expertise as ex
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex
    from scholargraph.ranking.reviewers.reco_rank import RecoRank
    from scholargraph.spark import topics as st

    gold = GoldStandard.load()
    snap = gold.snapshot
    texts = [snap.text(i) for i in range(snap.n_papers)]
    titles, abstracts = snap.text_fields()
    encoder = make_encoder(args.encoder).fit()
    t0 = time.perf_counter()
    text_vectors = encoder.encode_fields(titles, abstracts)
    print(f"gold standard dev: {snap.n_papers} papers; {args.encoder} vectors in {time.perf_counter() - t0:.1f} s")
    rows = []
    frame = spark.createDataFrame(pd.DataFrame({"id": snap.paper_ids, "title": titles, "abstract": abstracts}))
    for seed in seeds:
        t0 = time.perf_counter()
        gensim_model = TopicModel(random_state=seed).fit([t for t in texts if t.strip()])
        gensim_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        spark_model, _ = st.fit_topic_model(spark, frame, TopicModel(random_state=seed))
        spark_s = time.perf_counter() - t0
        for fit, model, seconds in ((GENSIM, gensim_model, gensim_s), (SPARK, spark_model, spark_s)):
            index = EvidenceIndex.build(snap, encoder=encoder, topic_model=model, seed=seed,
                                        text_vectors=text_vectors)
            judgments = gold.judgments(index)
            reco = RecoRank(seed=seed).fit(index)
            results = ex.expertise_experiment(index, judgments, reco, bootstrap=args.bootstrap)
            r = next(v for k, v in results.items() if k.startswith("RECO-Rank"))
            rows.append((seed, fit, seconds, r.loss, r.low, r.high))
            print(f"  seed {seed} {fit:20s} topic fit {seconds:5.1f} s  RECO-Rank loss {r.loss:.4f} "
                  f"[{r.low:.3f}, {r.high:.3f}]", flush=True)
            if fit == GENSIM and seed == seeds[0]:
                print(ex.format_expertise_table(results, judgments))
    print("\n| seed | topic model | topic fit s | RECO-Rank loss | 95 % interval |")
    print("|---|---|---|---|---|")
    for seed, fit, seconds, loss, low, high in rows:
        print(f"| {seed} | {fit} | {seconds:.1f} | {loss:.4f} | [{low:.3f}, {high:.3f}] |")


def topic_fits(spark, past, seed: int) -> list[tuple[str, float, np.ndarray]]:
    """(fit, seconds, per-paper topics of `past`) from gensim and from Spark, both with 10 topics and `seed`."""
    import pandas as pd

    from scholargraph.graph.topics import TopicModel
    from scholargraph.ranking.rising_stars.features import fit_paper_topics
    from scholargraph.spark import topics as st

    t0 = time.perf_counter()
    ours = fit_paper_topics(past, 10, workers=0, random_state=seed)
    gensim_s = time.perf_counter() - t0
    titles, abstracts = past.text_fields()
    frame = spark.createDataFrame(pd.DataFrame({"id": past.paper_ids, "title": titles, "abstract": abstracts}))
    t0 = time.perf_counter()
    model, _ = st.fit_topic_model(spark, frame, TopicModel(num_topics=10, random_state=seed))
    theirs = fit_paper_topics(past, fitted=model)
    return [(GENSIM, gensim_s, ours), (SPARK, time.perf_counter() - t0, theirs)]


def rising_star_tables(spark, seeds: list[int]) -> None:
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.rising_stars.evaluate import evaluate, evaluate_forward
    from scholargraph.ranking.rising_stars.features import build_dataset

    rows = []
    nips = snapshot_from_files("aminer", [str(DATA / "nips" / "nips-1987-1993.aminer.jsonl")])
    past = nips.as_of(1990)
    for seed in seeds:
        for fit, seconds, topics in topic_fits(spark, past, seed):
            data = build_dataset(nips, 1990, 3, paper_topics=topics, past=past)
            main = evaluate(data, ks=KS, repeats=5, seed=seed)["main"]
            rows.append(("NIPS as of 1990, 5 splits (mean over topics)", seed, fit, seconds,
                         main["IIRL"]["mean"], main["Base-2"]["mean"]))
            _print_row(rows[-1])
    hepth = snapshot_from_files("aminer", [str(DATA / "hepth" / "hepth-1992-2000.aminer.jsonl")])
    now = hepth.as_of(1997)
    for seed in seeds:
        for fit, seconds, topics in topic_fits(spark, now, seed):
            options = {"paper_topics": topics, "external_features": True, "labels_without_self_citations": True}
            train = build_dataset(now, 1994, 3, past=now.as_of(1994), **options)
            test = build_dataset(hepth, 1997, 3, past=now, **options)
            main = evaluate_forward(train, test, ks=KS, seeds=[0, 1, 2], ablation=False, lightgbm=False)["main"]
            rows.append(("hep-th 1994 -> 1997 (overall)", seed, fit, seconds, main["IIRL"]["overall"],
                         main["Base-2"]["overall"]))
            _print_row(rows[-1])
    print("\n| corpus, protocol | LDA seed | topic model | topic fit s | "
          + " | ".join(f"IIRL Pre@{k}%" for k in KS) + " | " + " | ".join(f"Base-2 Pre@{k}%" for k in KS) + " |")
    print("|---|---|---|---|" + "---|" * (2 * len(KS)))
    for corpus, seed, fit, seconds, iirl, base in rows:
        print(f"| {corpus} | {seed} | {fit} | {seconds:.1f} | " + " | ".join(f"{iirl[k]:.3f}" for k in KS) + " | "
              + " | ".join(f"{base[k]:.3f}" for k in KS) + " |")


def _print_row(row) -> None:
    corpus, seed, fit, seconds, iirl, base = row
    print(f"  {corpus}, LDA seed {seed}, {fit:20s} topic fit {seconds:5.1f} s  IIRL "
          + ", ".join(f"Pre@{k}% {v:.3f}" for k, v in iirl.items()) + "  (Base-2 "
          + ", ".join(f"{v:.3f}" for v in base.values()) + ")", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", default="reviewers,rising-stars")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--encoder", default="minilm-onnx-int8")
    ap.add_argument("--bootstrap", type=int, default=2000)
    args = ap.parse_args()
    from scholargraph.config import Settings
    from scholargraph.spark.session import spark_session

    tables = {t.strip() for t in args.tables.split(",") if t.strip()}
    if tables - {"reviewers", "rising-stars"}:
        ap.error(f"unknown tables: {', '.join(sorted(tables - {'reviewers', 'rising-stars'}))}")
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory(prefix="sg-topic-tables-") as home:
        settings = dataclasses.replace(Settings.load(), home=Path(home))
        with spark_session(settings, master=args.master, connector=False) as spark:
            if "reviewers" in tables:
                reviewer_tables(spark, seeds, args)
            if "rising-stars" in tables:
                rising_star_tables(spark, seeds)


if __name__ == "__main__":
    main()
