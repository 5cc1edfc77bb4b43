"""Benchmark IIRL rising-star prediction: feature extraction at scale, and the full evaluation on a world or a dump.

    python bench/rising_stars.py scale [--papers 1000000] [--world /tmp/synth1m] [--snapshot-cache FILE]
    python bench/rising_stars.py evaluate --synth 40000 [--seed 1] [--as-of 2020 --horizon 3] [--repeats 5]
    python bench/rising_stars.py evaluate --aminer ../shared/data/nips/nips-1987-1993.aminer.jsonl \\
        --as-of 1990 --horizon 3
    python bench/rising_stars.py hepth [--train-as-of 1994 --as-of 1997 --horizon 3] [--features 20] [--seeds 5]

`hepth` is the forward dev protocol on arXiv hep-th (../shared/data/hepth): IIRL and the baselines are
trained as of --train-as-of (labels in the next --horizon years) and rank the young researchers as of
--as-of, judged on the citations they receive in the --horizon years after it, self-citations excluded.
One LDA, fitted on the papers up to --as-of, gives both cohorts their topics.

`scale` generates the synthetic world once (kept in --world), builds the offline snapshot in a child
process (its own time and peak RSS; --snapshot-cache keeps it as a pickle for reruns: a scratch file,
never a model artefact), then extracts the 18 features of every young author, trains IIRL per topic
and scores. Topic inputs come from the world's `paper_topics.tsv` (the LDA fit is topics.py's cost).
Ratios are printed against two named baselines: 'one sparse pass' (citations per author, B·(Cᵀ·1):
touching every authorship and citation once, the least any feature pass can cost) and the snapshot build.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def _peak_rss_mb() -> float:
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _child(args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _worker_generate(papers: int, seed: int, out: str) -> None:
    from scholargraph.synth import SynthParams, generate

    t0 = time.perf_counter()
    generate(SynthParams(papers=papers, seed=seed), out)
    print(json.dumps({"seconds": time.perf_counter() - t0, "rss_mb": _peak_rss_mb()}))


def _worker_snapshot(corpus: str, cache: str) -> None:
    from scholargraph.ingest.offline import snapshot_from_files

    t0 = time.perf_counter()
    s = snapshot_from_files("aminer", [corpus], with_text=False)
    seconds = time.perf_counter() - t0
    with open(cache, "wb") as fh:
        pickle.dump(s, fh, protocol=5)
    print(json.dumps({"seconds": seconds, "rss_mb": _peak_rss_mb(), "papers": s.n_papers, "authors": s.n_authors,
                      "citations": int(s.citations.nnz), "authorships": int(s.authorship.nnz)}))


def world_topics(world: Path, snapshot, secondary_weight: float = 0.35) -> np.ndarray:
    """Per paper of `snapshot`: the world's true topic mix (primary, plus a secondary share when the paper
    has one); zeros for stubs. Stands in for an LDA fit at 1M papers."""
    with open(world / "world.json", encoding="ascii") as fh:
        n_topics = json.load(fh)["params"]["topics"]
    out = np.zeros((snapshot.n_papers, n_topics))
    index = snapshot.paper_index
    with open(world / "paper_topics.tsv", encoding="ascii") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            i = index.get(row["paper_id"])
            if i is None:
                continue
            if row["secondary_topic"] == "-":
                out[i, int(row["topic"])] = 1.0
            else:
                out[i, int(row["topic"])] = 1.0 - secondary_weight
                out[i, int(row["secondary_topic"])] = secondary_weight
    return out


def scale(args) -> None:
    world = Path(args.world)
    if not (world / "corpus.aminer.jsonl").exists():
        gen = _child(["--worker-generate", str(args.papers), str(args.seed), str(world)])
        print(f"world: generated {args.papers:,} papers in {gen['seconds']:.0f} s (peak RSS {gen['rss_mb']:.0f} MB)")
    with open(world / "world.json", encoding="ascii") as fh:
        params = json.load(fh)["params"]
    T, D = params["as_of"], params["horizon"]
    cache = Path(args.snapshot_cache) if args.snapshot_cache else Path(tempfile.mkdtemp()) / "snapshot.pkl"
    if cache.exists():
        print(f"snapshot: from cache {cache} (build not timed in this run)")
        built = None
    else:
        built = _child(["--worker-snapshot", str(world / "corpus.aminer.jsonl"), str(cache)])
        print(f"snapshot: built offline in {built['seconds']:.0f} s, peak RSS {built['rss_mb']:,.0f} MB "
              f"({built['papers']:,} papers, {built['authors']:,} authors, {built['citations']:,} citations, "
              f"{built['authorships']:,} authorships)")
    # Imported only now: a child forked from a process holding torch would report torch in its peak RSS
    # (Linux keeps ru_maxrss across fork and exec).
    from scholargraph.graph import topics as _topics  # noqa: F401  (gensim: an import, not feature work)
    from scholargraph.ranking.metrics import precision_at_k_percent
    from scholargraph.ranking.rising_stars.evaluate import split_authors
    from scholargraph.ranking.rising_stars.features import FEATURE_NAMES, build_dataset
    from scholargraph.ranking.rising_stars.iirl import IIRL

    t0 = time.perf_counter()
    with open(cache, "rb") as fh:
        s = pickle.load(fh)
    load_s = time.perf_counter() - t0
    if not args.snapshot_cache:
        cache.unlink()
    t0 = time.perf_counter()
    topics = world_topics(world, s)
    topics_s = time.perf_counter() - t0
    rss_before = _peak_rss_mb()

    # Baseline 'one sparse pass': citations per author over the whole graph.
    t0 = time.perf_counter()
    b = s.authorship.copy()
    b.data[:] = 1.0
    _ = b @ np.asarray(s.citations.sum(axis=0)).ravel()
    one_pass = time.perf_counter() - t0
    del b

    t0 = time.perf_counter()
    data = build_dataset(s, T, D, paper_topics=topics)
    extract = time.perf_counter() - t0
    rss_features = _peak_rss_mb()
    groups = data.topic_groups(3)
    train, test = split_authors(len(data), 0.3, 0)
    X, y = data.X, data.labels
    position = np.full(len(data), -1)
    position[train] = np.arange(len(train))
    t0 = time.perf_counter()
    model = IIRL(seed=0).fit(X[train], y[train], {t: position[np.intersect1d(r, train)] for t, r in groups.items()})
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    tests = {t: np.intersect1d(r, test) for t, r in groups.items()}
    scores = {t: model.score(X[rows], t) for t, rows in tests.items()}
    score_s = time.perf_counter() - t0
    col = FEATURE_NAMES.index("citation_increment_avg_2y")
    pre_iirl = np.mean([precision_at_k_percent(scores[t], y[rows], 10) for t, rows in tests.items() if len(rows)])
    pre_base2 = np.mean([precision_at_k_percent(X[rows, col], y[rows], 10) for t, rows in tests.items() if len(rows)])
    n_authors = len(data)
    print(f"\nrising stars as of {T} (horizon {D}) on {s.n_papers:,} paper nodes: {n_authors:,} young authors, "
          f"{int((y > 0).sum()):,} with a non-zero increment")
    print(f"  snapshot load {load_s:.1f} s; true topics {topics_s:.1f} s; peak RSS before features "
          f"{rss_before:,.0f} MB")
    print(f"  feature extraction (as-of cut, 18 features of all {s.n_authors:,} authors, labels, topic groups): "
          f"{extract:.1f} s, {n_authors / extract:,.0f} young authors/s, peak RSS {rss_features:,.0f} MB")
    for step, sec in data.timings.items():
        print(f"    {step:24s} {sec:7.2f} s")
    print(f"  IIRL fit ({len(train):,} training authors, {len(model.weights_)} models, λ chosen from "
          f"{model.params.l2_grid}): {fit_s:.1f} s; scoring {len(test):,} test authors per topic: {score_s:.2f} s")
    print(f"  sanity: mean-over-topics Pre@10% IIRL {pre_iirl:.3f} vs Base-2 {pre_base2:.3f}")
    print(f"  baseline 'one sparse pass' (B·(Cᵀ·1)): {one_pass:.2f} s -> feature extraction costs "
          f"{extract / one_pass:.0f}x one pass")
    if built:
        print(f"  baseline 'snapshot build' (offline, from the dump): {built['seconds']:.0f} s -> feature extraction "
              f"is {extract / built['seconds']:.2f}x of it")
    print(f"  peak RSS of this process: {_peak_rss_mb():,.0f} MB")


def evaluate_cmd(args) -> None:
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.rising_stars.evaluate import evaluate, format_report
    from scholargraph.ranking.rising_stars.features import build_dataset, fit_paper_topics

    t0 = time.perf_counter()
    if args.synth:
        world = Path(args.world or tempfile.mkdtemp(prefix="rs-eval-"))
        if not (world / "corpus.aminer.jsonl").exists():
            from scholargraph.synth import SynthParams, generate

            generate(SynthParams(papers=args.synth, seed=args.seed, as_of=args.as_of, horizon=args.horizon or 3), world)
        with open(world / "world.json", encoding="ascii") as fh:
            params = json.load(fh)["params"]
        T, D = params["as_of"], params["horizon"]
        corpus = world / "corpus.aminer.jsonl"
        label = f"synthetic world, {args.synth:,} papers, seed {args.seed}"
    else:
        corpus, T, D = Path(args.aminer), args.as_of, args.horizon or 3
        label = corpus.name
    s = snapshot_from_files("aminer", [str(corpus)])
    snap_s = time.perf_counter() - t0
    past = s.as_of(T)
    t0 = time.perf_counter()
    topics = fit_paper_topics(past, args.topics, workers=0, random_state=args.seed)
    topics_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    data = build_dataset(s, T, D, paper_topics=topics, past=past, window=args.window)
    feat_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    results = evaluate(data, repeats=args.repeats, seed=args.seed, test_size=args.test_size, plot_path=args.plot)
    eval_s = time.perf_counter() - t0
    print(f"{label}: {s.n_papers:,} paper nodes, as of {T}, horizon {D}; snapshot {snap_s:.1f} s, LDA "
          f"({args.topics} topics, papers up to {T}) {topics_s:.1f} s, features {feat_s:.1f} s, "
          f"evaluation {eval_s:.1f} s\n")
    print(format_report(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")


def hepth_cmd(args) -> None:
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.rising_stars.evaluate import (
        evaluate_forward,
        format_forward_report,
        label_noise_ceiling,
    )
    from scholargraph.ranking.rising_stars.features import build_dataset, citation_increment, fit_paper_topics
    from scholargraph.ranking.rising_stars.iirl import ALL, IIRL

    T0, T1, D = args.train_as_of, args.as_of, args.horizon
    if T0 + D > T1:
        raise SystemExit(f"training labels reach {T0 + D}, after the prediction year {T1}")
    t0 = time.perf_counter()
    s = snapshot_from_files("aminer", [args.data])
    now = s.as_of(T1)  # everything known when the prediction is made; training sees nothing later
    snap_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    topics = fit_paper_topics(now, args.topics, workers=0, random_state=args.lda_seed)
    topics_s = time.perf_counter() - t0
    external = args.features == 20
    t0 = time.perf_counter()
    train = build_dataset(now, T0, D, paper_topics=topics, past=now.as_of(T0), window=args.window,
                          external_features=external, labels_without_self_citations=not args.train_self_citations)
    test = build_dataset(s, T1, D, paper_topics=topics, past=now, window=args.window, external_features=external,
                         labels_without_self_citations=True)
    feat_s = time.perf_counter() - t0
    # Ceilings, reported beside the methods: hindsight knows the test years' citations of the papers
    # already out at T1 (what no feature can add is the papers written later); the oracle ω is IIRL fitted
    # on the test cohort's own labels (the best this linear family does, judged in-sample).
    hindsight = citation_increment(s, test.author_ids, T1, D, exclude_self_citations=True, cited_up_to=T1)
    oracle = IIRL(seed=0).fit(test.X, test.labels, feature_names=test.feature_names).score(test.X, ALL)
    references = {"hindsight: test-years citations of papers up to T1": hindsight,
                  "oracle ω fitted on test labels": oracle}
    t0 = time.perf_counter()
    results = evaluate_forward(train, test, seeds=list(range(args.seeds)), references=references,
                               ablation=not args.no_ablation, lightgbm=not args.no_lightgbm)
    eval_s = time.perf_counter() - t0
    results["label_noise_ceiling"] = label_noise_ceiling(test.labels, results["ks"])
    print(f"{Path(args.data).name}: {s.n_papers:,} papers, {s.n_authors:,} authors; snapshot {snap_s:.1f} s, LDA "
          f"({args.topics} topics on the {now.n_papers:,} papers up to {T1}, seed {args.lda_seed}) {topics_s:.1f} s, "
          f"features {feat_s:.1f} s, evaluation {eval_s:.1f} s\n")
    print(format_forward_report(results))
    noise = results["label_noise_ceiling"]
    print("\nLabel-noise ceiling (observed test labels ranking a Poisson redraw of themselves): "
          + ", ".join(f"Pre@{k}% {v:.3f}" for k, v in noise.items()))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker-generate":
        _worker_generate(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--worker-snapshot":
        _worker_snapshot(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sc = sub.add_parser("scale")
    sc.add_argument("--papers", type=int, default=1_000_000)
    sc.add_argument("--seed", type=int, default=0)
    sc.add_argument("--world", default="/tmp/synth1m")
    sc.add_argument("--snapshot-cache", default=None)
    ev = sub.add_parser("evaluate")
    src = ev.add_mutually_exclusive_group(required=True)
    src.add_argument("--synth", type=int, help="generate a synthetic world of this many papers")
    src.add_argument("--aminer", help="an AMiner JSON-lines dump")
    ev.add_argument("--world", help="keep (or reuse) the synthetic world here")
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--as-of", type=int, default=None)
    ev.add_argument("--horizon", type=int, default=None)
    ev.add_argument("--window", type=int, default=5)
    ev.add_argument("--topics", type=int, default=10)
    ev.add_argument("--repeats", type=int, default=5)
    ev.add_argument("--test-size", type=float, default=0.3)
    ev.add_argument("--plot", default=None)
    ev.add_argument("--json", default=None)
    hp = sub.add_parser("hepth", help="forward dev protocol on arXiv hep-th")
    hp.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "hepth" / "hepth-1992-2000.aminer.jsonl"))
    hp.add_argument("--train-as-of", type=int, default=1994)
    hp.add_argument("--as-of", type=int, default=1997)
    hp.add_argument("--horizon", type=int, default=3)
    hp.add_argument("--window", type=int, default=5)
    hp.add_argument("--topics", type=int, default=10)
    hp.add_argument("--lda-seed", type=int, default=0)
    hp.add_argument("--seeds", type=int, default=5, help="IIRL and LightGBM seeds 0..n-1")
    hp.add_argument("--features", type=int, choices=(18, 20), default=20,
                    help="18: the paper's; 20: plus F15/F16 without self-citations")
    hp.add_argument("--train-self-citations", action="store_true",
                    help="training labels count self-citations (the test labels never do)")
    hp.add_argument("--no-ablation", action="store_true")
    hp.add_argument("--no-lightgbm", action="store_true")
    hp.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.cmd == "scale":
        scale(args)
    elif args.cmd == "hepth":
        hepth_cmd(args)
    else:
        if args.aminer and args.as_of is None:
            ap.error("--aminer needs --as-of")
        evaluate_cmd(args)


if __name__ == "__main__":
    main()
