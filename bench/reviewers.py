"""Reviewer recommendation: evaluations (synthetic, NIPS, ACM-CR) and the latency benchmark against brute force.

    python bench/reviewers.py synthetic --papers 25000 --out out/reviewers
    python bench/reviewers.py nips --out out/reviewers
    python bench/reviewers.py acm --out out/reviewers
    python bench/reviewers.py latency --world /tmp/synth1m --pool 10000 --queries 100

Each evaluation prints its table (Soft/Hard P@5/P@10, RECO-Rank and ablations, CoF, semantic baselines),
and writes JSON and a PNG chart to --out. Features (text vectors, topics, citation vectors) are cached
under --cache so that reruns skip the encoder and LDA fits.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
P50_TARGET_MS = 200.0
P95_TARGET_MS = 1000.0


def _peak_rss_mb() -> float:
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def build_index(snapshot, cache: Path, *, until_year: int | None = None, fit_sample: int = 200_000,
                num_topics: int = 10, topic_sample: int | None = None, lexical_on: bool = True):
    """EvidenceIndex with its features cached in `cache` (text/topic/citation .npy, lexical .npz, encoder,
    topic model)."""
    import scipy.sparse as sp

    from scholargraph.graph.topics import TopicModel
    from scholargraph.ranking.graph_models import load_graph_models
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex, lexical_matrix

    files = [cache / n for n in ("text.npy", "topics.npy", "cvec.npy", "encoder", "topics")]
    lex_file = cache / "lexical.npz"
    if all(f.exists() for f in files):
        _log(f"features from {cache}")
        _, encoder = load_graph_models(paths={"encoder": str(files[3])})
        lexical = None
        if lexical_on:
            if lex_file.exists():
                lexical = sp.load_npz(lex_file)
            else:
                t0 = time.perf_counter()
                lexical = lexical_matrix(snapshot, encoder)
                _log(f"lexical rows in {time.perf_counter() - t0:.0f} s")
                if lexical is not None:
                    sp.save_npz(lex_file, lexical)
        return EvidenceIndex(snapshot, np.load(files[0]), np.load(files[1]), np.load(files[2]),
                             encoder=encoder, topic_model=TopicModel.load(files[4]), lexical=lexical)
    t0 = time.perf_counter()
    topic_model = None
    if topic_sample is not None:
        # LDA on a sample: the topic model is the slowest fit and a sample of this size is enough for K topics.
        texts = [snapshot.text(i) for i in range(snapshot.n_papers)]
        ok = np.array([bool(t) for t in texts])
        if until_year is not None:
            y = np.asarray(snapshot.paper_year)
            ok &= (y < 0) | (y <= until_year)
        ok = np.flatnonzero(ok)
        rng = np.random.default_rng(0)
        pick = np.sort(rng.choice(ok, min(topic_sample, len(ok)), replace=False))
        topic_model = TopicModel(num_topics=num_topics).fit([texts[i] for i in pick])
    index = EvidenceIndex.build(snapshot, num_topics=num_topics, fit_sample=fit_sample, until_year=until_year,
                                topic_model=topic_model, lexical=lexical_on)
    _log(f"features fitted in {time.perf_counter() - t0:.0f} s")
    cache.mkdir(parents=True, exist_ok=True)
    np.save(files[0], index.text)
    np.save(files[1], index.topics)
    np.save(files[2], index.cvec)
    index.encoder.save(files[3])
    index.topic_model.save(files[4])
    if index.lexical is not None:
        sp.save_npz(lex_file, index.lexical)
    return index


def minilm_vectors(snapshot, path: Path) -> np.ndarray:
    """all-MiniLM-L6-v2 vectors of every paper (cached): the pretrained embedding baseline."""
    if path.exists():
        return np.load(path)
    from scholargraph.graph.vectors import make_encoder, text_vectors

    t0 = time.perf_counter()
    vecs = text_vectors(snapshot, make_encoder("minilm").fit([]))
    _log(f"MiniLM vectors of {snapshot.n_papers} papers in {time.perf_counter() - t0:.0f} s")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vecs)
    return vecs


def graph_text_vectors(snapshot, encoder) -> np.ndarray:
    """The text vectors `features` stored with this (pretrained) encoder in the graph that SCHOLARGRAPH_*
    names, aligned with `snapshot`'s papers; the papers the graph has no vector of are encoded here. A
    pretrained encoder's vector of a text does not depend on the year: reading it is no leak."""
    from scholargraph.config import Settings
    from scholargraph.graph.snapshot import GraphSnapshot
    from scholargraph.server.connect import open_store

    with open_store(Settings.load()) as store:
        graph = GraphSnapshot.from_store(store, with_text=True, with_vectors=True, semantic_encoder=encoder.key)
    out = np.zeros((snapshot.n_papers, encoder.dim), dtype=np.float32)
    if graph.semantic_vectors is not None and graph.semantic_encoder == encoder.key:
        for i, pid in enumerate(snapshot.paper_ids):
            j = graph.paper_index.get(pid)
            if j is not None and graph.text(j) == snapshot.text(i):
                out[i] = graph.semantic_vectors[j]
    todo = [i for i in range(snapshot.n_papers) if not out[i].any() and snapshot.text(i).strip()]
    _log(f"text vectors: {snapshot.n_papers - len(todo):,} from the graph ({encoder.key}), {len(todo):,} encoded here")
    if todo:
        titles, abstracts = snapshot.text_fields()
        out[todo] = encoder.encode_fields([titles[i] for i in todo], [abstracts[i] for i in todo])
    return out


