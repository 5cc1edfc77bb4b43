"""Benchmark the synthetic-world generator: papers/s and peak RSS at N papers, against two named baselines."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 120.0
TARGET_RSS_MB = 1024.0


def _peak_rss_mb() -> float:
    # Linux reports ru_maxrss in KiB (macOS in bytes).
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _worker(papers: int, out: str, fmt: str, seed: int) -> None:
    """One generator run in a fresh process, so that its peak RSS is its own."""
    from scholargraph.synth import SynthParams, generate
    from scholargraph.synth.params import CORPUS_FILES

    t0 = time.perf_counter()
    stats = generate(SynthParams(papers=papers, seed=seed, fmt=fmt), out)
    seconds = time.perf_counter() - t0
    size = os.path.getsize(os.path.join(out, CORPUS_FILES[fmt]))
    print(json.dumps({"papers": papers, "seconds": seconds, "rss_mb": _peak_rss_mb(), "bytes": size,
                      "stats": stats}))


def _serialize_only(corpus: Path, papers: int) -> dict:
    """Baseline 'write-only': json.dumps + write of N records like the generator's (its first 20,000
    records, cycled), with none of the world's logic. The generator can never be faster than this."""
    sample = []
    with open(corpus, encoding="utf-8") as fh:
        for line in itertools.islice(fh, 20_000):
            sample.append(json.loads(line))
    t0 = time.perf_counter()
    with open(os.devnull, "w", encoding="utf-8") as sink:
        buf = []
        for rec in itertools.islice(itertools.cycle(sample), papers):
            buf.append(json.dumps(rec))
            if len(buf) == 4096:
                sink.write("\n".join(buf))
                buf.clear()
        sink.write("\n".join(buf))
    return {"papers": papers, "seconds": time.perf_counter() - t0}


def _run(papers: int, fmt: str, seed: int, workdir: Path) -> dict:
    out = workdir / f"world-{papers}"
    cmd = [sys.executable, __file__, "--worker", "--papers", str(papers), "--out", str(out), "--format", fmt,
           "--seed", str(seed)]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["out"] = str(out)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--papers", type=int, default=1_000_000)
    ap.add_argument("--format", dest="fmt", choices=("aminer", "openalex"), default="aminer")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="keep the worlds here (default: a temporary directory)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args.papers, args.out, args.fmt, args.seed)
        return
    workdir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="synth-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        small_n = max(1000, args.papers // 10)
        # Baseline 1, 'generator at N/10': the same code on a tenth of the papers. A per-paper cost ratio
        # near 1 means the generator scales linearly: no hidden quadratic term, no slowdown as state grows.
        small = _run(small_n, args.fmt, args.seed, workdir)
        big = _run(args.papers, args.fmt, args.seed, workdir)
        corpus = Path(big["out"]) / f"corpus.{args.fmt}.jsonl"
        # Baseline 2, 'write-only': serializing records of the same shape, with no world behind them.
        floor = _serialize_only(corpus, args.papers)
    finally:
        if not args.out:
            shutil.rmtree(workdir, ignore_errors=True)
    rate = big["papers"] / big["seconds"]
    small_rate = small["papers"] / small["seconds"]
    floor_rate = floor["papers"] / floor["seconds"]
    st = big["stats"]
    ok_time = big["seconds"] < TARGET_SECONDS
    ok_rss = big["rss_mb"] < TARGET_RSS_MB
    print(f"synth ({args.fmt}) N={args.papers:,}: {big['seconds']:.1f} s, {rate:,.0f} papers/s, "
          f"peak RSS {big['rss_mb']:.0f} MB, corpus {big['bytes'] / 2**20:,.0f} MB")
    print(f"  targets: < {TARGET_SECONDS:.0f} s {'OK' if ok_time else 'MISSED'}, "
          f"< {TARGET_RSS_MB:.0f} MB {'OK' if ok_rss else 'MISSED'}")
    print(f"  baseline 'generator at N={small_n:,}': {small_rate:,.0f} papers/s, peak RSS "
          f"{small['rss_mb']:.0f} MB -> per-paper cost ratio N/(N/10) = {small_rate / rate:.2f}x "
          f"(1.00x = linear scaling)")
    print(f"  baseline 'write-only' (json.dumps + write of same-shaped records): {floor_rate:,.0f} papers/s "
          f"-> the world model costs {floor_rate / rate:.2f}x the bare serialization time")
    print(f"  world: mean refs {st['mean_references']}, in-citations max/median {st['in_citations_max']}/"
          f"{st['in_citations_median']:g}, top-1% share {st['in_citations_top1pct_share']:.1%}, cross-domain "
          f"{st['cross_domain_share']:.1%}, stub refs {st['stub_reference_share']:.1%}, "
          f"young authors {st['young_authors']:,} ({st['young_nonzero_increment_share']:.0%} with a future "
          f"increment), authors {st['authors_with_papers']:,}")


if __name__ == "__main__":
    main()
