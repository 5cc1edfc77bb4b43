"""Citation recommendation benchmarks: synthetic time split + held-out queries, ACM-CR dev, and scale (1M).

    python bench/citations.py synth  [--world /tmp/synth100k] [--papers 100000] [--split-year 2020] [--queries 1000]
    python bench/citations.py acm    [--data ../shared/data/acm-cr]
    python bench/citations.py hepth  [--data ../shared/data/hepth] [--as-of 1999]
    python bench/citations.py scale  [--world /tmp/cite-synth1m] [--papers 1000000] [--queries 200]

Each prints its tables and writes the numbers as JSON (--out). Baselines are named in every table: BM25 (bm25s)
for quality, brute-force cosine over all papers for search latency.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _threads(n: int) -> None:
    """The benches run on shared machines: one thread each avoids oversubscription (several times slower)."""
    import torch

    torch.set_num_threads(n)


def _table(title: str, results: dict[str, dict[str, float]], ks=(20, 100)) -> str:
    cols = [f"f1@{ks[0]}", "mrr"] + [f"recall@{k}" for k in ks] + ["ms_per_query"]
    lines = [f"\n{title}", "| system | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, m in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{m.get(c, float('nan')):.4f}" if c != "ms_per_query"
                                                 else f"{m.get(c, float('nan')):.1f}" for c in cols) + " |")
    return "\n".join(lines)


def _ensure_world(world: Path, papers: int, seed: int) -> Path:
    from scholargraph.synth import SynthParams, generate

    if not (world / "corpus.aminer.jsonl").exists():
        print(f"generating a {papers:,}-paper world in {world} ...", flush=True)
        t0 = time.perf_counter()
        generate(SynthParams(papers=papers, seed=seed), world)
        print(f"  {time.perf_counter() - t0:.0f} s", flush=True)
    return world


def _popularity_run(rec, queries, depth: int) -> dict[str, list[str]]:
    """Diagnostic, not a model: NNSelect's candidates ordered by in-corpus citation count (no text at all
    beyond choosing the candidates). Shows how much of a world's citations popularity alone explains."""
    corpus = rec.selector.corpus_
    ids = corpus.snapshot.paper_ids
    run = {}
    for q in queries:
        found = rec.selector.candidates(q.title, q.abstract, q.year, (q.id,))
        order = np.argsort(-corpus.cited_count[found.indexes], kind="stable")
        run[q.id] = [ids[i] for i in found.indexes[order][:depth]]
    return run


# --- synthetic ---------------------------------------------------------------------------------------


def cmd_synth(args) -> dict:
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.citations.bm25 import BM25
    from scholargraph.ranking.citations.nnrank import NNRank
    from scholargraph.ranking.citations.nnselect import NNSelect
    from scholargraph.ranking.citations.recommender import (
        CitationRecommender,
        read_queries,
        score_run,
        time_split_queries,
    )
    from scholargraph.ranking.metrics import read_qrels

    world = _ensure_world(Path(args.world), args.papers, args.seed)
    t0 = time.perf_counter()
    snap = snapshot_from_files("aminer", [str(world / "corpus.aminer.jsonl")])
    load_s = time.perf_counter() - t0
    split = time_split_queries(snap, args.split_year, max_queries=args.queries, seed=args.seed)
    print(f"{snap.n_papers:,} papers ({load_s:.0f} s to load); as of {args.split_year}: "
          f"{split.train.n_papers:,}; {len(split.queries)} time-split queries", flush=True)
    selector = NNSelect(**json.loads(args.nnselect))
    ranker = NNRank(**json.loads(args.nnrank))
    t0 = time.perf_counter()
    rec = CitationRecommender(selector, ranker, BM25(), ranker_years=args.ranker_years, fusion=args.rrf_k).fit(
        snap, as_of=args.split_year, quiet=args.quiet)
    train_s = time.perf_counter() - t0
    print(f"trained in {train_s:.0f} s", flush=True)
    ks = (20, 100)
    time_split = rec.evaluate(split.queries, split.qrels, ks)
    time_split["popularity (diagnostic)"] = score_run(_popularity_run(rec, split.queries, max(ks)), split.qrels, ks)
    print(_table(f"time split at {args.split_year}: {len(split.queries)} queries (papers after it), "
                 f"gold = their references up to {args.split_year}", time_split), flush=True)
    # The world's own held-out queries: the same models (trained as of the split year) over the whole corpus.
    rec.selector.index_snapshot(snap)
    rec.baseline = BM25().fit(snap)
    queries = read_queries(world / "citations.queries.jsonl")
    qrels = read_qrels(str(world / "citations.qrels"))
    held_out = rec.evaluate(queries, qrels, ks)
    held_out["popularity (diagnostic)"] = score_run(_popularity_run(rec, queries, max(ks)), qrels, ks)
    print(_table(f"held-out citations.queries.jsonl ({len(queries)} queries), index = whole corpus", held_out))
    return {"papers": snap.n_papers, "split_year": args.split_year, "train_seconds": train_s,
            "nnselect": {"params": asdict(selector.params), "history": selector.history_},
            "nnrank": {"params": asdict(ranker.params), "history": ranker.history_},
            "time_split": time_split, "held_out": held_out, "peak_rss_mb": _peak_rss_mb()}


