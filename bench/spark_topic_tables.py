"""The reviewer gold-standard table with a gensim-trained and a Spark-trained topic model, in the same run.

    .venv/bin/python bench/spark_topic_tables.py [--seeds 0,1] [--master local[2]] [--encoder minilm-onnx-int8]

On the gold standard's dev half (29 reviewers, their rated papers, the S2 corpus of their papers): one evidence
index per topic fit, everything else equal (the same snapshot, the same pretrained text vectors, the same
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--encoder", default="minilm-onnx-int8")
    ap.add_argument("--bootstrap", type=int, default=2000)
    args = ap.parse_args()
    import pandas as pd
    from _gold import GoldStandard

    from scholargraph.config import Settings
    from scholargraph.graph.topics import TopicModel
    from scholargraph.graph.vectors import make_encoder
    from scholargraph.ranking.reviewers import expertise as ex
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex
    from scholargraph.ranking.reviewers.reco_rank import RecoRank
    from scholargraph.spark import topics as st
    from scholargraph.spark.session import spark_session

    seeds = [int(s) for s in args.seeds.split(",")]
    gold = GoldStandard.load()
    snap = gold.snapshot
    texts = [snap.text(i) for i in range(snap.n_papers)]
    titles, abstracts = snap.text_fields()
    encoder = make_encoder(args.encoder).fit()
    t0 = time.perf_counter()
    text_vectors = encoder.encode_fields(titles, abstracts)
    print(f"gold standard dev: {snap.n_papers} papers; {args.encoder} vectors in {time.perf_counter() - t0:.1f} s")
    rows = []
    with tempfile.TemporaryDirectory(prefix="sg-topic-tables-") as home:
        settings = dataclasses.replace(Settings.load(), home=Path(home))
        with spark_session(settings, master=args.master, connector=False) as spark:
            frame = spark.createDataFrame(pd.DataFrame({"id": snap.paper_ids, "title": titles,
                                                        "abstract": abstracts}))
            for seed in seeds:
                t0 = time.perf_counter()
                gensim_model = TopicModel(random_state=seed).fit([t for t in texts if t.strip()])
                gensim_s = time.perf_counter() - t0
                t0 = time.perf_counter()
                spark_model, _ = st.fit_topic_model(spark, frame, TopicModel(random_state=seed))
                spark_s = time.perf_counter() - t0
                for fit, model, seconds in (("gensim (in process)", gensim_model, gensim_s),
                                            ("Spark MLlib online", spark_model, spark_s)):
                    index = EvidenceIndex.build(snap, encoder=encoder, topic_model=model, seed=seed,
                                                text_vectors=text_vectors)
                    judgments = gold.judgments(index)
                    reco = RecoRank(seed=seed).fit(index)
                    results = ex.expertise_experiment(index, judgments, reco, bootstrap=args.bootstrap)
                    r = next(v for k, v in results.items() if k.startswith("RECO-Rank"))
                    rows.append((seed, fit, seconds, r.loss, r.low, r.high))
                    print(f"  seed {seed} {fit:20s} topic fit {seconds:5.1f} s  RECO-Rank loss {r.loss:.4f} "
                          f"[{r.low:.3f}, {r.high:.3f}]", flush=True)
                    if fit.startswith("gensim") and seed == seeds[0]:
                        print(ex.format_expertise_table(results, judgments))
    print("\n| seed | topic model | topic fit s | RECO-Rank loss | 95 % interval |")
    print("|---|---|---|---|---|")
    for seed, fit, seconds, loss, low, high in rows:
        print(f"| {seed} | {fit} | {seconds:.1f} | {loss:.4f} | [{low:.3f}, {high:.3f}] |")


if __name__ == "__main__":
    main()
