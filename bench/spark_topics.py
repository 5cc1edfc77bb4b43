"""LDA topics on Spark (spark/topics.py: the vocabulary counted in partitions, MLlib's online LDA) against the
in-process gensim fit, on the same real corpus and split, in the same run.

    .venv/bin/python bench/spark_topics.py [--corpus nips|hepth|acm] [--seeds 0,1,2] [--master local[2]]
        [--topics 10] [--out reviewers-topics/]

Each seed: the papers (in id order, as a snapshot has them) are split 90/10 at random; both fits read the same
90 %. Printed per fit: wall time, the vocabulary (Spark's must be gensim's: the same phrases, words and ids),
the held-out perplexity (2^-per-word bound; lower is better), and the UMass coherence
of the ten top words of each topic over the training bags (closer to 0 is better). Both models end as gensim
LdaModels over the same dictionary, so both measures are gensim's own code on both. With --out, each seed's two
models are saved there (DIR/gensim-seedN, DIR/spark-seedN) for the tables that read topics (bench/reviewers.py
--topic-model).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
CORPORA = {"nips": DATA / "nips" / "nips-1987-1993.aminer.jsonl",
           "hepth": DATA / "hepth" / "hepth-1992-2000.aminer.jsonl"}


def corpus_papers(name: str) -> list[tuple[str, str | None, str | None]]:
    """(id, title, abstract) of the corpus's papers in id order (stubs without text included, as a snapshot)."""
    if name == "acm":
        sys.path.insert(0, str(REPO / "bench"))
        from lda import ACM_DIR

        from scholargraph.errors import InvalidRecord
        from scholargraph.ingest import sources
        from scholargraph.ingest.normalize import Dropped, iter_raw, normalize

        papers: dict[str, tuple] = {}
        for path in sources.expand_inputs([str(ACM_DIR)], suffixes=(".bib",)):
            for raw in iter_raw("bibtex", path):
                try:
                    paper = normalize("bibtex", raw).paper
                except (InvalidRecord, Dropped):
                    continue
                papers[paper.id] = (paper.id, paper.title, paper.abstract)
        return [papers[k] for k in sorted(papers)]
    from scholargraph.graph.memory_store import InMemoryStore
    from scholargraph.graph.snapshot import GraphSnapshot
    from scholargraph.ingest.loader import ingest

    store = InMemoryStore()
    with tempfile.TemporaryDirectory() as work:
        ingest(store, "aminer", [str(CORPORA[name])], quarantine_path=Path(work) / "q",
               checkpoint_dir=Path(work) / "c", quiet=True)
    s = GraphSnapshot.from_store(store, with_text=True)
    return list(zip(s.paper_ids, s.titles or [None] * s.n_papers, s.abstracts or [None] * s.n_papers))


def quality(model, held_out: list[str], train: list[str]) -> dict[str, float]:
    from scholargraph.graph.topics import held_out_perplexity, umass_coherence

    return {"perplexity": held_out_perplexity(model, held_out), "umass": umass_coherence(model, train)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="nips", choices=["nips", "hepth", "acm"])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    import pandas as pd

    from scholargraph.config import Settings
    from scholargraph.graph.records import paper_text
    from scholargraph.graph.topics import TopicModel
    from scholargraph.spark import topics as st
    from scholargraph.spark.session import spark_session

    papers = corpus_papers(args.corpus)
    print(f"{args.corpus}: {len(papers):,} papers ({sum(1 for _, t, a in papers if t or a):,} with text); "
          f"{args.topics} topics; Spark {args.master}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="sg-spark-topics-") as home:
        settings = dataclasses.replace(Settings.load(), home=Path(home))
        with spark_session(settings, master=args.master, connector=False) as spark:
            for seed in [int(s) for s in args.seeds.split(",")]:
                rng = np.random.default_rng(seed)
                held = rng.random(len(papers)) < 0.1
                train = [p for p, h in zip(papers, held) if not h]
                test_texts = [paper_text(t, a) for (_, t, a), h in zip(papers, held) if h]
                train_texts = [paper_text(t, a) for _, t, a in train]
                t0 = time.perf_counter()
                ref = TopicModel(num_topics=args.topics, random_state=seed).fit(train_texts)
                ref_s = time.perf_counter() - t0
                frame = spark.createDataFrame(pd.DataFrame(train, columns=["id", "title", "abstract"]))
                t0 = time.perf_counter()
                ours, stages = st.fit_topic_model(spark, frame, TopicModel(num_topics=args.topics, random_state=seed))
                ours_s = time.perf_counter() - t0
                same_vocab = (ours.dictionary_.token2id == ref.dictionary_.token2id
                              and ours.phrases_.phrasegrams == ref.phrases_.phrasegrams)
                for name, model, seconds in (("gensim (in process)", ref, ref_s), ("Spark MLlib online", ours, ours_s)):
                    q = quality(model, test_texts, train_texts)
                    rows.append({"seed": seed, "fit": name, "seconds": seconds, **q})
                    print(f"  seed {seed} {name:20s} fit {seconds:6.1f} s  held-out perplexity "
                          f"{q['perplexity']:8.1f}  UMass {q['umass']:.3f}")
                print(f"  seed {seed} vocabulary: {len(ours.dictionary_):,} words, {len(ours.phrases_.phrasegrams):,} "
                      f"phrases; the same as gensim's: {same_vocab}; Spark stages "
                      + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()))
                if args.out:
                    ref.save(args.out / f"gensim-seed{seed}")
                    ours.save(args.out / f"spark-seed{seed}")
    print("\nmedians over seeds:")
    print("| fit | wall s | held-out perplexity | UMass |")
    print("|---|---|---|---|")
    for name in ("gensim (in process)", "Spark MLlib online"):
        mine = [r for r in rows if r["fit"] == name]
        print(f"| {name} | {statistics.median(r['seconds'] for r in mine):.1f} | "
              f"{statistics.median(r['perplexity'] for r in mine):.1f} "
              f"[{min(r['perplexity'] for r in mine):.1f}, {max(r['perplexity'] for r in mine):.1f}] | "
              f"{statistics.median(r['umass'] for r in mine):.3f} "
              f"[{min(r['umass'] for r in mine):.3f}, {max(r['umass'] for r in mine):.3f}] |")
    ratio = [b["perplexity"] / a["perplexity"] for a, b in zip(rows[::2], rows[1::2])]
    print(f"Spark / gensim held-out perplexity per seed: {', '.join(f'{r:.3f}' for r in ratio)}")


if __name__ == "__main__":
    main()