# --- ACM-CR --------------------------------------------------------------------------------------------


def _acm_keywords(root: Path) -> dict[str, list[str]]:
    """Author keywords per paper id (lower-cased DOI), read from the BibTeX (the snapshot does not keep them)."""
    from scholargraph.graph.records import normalize_doi
    from scholargraph.ingest import sources
    from scholargraph.ingest.normalize import iter_raw

    out: dict[str, list[str]] = {}
    for path in sources.expand_inputs([str(root)]):
        for raw in iter_raw("bibtex", path):
            data = getattr(raw, "data", None) or {}
            doi = normalize_doi(data.get("doi")) or normalize_doi(data.get("url"))
            if doi and data.get("keywords"):
                out[doi] = [k.strip() for k in data["keywords"].split(",") if k.strip()]
    return out


def cmd_acm(args) -> dict:
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.citations.bm25 import BM25
    from scholargraph.ranking.citations.nnrank import NNRank
    from scholargraph.ranking.citations.nnselect import NNSelect
    from scholargraph.ranking.citations.recommender import (
        CitationRecommender,
        read_queries,
        weak_citation_graph,
    )
    from scholargraph.ranking.metrics import read_qrels

    data = Path(args.data)
    t0 = time.perf_counter()
    snap = snapshot_from_files("bibtex", [str(data / "acm-dl")])
    keywords = _acm_keywords(data / "acm-dl")
    queries = read_queries(data / "queries-dev.jsonl")
    qrels = read_qrels(str(data / "qrels-dev.txt"))
    print(f"{snap.n_papers:,} papers, {len(keywords):,} with keywords, {snap.citations.nnz} citations; "
          f"{len(queries)} dev queries ({time.perf_counter() - t0:.0f} s)", flush=True)
    t0 = time.perf_counter()
    weak = weak_citation_graph(snap, keywords)
    citing = int((np.diff(weak.citations.indptr) > 0).sum())
    print(f"pseudo-citation graph: {weak.citations.nnz:,} links from {citing:,} papers "
          f"({time.perf_counter() - t0:.0f} s)", flush=True)
    in_collection = [weak.paper_index[q.id] for q in queries if q.id in weak.paper_index]
    selector = NNSelect(**json.loads(args.nnselect))
    ranker = NNRank(**json.loads(args.nnrank))
    t0 = time.perf_counter()
    rec = CitationRecommender(selector, ranker, BM25(), ranker_years=args.ranker_years, fusion=args.rrf_k).fit(
        weak, exclude_queries=in_collection, quiet=args.quiet)
    train_s = time.perf_counter() - t0
    ks = (20, 100)
    results = rec.evaluate(queries, qrels, ks)
    print(_table(f"ACM-CR dev ({len(queries)} queries; candidates = the {snap.n_papers:,} ACM-CR papers; "
                 f"models trained on the pseudo-citation graph, {train_s:.0f} s)", results), flush=True)
    q = queries[0]
    print(f"\nexample: {q.title} ({q.year})")
    for r in rec.recommend(q.title, q.abstract, q.year, (q.id,), k=5):
        hit = "*" if snap.paper_ids[r.paper_index] in qrels.get(q.id, {}) else " "
        print(f" {hit} {r.score:.3f} {snap.paper_year[r.paper_index]} {snap.titles[r.paper_index][:70]!r} "
              f"shared: {', '.join(r.explanation)}")
    return {"papers": snap.n_papers, "weak_links": int(weak.citations.nnz), "train_seconds": train_s,
            "nnselect": {"params": asdict(selector.params), "history": selector.history_},
            "nnrank": {"params": asdict(ranker.params), "history": ranker.history_}, "dev": results}


