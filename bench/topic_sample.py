"""A topic fit on a sample (`features --topic-sample N`) against the fit on every paper, on a real corpus.

    .venv/bin/python bench/topic_sample.py [--corpus acm|hepth|nips] [--samples 50000,20000,5000] [--seed 0]

The papers (id order, as a snapshot has them) are split 90/10 at random; the baseline fits gensim's LDA on the
whole 90 %, each sample fit on the papers of it that graph/topics.in_fit_sample draws (what `features` does with
--topic-sample). Every model is judged on the same held-out 10 % (perplexity, 2^-per-word bound: lower is better)
and by UMass coherence over the whole training 90 % (closer to 0 is better). Both are measured over each model's
own vocabulary, which a sample learns smaller (the dictionary's minimum document count is set by the documents
it reads): a model that drops the rarer words scores a lower perplexity without being better, so the two are
printed with the vocabulary's size and read together with it.

With --rising-stars (hep-th only), each fit is also judged by what reads it: the forward dev protocol of
bench/rising_stars.py (trained as of 1994, ranking the 1997 cohort, 20 features, IIRL seeds 0-2), its topics
fitted on the papers up to 1997 (all of them, or the sample of them), IIRL's overall and mean-over-topics Pre@k%.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="acm", choices=["acm", "hepth", "nips"])
    ap.add_argument("--samples", default="50000,20000,5000")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rising-stars", action="store_true", help="hep-th: the rising-star table of each fit")
    args = ap.parse_args()
    if args.rising_stars:
        if args.corpus != "hepth":
            ap.error("--rising-stars runs on hep-th (--corpus hepth)")
        rising_stars([int(s) for s in args.samples.split(",")], args.seed)
        return
    from spark_topics import corpus_papers, quality

    from scholargraph.graph.records import paper_text
    from scholargraph.graph.topics import TopicModel, fit_sample_fraction, in_fit_sample

    papers = corpus_papers(args.corpus)
    held = np.random.default_rng(args.seed).random(len(papers)) < 0.1
    train = [p for p, h in zip(papers, held) if not h]
    train_texts = [paper_text(t, a) for _, t, a in train]
    test_texts = [paper_text(t, a) for (_, t, a), h in zip(papers, held) if h]
    print(f"{args.corpus}: {len(papers):,} papers, {len(train):,} to train on, {len(test_texts):,} held out")
    rows = []
    for sample in [None, *(int(s) for s in args.samples.split(","))]:
        fraction = fit_sample_fraction(sample, len(train))
        keep = np.ones(len(train), bool) if fraction is None else in_fit_sample([p for p, _, _ in train], fraction,
                                                                               args.seed)
        texts = [t for t, k in zip(train_texts, keep) if k]
        t0 = time.perf_counter()
        model = TopicModel(num_topics=10, random_state=args.seed).fit(texts)
        seconds = time.perf_counter() - t0
        q = quality(model, test_texts, train_texts)
        rows.append((sample, len(texts), seconds, len(model.dictionary_), q["perplexity"], q["umass"]))
        print(f"  fit on {len(texts):>7,} papers: {seconds:6.1f} s, {len(model.dictionary_):,} words, held-out "
              f"perplexity {q['perplexity']:8.1f}, UMass {q['umass']:.3f}", flush=True)
    base = rows[0]
    print("\n| fit reads | papers | fit s | fit time / all | vocabulary | held-out perplexity | UMass |")
    print("|---|---|---|---|---|---|---|")
    for sample, n, seconds, words, perplexity, umass in rows:
        label = "every paper (baseline)" if sample is None else f"--topic-sample {sample:,}"
        print(f"| {label} | {n:,} | {seconds:.1f} | {seconds / base[2]:.2f}x | {words:,} | {perplexity:.1f} | "
              f"{umass:.3f} |")


def rising_stars(samples: list[int], seed: int) -> None:
    from spark_topic_tables import DATA, KS

    from scholargraph.graph.topics import TopicModel, fit_sample_fraction, in_fit_sample
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.rising_stars.evaluate import evaluate_forward
    from scholargraph.ranking.rising_stars.features import build_dataset, fit_paper_topics

    hepth = snapshot_from_files("aminer", [str(DATA / "hepth" / "hepth-1992-2000.aminer.jsonl")])
    now = hepth.as_of(1997)
    texts = [now.text(i) for i in range(now.n_papers)]
    print(f"hep-th up to 1997: {now.n_papers:,} papers")
    print("| topic fit reads | papers | fit s | IIRL overall " + " | ".join(f"Pre@{k}%" for k in KS)
          + " | IIRL topics " + " | ".join(f"Pre@{k}%" for k in KS) + " |")
    print("|---|---|---|" + "---|" * (2 * len(KS)))
    for sample in [None, *samples]:
        fraction = fit_sample_fraction(sample, now.n_papers)
        keep = np.ones(now.n_papers, bool) if fraction is None else in_fit_sample(now.paper_ids, fraction, seed)
        t0 = time.perf_counter()
        model = TopicModel(num_topics=10, random_state=seed).fit([t for t, k in zip(texts, keep) if k])
        seconds = time.perf_counter() - t0
        options = {"paper_topics": fit_paper_topics(now, fitted=model), "external_features": True,
                   "labels_without_self_citations": True}
        train = build_dataset(now, 1994, 3, past=now.as_of(1994), **options)
        test = build_dataset(hepth, 1997, 3, past=now, **options)
        iirl = evaluate_forward(train, test, ks=KS, seeds=[0, 1, 2], ablation=False, lightgbm=False)["main"]["IIRL"]
        label = "every paper (baseline)" if sample is None else f"--topic-sample {sample:,}"
        print(f"| {label} | {int(keep.sum()):,} | {seconds:.1f} | "
              + " | ".join(f"{iirl['overall'][k]:.3f}" for k in KS) + " | "
              + " | ".join(f"{iirl['topics'][k]:.3f}" for k in KS) + " |", flush=True)


if __name__ == "__main__":
    main()