def role_ranks(run: dict, roles: dict) -> dict:
    """Mean rank (1-based) per candidate role, for synthetic worlds (reviewers.roles.tsv)."""
    acc: dict[str, list[int]] = {}
    for q, ranked in run.items():
        for pos, (a, _) in enumerate(ranked, start=1):
            if (q, a) in roles:
                acc.setdefault(roles[(q, a)], []).append(pos)
    return {r: float(np.mean(v)) for r, v in sorted(acc.items())}


def _write(exp, out: Path, name: str) -> None:
    from scholargraph.ranking.reviewers.evaluate import plot_results

    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps({"title": exp.title, "results": exp.results, "info": exp.info},
                                                 indent=1), encoding="utf-8")
    plot_results([exp], str(out / f"{name}.png"))
    (out / f"{name}.txt").write_text(exp.table() + "\n", encoding="utf-8")
    print(exp.table(), flush=True)


def cmd_synthetic(args) -> None:
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.reviewers.cof import CoF
    from scholargraph.ranking.reviewers.evaluate import (
        cof_ranker,
        model_ranker,
        run_ranker,
        synthetic_experiment,
    )
    from scholargraph.synth import SynthParams, generate

    roles = "" if (args.experts, args.cross_experts) == (6, 2) else f"-e{args.experts}x{args.cross_experts}"
    world = Path(args.world or f"/tmp/reco/synth{args.papers // 1000}k{roles}")
    if not (world / "reviewers.qrels").exists():
        _log(f"generating {args.papers} papers in {world}")
        generate(SynthParams(papers=args.papers, seed=args.seed, reviewer_experts=args.experts,
                             reviewer_cross_experts=args.cross_experts), world)
    snap = snapshot_from_files("aminer", [str(world / "corpus.aminer.jsonl")])
    _log(f"snapshot: {snap.n_papers} papers, {snap.n_authors} authors")
    index = build_index(snap, Path(args.cache) / world.name)
    exp = synthetic_experiment(index, str(world), seeds=tuple(range(args.seeds)), training_queries=args.training)
    roles = {}
    with open(world / "reviewers.roles.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            p = line.split("\t")
            roles[(p[0], p[1])] = p[2]
    j = exp.judgments
    pool = j.pool(index)
    exp.info["mean_rank_by_role"] = {
        "RECO-Rank": role_ranks(run_ranker(model_ranker(exp.models["RECO-Rank"][0], index, pool), j, pool), roles),
        "CoF": role_ranks(run_ranker(cof_ranker(CoF(), index, pool), j, pool), roles)}
    _write(exp, Path(args.out), f"synthetic-{world.name}")


def cmd_heldout(args, name: str) -> None:
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.reviewers.evaluate import heldout_experiment

    if name == "nips":
        snap = snapshot_from_files("aminer", [str(SHARED / "nips" / "nips-1987-1993.aminer.jsonl")])
        test_year, min_papers, topics, label = args.test_year or 1993, args.min_papers or 2, 10, "NIPS 1987-1993"
    elif name == "hepth":
        snap = snapshot_from_files("aminer", [str(SHARED / "hepth" / "hepth-1992-2000.aminer.jsonl")])
        test_year, min_papers, topics, label = args.test_year or 2000, args.min_papers or 3, 20, "hep-th 1992-2000"
    else:
        snap = snapshot_from_files("bibtex", [str(SHARED / "acm-cr" / "acm-dl")])
        test_year, min_papers, topics, label = args.test_year or 2020, args.min_papers or 3, 20, "ACM-CR"
    _log(f"{label}: {snap.n_papers} papers, {snap.n_authors} authors, {snap.citations.nnz} citations")
    if args.encoder == "tfidf-svd":
        index = build_index(snap, Path(args.cache) / f"{name}-{test_year}", until_year=test_year - 1,
                            num_topics=topics, topic_sample=args.topic_sample)
    else:  # a pretrained encoder: nothing is fitted on the test year, so no cache is needed to avoid leaks
        from scholargraph.graph.vectors import make_encoder
        from scholargraph.ranking.reviewers.evidence import EvidenceIndex

        encoder = make_encoder(args.encoder).fit()
        stored = graph_text_vectors(snap, encoder) if args.vectors_from_graph else None
        index = EvidenceIndex.build(snap, encoder=encoder, until_year=test_year - 1, num_topics=topics,
                                    text_vectors=stored)
    label += f" ({args.encoder} evidence)"
    extra = {}
    if args.minilm:
        from scholargraph.ranking.reviewers.evaluate import EmbeddingRanker

        vecs = minilm_vectors(snap, Path(args.cache) / f"{name}-{test_year}" / "minilm.npy")
        extra["MiniLM (all-MiniLM-L6-v2)"] = lambda idx, pool: EmbeddingRanker(idx, pool, vectors=vecs)
    exp = heldout_experiment(index, test_year, n_queries=args.queries, min_papers=min_papers,
                             seeds=tuple(range(args.seeds)), training_queries=args.training,
                             title=f"{label}: held-out authors of {test_year} papers", extra_rankers=extra)
    exp.info["papers"] = snap.n_papers
    exp.info["citations"] = int(snap.citations.nnz)
    _write(exp, Path(args.out), f"heldout-{name}")


def cmd_latency(args) -> None:
    """Per-query latency with a large reviewer pool, two-stage (default) against brute force (every
    reviewer through the full model), after warm-up; batch throughput; peak RSS."""
    import torch

    from scholargraph.conference.submissions import ReviewerPool
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.reviewers.reco_rank import RecoRank
    from scholargraph.ranking.reviewers.training import self_supervised_queries

    torch.set_num_threads(args.threads)
    world = Path(args.world)
    t0 = time.perf_counter()
    snap = snapshot_from_files("aminer", [str(world / "corpus.aminer.jsonl")])
    _log(f"snapshot {snap.n_papers:,} papers, {snap.n_authors:,} authors in {time.perf_counter() - t0:.0f} s, "
         f"rss {_peak_rss_mb():.0f} MB")
    index = build_index(snap, Path(args.cache) / world.name, fit_sample=args.fit_sample,
                        topic_sample=args.topic_sample)
    _log(f"index ready, rss {_peak_rss_mb():.0f} MB")
    rng = np.random.default_rng(0)
    eligible = ReviewerPool.from_snapshot(snap, min_papers=args.min_papers)
    pick = np.sort(rng.choice(len(eligible), min(args.pool, len(eligible)), replace=False))
    pool = ReviewerPool.from_snapshot(snap, author_ids=[eligible.author_ids[i] for i in pick])
    _log(f"pool: {len(pool):,} reviewers of {len(eligible):,} with >= {args.min_papers} papers, "
         f"{pool.papers.nnz:,} papers")
    if args.model and (Path(args.model) / "config.json").exists():
        model = RecoRank.load(args.model)
    else:
        model = RecoRank(steps=args.steps).fit(index, eligible,
                                               training=self_supervised_queries(index, eligible, args.training))
        if args.model:
            model.save(args.model)
    queries = index.read_queries(str(world / "reviewers.queries.jsonl"))[: args.queries]
    for q in queries[:3]:  # warm-up (also builds the pool's feature copies and the COI name index)
        model.recommend(index, q, pool, k=10)

    def timed(shortlist):
        times, tops = [], []
        for q in queries:
            t = time.perf_counter()
            sugg = model.recommend(index, q, pool, k=10, shortlist=shortlist)
            times.append(1000 * (time.perf_counter() - t))
            tops.append([s.reviewer_id for s in sugg])
        return np.array(times), tops

    shortlists = [int(x) for x in str(args.shortlist).split(",")]
    brute_ms, brute_top = timed(None)
    sweep = {}
    for sl in shortlists:
        ms, top = timed(sl)
        sweep[sl] = {"p50": float(np.percentile(ms, 50)), "p95": float(np.percentile(ms, 95)),
                     "top10_overlap_with_brute_force": float(np.mean([len(set(a) & set(b)) / 10
                                                                       for a, b in zip(top, brute_top)]))}
        if sl == shortlists[0]:
            fast_ms = ms
    overlap = sweep[shortlists[0]]["top10_overlap_with_brute_force"]
    # Batch throughput: score a batch of queries back to back (evidence + model, no explanations).
    t = time.perf_counter()
    for q in queries:
        model.recommend(index, q, pool, k=10, shortlist=shortlists[0], papers_per_reviewer=0)
    qps = len(queries) / (time.perf_counter() - t)
    res = {
        "papers": snap.n_papers, "authors": snap.n_authors, "pool": len(pool), "pool_papers": int(pool.papers.nnz),
        "queries": len(queries), "shortlist": shortlists[0], "threads": args.threads, "shortlist_sweep": sweep,
        "two_stage_ms": {"p50": float(np.percentile(fast_ms, 50)), "p95": float(np.percentile(fast_ms, 95)),
                         "mean": float(fast_ms.mean())},
        "brute_force_ms": {"p50": float(np.percentile(brute_ms, 50)), "p95": float(np.percentile(brute_ms, 95)),
                           "mean": float(brute_ms.mean())},
        "speedup_p50": float(np.percentile(brute_ms, 50) / np.percentile(fast_ms, 50)),
        "top10_overlap_with_brute_force": float(overlap), "batch_queries_per_s": qps,
        "peak_rss_mb": _peak_rss_mb(),
    }
    res["targets_met"] = res["two_stage_ms"]["p50"] < P50_TARGET_MS and res["two_stage_ms"]["p95"] < P95_TARGET_MS
    print(json.dumps(res, indent=1), flush=True)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "latency.json").write_text(json.dumps(res, indent=1), encoding="utf-8")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("synthetic", "nips", "acm", "hepth", "latency"):
        p = sub.add_parser(name)
        p.add_argument("--out", default="out/reviewers")
        p.add_argument("--cache", default="/tmp/reco/cache")
        p.add_argument("--seeds", type=int, default=3)
        p.add_argument("--training", type=int, default=600, help="self-supervised training queries")
        p.add_argument("--queries", type=int, default=200)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--topic-sample", type=int, default=None)
        if name == "synthetic":
            p.add_argument("--papers", type=int, default=25_000)
            p.add_argument("--world", default=None)
            p.add_argument("--experts", type=int, default=6,
                           help="same-vocabulary deep experts among each submission's candidates")
            p.add_argument("--cross-experts", type=int, default=2,
                           help="planted cross-domain experts of each kind among each submission's candidates")
        if name in ("nips", "acm", "hepth"):
            p.add_argument("--encoder", default="tfidf-svd", help="evidence text encoder (tfidf-svd, minilm, ...)")
            p.add_argument("--test-year", type=int, default=None)
            p.add_argument("--min-papers", type=int, default=None)
            p.add_argument("--minilm", action="store_true", help="add the pretrained MiniLM embedding baseline")
            p.add_argument("--vectors-from-graph", action="store_true",
                           help="a pretrained --encoder's text vectors from the graph `features` wrote (SCHOLARGRAPH_* "
                                "settings), not encoded again")
        if name == "latency":
            p.add_argument("--world", default="/tmp/synth1m")
            p.add_argument("--pool", type=int, default=10_000)
            p.add_argument("--min-papers", type=int, default=5)
            p.add_argument("--shortlist", default="500", help="first-stage sizes, comma-separated (first: default)")
            p.add_argument("--threads", type=int, default=1)
            p.add_argument("--steps", type=int, default=300)
            p.add_argument("--fit-sample", type=int, default=200_000)
            p.add_argument("--model", default="/tmp/reco/model-latency")
    args = ap.parse_args(argv)
    if args.cmd == "synthetic":
        cmd_synthetic(args)
    elif args.cmd in ("nips", "acm", "hepth"):
        cmd_heldout(args, args.cmd)
    else:
        cmd_latency(args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