# --- hep-th -------------------------------------------------------------------------------------------


def cmd_hepth(args) -> dict:
    """Citeomatic's time split on a real citation graph: the collection and the models are the papers up to
    `--as-of`, the dev queries (papers of the next year) give only their title and abstract."""
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.citations.bm25 import BM25
    from scholargraph.ranking.citations.nnrank import NNRank
    from scholargraph.ranking.citations.nnselect import NNSelect
    from scholargraph.ranking.citations.recommender import (
        CitationRecommender,
        Query,
        read_queries,
    )
    from scholargraph.ranking.metrics import read_qrels

    data = Path(args.data)
    t0 = time.perf_counter()
    snap = snapshot_from_files("aminer", [str(data / "hepth-1992-2000.aminer.jsonl")])
    # The dump's own ids are bare arXiv ids; the graph's are qualified with the source.
    queries = [Query(f"aminer:{q.id}", q.title, q.abstract, q.year)
               for q in read_queries(data / "citation-queries-dev.jsonl")]
    qrels = {f"aminer:{q}": {f"aminer:{d}": g for d, g in docs.items()}
             for q, docs in read_qrels(str(data / "citation-qrels-dev.txt")).items()}
    if args.queries:
        queries = queries[:args.queries]
    print(f"{snap.n_papers:,} papers, {snap.citations.nnz:,} citations; {len(queries)} dev queries "
          f"({time.perf_counter() - t0:.0f} s)", flush=True)
    selector = NNSelect(**json.loads(args.nnselect))
    encoder = None
    if not args.no_encoder and not args.no_ranker:  # as `citations train` does on a graph with MiniLM vectors
        encoder, vectors = _minilm_vectors(snap, Path(args.minilm_cache))
        snap = dataclasses.replace(snap, semantic_vectors=vectors, semantic_encoder=encoder.key)
    ranker = None if args.no_ranker else NNRank(**{"use_encoder": encoder is not None, **json.loads(args.nnrank)})
    t0 = time.perf_counter()
    rec = CitationRecommender(selector, ranker, BM25(), ranker_years=args.ranker_years, fusion=args.rrf_k,
                              encoder=encoder if ranker is not None and ranker.params.use_encoder else None).fit(
        snap, as_of=args.as_of, quiet=args.quiet)
    validation = getattr(rec, "fusion_validation_", None)
    if validation is not None:
        where = (f"drafts of {args.as_of} over a model as of {validation['model_as_of']}" if "model_as_of" in validation
                 else f"held-out drafts of {args.as_of}")
        print(f"fusion chosen on {validation['queries']} {where}: rrf_k "
              f"{validation['choice']}; F1@20 / MRR per choice: "
              + ", ".join(f"{c} {m['f1@20']:.4f} / {m['mrr']:.4f}" for c, m in validation["scores"].items()),
              flush=True)
    train_s = time.perf_counter() - t0
    load_s = _load_seconds(rec)
    results = rec.evaluate(queries, qrels, (20, 100))
    if args.minilm:
        results.update(_minilm_rows(rec, queries, qrels, Path(args.minilm_cache)))
    bm25 = results["bm25"]
    best = max((r for r in results if r != "bm25"), key=lambda r: results[r]["f1@20"])
    print(_table(f"hep-th dev ({len(queries)} queries of {args.as_of + 1}; collection and models as of "
                 f"{args.as_of}: {rec.snapshot.n_papers:,} papers; trained in {train_s:.0f} s, peak RSS "
                 f"{_peak_rss_mb():.0f} MB)", results), flush=True)
    print(f"{best}: F1@20 {results[best]['f1@20'] / bm25['f1@20']:.2f} x BM25 ({results[best]['f1@20']:.4f} against "
          f"{bm25['f1@20']:.4f}), MRR {results[best]['mrr'] / bm25['mrr']:.2f} x ({results[best]['mrr']:.4f} against "
          f"{bm25['mrr']:.4f}); nnselect alone {results['nnselect']['f1@20'] / bm25['f1@20']:.2f} x BM25's "
          "F1@20",
          flush=True)
    print(f"training {train_s:.0f} s, peak RSS {_peak_rss_mb():.0f} MB; the saved model loads and indexes the "
          f"collection in {load_s:.1f} s", flush=True)
    return {"papers": rec.snapshot.n_papers, "train_seconds": train_s, "load_seconds": load_s, "dev": results,
            "rrf_k": rec.rrf_k,
            "validation": validation, "nnselect": {"params": asdict(selector.params), "history": selector.history_},
            "nnrank": None if ranker is None else {"params": asdict(ranker.params), "history": ranker.history_}}


def _load_seconds(rec) -> float:
    """Seconds to load the saved model as `citations recommend` does: read it and index the collection
    (NNSelect's embeddings and, when it fuses, BM25's index)."""
    import tempfile

    from scholargraph.ranking.citations.recommender import CitationRecommender

    with tempfile.TemporaryDirectory() as tmp:
        path = rec.save(Path(tmp) / "model")
        t0 = time.perf_counter()
        CitationRecommender.load(path, snapshot=rec.snapshot)
        return time.perf_counter() - t0


def _minilm_vectors(snap, cache: Path):
    """The pretrained encoder (all-MiniLM-L6-v2, int8 on ONNX Runtime: what `features` stores) and its
    vectors of `snap`'s papers, cached in `cache` (.npz keyed by paper id; encoding hep-th's 22k abstracts
    takes about 11 minutes on 2 cores)."""
    from scholargraph.graph.encoders import PRETRAINED_ENCODER, make_encoder
    from scholargraph.graph.vectors import text_vectors

    encoder = make_encoder(PRETRAINED_ENCODER).fit([])
    ids = snap.paper_ids
    if cache.exists():
        stored = np.load(cache)
        row = {pid: i for i, pid in enumerate(stored["ids"].tolist())}
        if all(pid in row for pid in ids):
            return encoder, stored["vectors"][[row[pid] for pid in ids]]
    t0 = time.perf_counter()
    vectors = text_vectors(snap, encoder)
    print(f"MiniLM vectors of {snap.n_papers:,} papers in {time.perf_counter() - t0:.0f} s", flush=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, ids=np.array(ids), vectors=vectors)
    return encoder, vectors


def _minilm_rows(rec, queries, qrels, cache: Path) -> dict:
    """The pretrained encoder (all-MiniLM-L6-v2) beside the trained models, on the same queries: alone (a first
    stage), fused with BM25 (the text-only ranker), and as a third list in the trained model's fusion
    (NNSelect + NNRank, BM25, MiniLM; the model's rrf_k, or 10 when it serves alone). The collection's vectors
    come from _minilm_vectors."""
    from scholargraph.ranking.citations.recommender import reciprocal_rank_fusion, score_run
    from scholargraph.ranking.citations.textonly import TextOnlyRecommender

    snap = rec.snapshot
    ids = snap.paper_ids
    encoder, vectors = _minilm_vectors(snap, cache)
    # The text-only ranker `citations recommend` serves without a model gives the BM25 and MiniLM lists.
    text_only = TextOnlyRecommender().fit(snap, vectors, encoder)
    k = rec.rrf_k or 10
    runs: dict[str, dict[str, list[str]]] = {}
    seconds: dict[str, float] = {}
    judged = [q for q in queries if qrels.get(q.id)]
    for q in judged:
        lists = {name: [i for i, _ in hits] for name, hits in
                 text_only.rankings(q.title, q.abstract, q.year, (q.id,), 100).items()}
        seconds["minilm"] = seconds.get("minilm", 0.0) + text_only.seconds_.get(text_only.encoder_name, 0.0)
        bm25, dense = lists["bm25"], lists[text_only.encoder_name]
        found = rec.selector.candidates(q.title, q.abstract, q.year, (q.id,))
        ranked = rec._order(found, q.title, q.abstract, q.year, use_ranker=True, exclude_ids=(q.id,))[0][:100].tolist()
        fused = {"minilm": dense, "bm25+minilm (rrf 60)": lists[text_only.name],
                 f"nnrank+bm25+minilm (rrf {k})": [i for i, _ in reciprocal_rank_fusion([ranked, bm25, dense], k, 100)],
                 f"nnrank+minilm (rrf {k})": [i for i, _ in reciprocal_rank_fusion([ranked, dense], k, 100)]}
        for name, order in fused.items():
            runs.setdefault(name, {})[q.id] = [ids[i] for i in order]
    judged_qrels = {q.id: qrels[q.id] for q in judged}
    out = {name: score_run(run, judged_qrels, (20, 100)) for name, run in runs.items()}
    out["minilm"]["ms_per_query"] = 1000.0 * seconds["minilm"] / max(len(judged), 1)
    return out


# --- scale ----------------------------------------------------------------------------------------------


def _fast_snapshot(corpus: Path):
    """The corpus as a GraphSnapshot with texts and citations, read with json only (the full normaliser is
    not what this bench measures)."""
    import scipy.sparse as sp

    from scholargraph.graph.snapshot import GraphSnapshot

    ids, years, titles, abstracts, refs = [], [], [], [], []
    with open(corpus, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            ids.append("aminer:" + d["id"])
            years.append(d.get("year") or -1)
            titles.append(d.get("title"))
            abstracts.append(d.get("abstract"))
            refs.append(d.get("references") or ())
    index = {pid: i for i, pid in enumerate(ids)}
    src, dst = [], []
    for i, rs in enumerate(refs):
        for r in rs:
            j = index.get("aminer:" + r)
            if j is not None:
                src.append(i)
                dst.append(j)
    n = len(ids)
    cit = sp.csr_matrix((np.ones(len(src), np.float32), (np.array(src), np.array(dst))), shape=(n, n))
    return GraphSnapshot(paper_ids=ids, paper_year=np.array(years, dtype=np.int32), paper_stub=np.zeros(n, bool),
                         paper_venue=np.full(n, -1, dtype=np.int32), author_ids=[], venue_ids=[], citations=cit,
                         authorship=sp.csr_matrix((0, n), dtype=np.float32), titles=titles, abstracts=abstracts)


def _latency(fn, items, warmup: int = 10) -> dict[str, float]:
    for it in items[:warmup]:
        fn(it)
    times = []
    for it in items:
        t0 = time.perf_counter()
        fn(it)
        times.append(1000 * (time.perf_counter() - t0))
    return {"p50_ms": float(np.percentile(times, 50)), "p95_ms": float(np.percentile(times, 95)),
            "mean_ms": float(np.mean(times))}


def cmd_scale(args) -> dict:
    from scholargraph.ranking.citations.ann import ExactIndex, IVFIndex
    from scholargraph.ranking.citations.nnrank import NNRank
    from scholargraph.ranking.citations.nnselect import NNSelect
    from scholargraph.ranking.citations.recommender import CitationRecommender, read_queries

    world = _ensure_world(Path(args.world), args.papers, args.seed)
    out: dict = {}
    t0 = time.perf_counter()
    snap = _fast_snapshot(world / "corpus.aminer.jsonl")
    out["load_seconds"] = time.perf_counter() - t0
    out["papers"] = snap.n_papers
    out["citations"] = int(snap.citations.nnz)
    print(f"{snap.n_papers:,} papers, {snap.citations.nnz:,} citations loaded in {out['load_seconds']:.0f} s "
          f"(RSS {_peak_rss_mb():.0f} MB)", flush=True)

    # Training throughput: one epoch over a fixed triplet budget (mining included, reported apart).
    selector = NNSelect(epochs=1, max_triplets=args.train_triplets, k_nn=args.k_nn)
    t0 = time.perf_counter()
    selector.fit(snap, quiet=args.quiet)
    out["fit_seconds"] = time.perf_counter() - t0
    out["nnselect_history"] = selector.history_
    print(f"NNSelect fit (vocabulary, bags, 1 epoch of {args.train_triplets:,} triplets, index): "
          f"{out['fit_seconds']:.0f} s; {selector.history_}", flush=True)

    # Embedding and indexing the whole collection again, timed by phase.
    t0 = time.perf_counter()
    selector.index_snapshot(snap)
    out["embed_and_index_seconds"] = time.perf_counter() - t0
    emb = selector.embeddings_
    t0 = time.perf_counter()
    ivf = IVFIndex(emb, selector.corpus_.years, selector.corpus_.has_text, nprobe=args.nprobe,
                   block_queries=1)
    out["ivf_build_seconds"] = time.perf_counter() - t0
    exact = ExactIndex(emb, selector.corpus_.years, selector.corpus_.has_text)
    out["embedding_mb"] = emb.nbytes / 2**20
    print(f"embed + exact index of {len(emb):,} papers: {out['embed_and_index_seconds']:.0f} s; "
          f"IVF ({ivf.nlist} cells) built in {out['ivf_build_seconds']:.0f} s; RSS {_peak_rss_mb():.0f} MB", flush=True)

    queries = read_queries(world / "citations.queries.jsonl")
    rng = np.random.default_rng(args.seed)
    for i in rng.choice(snap.n_papers, size=max(0, args.queries - len(queries)), replace=False).tolist():
        queries.append(type(queries[0])(snap.paper_ids[i], snap.titles[i], snap.abstracts[i], int(snap.paper_year[i])))
    queries = queries[:args.queries]
    vectors = selector.encode([q.title for q in queries], [q.abstract for q in queries])
    caps = np.array([q.year for q in queries])
    excl = [selector.corpus_.lookup([q.id]) for q in queries]
    k = 20

    def brute(i):  # the named baseline: cosine against every paper, no index structure, full sort of the top
        s = (emb @ vectors[i]) / np.maximum(np.linalg.norm(emb, axis=1), 1e-12)
        s[(selector.corpus_.years > caps[i]) | ~selector.corpus_.has_text] = -np.inf
        s[excl[i]] = -np.inf
        return np.argsort(-s)[:k]

    out["top20_bruteforce"] = _latency(brute, list(range(len(queries))))
    out["top20_exact_index"] = _latency(lambda i: exact.search(vectors[i], k, caps[i:i + 1], [excl[i]]),
                                        list(range(len(queries))))
    out["top20_ivf"] = _latency(lambda i: ivf.search(vectors[i], k, caps[i:i + 1], [excl[i]]),
                                list(range(len(queries))))
    e_idx, _ = exact.search(vectors, k, caps, excl)
    v_idx, _ = ivf.search(vectors, k, caps, excl)
    out["ivf_recall_at_20"] = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(e_idx.tolist(), v_idx.tolist())]))
    out["ivf_nprobe"] = ivf.nprobe
    out["ivf_nlist"] = ivf.nlist

    # The whole recommend() path (encode, candidates = neighbours + their citations, NNRank, explanations).
    ranker = NNRank(max_queries=args.rank_queries, epochs=1, use_age=True, init_from_selector=True,
                    dim=selector.params.dim, embedding_lr_scale=0.1)
    t0 = time.perf_counter()
    ranker.fit(snap, selector, queries=np.flatnonzero(snap.paper_year >= snap.max_year - 1), quiet=args.quiet)
    out["nnrank_fit_seconds"] = time.perf_counter() - t0
    out["nnrank_history"] = ranker.history_
    rec = CitationRecommender(selector, ranker)
    out["recommend_exact"] = _latency(lambda q: rec.recommend(q.title, q.abstract, q.year, (q.id,), k=20), queries)
    selector.index_ = ivf
    out["recommend_ivf"] = _latency(lambda q: rec.recommend(q.title, q.abstract, q.year, (q.id,), k=20), queries)
    out["peak_rss_mb"] = _peak_rss_mb()
    b, x, v = out["top20_bruteforce"]["p50_ms"], out["top20_exact_index"]["p50_ms"], out["top20_ivf"]["p50_ms"]
    print(f"\nscale: {snap.n_papers:,} papers, dim {selector.params.dim}, {len(queries)} queries after 10 warm-up")
    print("| top-20 search | p50 ms | p95 ms | speed-up vs brute force |\n|---|---|---|---|")
    for name, key in (("brute-force cosine (baseline)", "top20_bruteforce"), ("exact index", "top20_exact_index"),
                      (f"IVF nprobe={ivf.nprobe}/{ivf.nlist}, recall@20 {out['ivf_recall_at_20']:.3f}", "top20_ivf")):
        print(f"| {name} | {out[key]['p50_ms']:.1f} | {out[key]['p95_ms']:.1f} | {b / out[key]['p50_ms']:.1f}x |")
    for name, key in (("recommend() exact", "recommend_exact"), ("recommend() IVF", "recommend_ivf")):
        print(f"| {name} | {out[key]['p50_ms']:.1f} | {out[key]['p95_ms']:.1f} | |")
    print(f"exact/IVF p50 ratio {x / v:.1f}; peak RSS {out['peak_rss_mb']:.0f} MB")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", help="write the numbers here as JSON")
    common.add_argument("--seed", type=int, default=7)
    common.add_argument("--threads", type=int, default=1)
    common.add_argument("--quiet", action="store_true")
    models = argparse.ArgumentParser(add_help=False)
    models.add_argument("--nnselect", default="{}", help="NNSelect hyperparameters as JSON")
    models.add_argument("--nnrank", default="{}", help="NNRank hyperparameters as JSON")
    models.add_argument("--ranker-years", type=int, default=0)
    models.add_argument("--rrf-k", type=lambda v: v if v == "auto" else None if v == "none" else int(v),
                        default="auto", help="fusion with BM25: auto (chosen by fit), none, or a constant")
    s = sub.add_parser("synth", parents=[common, models])
    s.add_argument("--world", default="/tmp/synth100k")
    s.add_argument("--papers", type=int, default=100_000)
    s.add_argument("--split-year", type=int, default=2020)
    s.add_argument("--queries", type=int, default=1000)
    a = sub.add_parser("acm", parents=[common, models])
    a.add_argument("--data", default=str(SHARED / "acm-cr"))
    h = sub.add_parser("hepth", parents=[common, models])
    h.add_argument("--data", default=str(SHARED / "hepth"))
    h.add_argument("--as-of", type=int, default=1999)
    h.add_argument("--minilm", action="store_true",
                   help="add the pretrained encoder: alone, fused with BM25, and fused into the trained model")
    h.add_argument("--minilm-cache", default="/tmp/scholargraph-bench/hepth-minilm-onnx-int8.npz",
                   help="where the collection's MiniLM vectors are kept between runs")
    h.add_argument("--queries", type=int, default=0, help="the first N dev queries (0: all)")
    h.add_argument("--no-ranker", action="store_true")
    h.add_argument("--no-encoder", action="store_true",
                   help="NNRank without the pretrained encoder's evidence (as on a graph without its vectors)")
    c = sub.add_parser("scale", parents=[common])
    c.add_argument("--world", default="/tmp/cite-synth1m")
    c.add_argument("--papers", type=int, default=1_000_000)
    c.add_argument("--queries", type=int, default=200)
    c.add_argument("--train-triplets", type=int, default=200_000)
    c.add_argument("--rank-queries", type=int, default=1000)
    c.add_argument("--k-nn", type=int, default=100)
    c.add_argument("--nprobe", type=int, default=16)
    args = ap.parse_args(argv)
    _threads(args.threads)
    result = {"synth": cmd_synth, "acm": cmd_acm, "hepth": cmd_hepth, "scale": cmd_scale}[args.cmd](args)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2, default=float), encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
