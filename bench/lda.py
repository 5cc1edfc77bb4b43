"""Benchmark LDA topics: wall time, docs/s and peak RSS on the whole ACM-CR collection; purity on a synthetic world."""

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

ACM_DIR = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "acm-cr" / "acm-dl"
TARGET_SECONDS = 600.0  # ACM-CR (~110k documents) must train in under 10 minutes on 2 cores


def _peak_rss_mb() -> float:
    # Linux reports ru_maxrss in KiB (macOS in bytes).
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def acm_texts(root: str) -> list[str]:
    """Title + abstract of every ACM-CR record that normalises (session headers and bad records dropped),
    one per paper id (the last record of an id wins, as in the graph)."""
    from scholargraph.errors import InvalidRecord
    from scholargraph.ingest import sources
    from scholargraph.ingest.normalize import Dropped, iter_raw, normalize

    texts: dict[str, str] = {}
    for path in sources.expand_inputs([root], suffixes=(".bib",)):
        for raw in iter_raw("bibtex", path):
            try:
                paper = normalize("bibtex", raw).paper
            except (InvalidRecord, Dropped):
                continue
            texts[paper.id] = " ".join(t for t in (paper.title, paper.abstract) if t)
    return list(texts.values())


def purity(theta, truth) -> tuple[float, int]:
    """Map each LDA topic to the planted primary topic of the majority of its papers (argmax assignment);
    purity = share of papers whose topic maps to their planted topic. Also: how many planted topics are hit."""
    import numpy as np

    z = theta.argmax(axis=1)
    mapping = {k: int(np.bincount(truth[z == k]).argmax()) for k in set(z.tolist())}
    return float(np.mean([mapping[k] == t for k, t in zip(z.tolist(), truth.tolist())])), len(set(mapping.values()))


def synth_texts(papers: int, seed: int, out: str):
    """Texts and planted primary topics of a synthetic world, through the offline snapshot."""
    import numpy as np

    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.synth import SynthParams, generate
    from scholargraph.synth.params import CORPUS_FILES

    generate(SynthParams(papers=papers, seed=seed), out)
    s = snapshot_from_files("aminer", [os.path.join(out, CORPUS_FILES["aminer"])])
    truth = {}
    with open(os.path.join(out, "paper_topics.tsv"), encoding="ascii") as fh:
        for line in fh:
            pid, topic, _ = line.rstrip("\n").split("\t")
            if pid != "paper_id":
                truth[pid] = int(topic)
    rows = [i for i, pid in enumerate(s.paper_ids) if pid in truth]
    return [s.text(i) for i in rows], np.array([truth[s.paper_ids[i]] for i in rows])


def _worker(args: argparse.Namespace) -> None:
    """One run in a fresh process, so that its peak RSS is its own."""
    from scholargraph.graph.topics import TopicModel

    params = json.loads(args.params)
    stages: dict[str, float] = {}
    t0 = time.perf_counter()
    truth = None
    if args.synth:
        with tempfile.TemporaryDirectory() as tmp:
            texts, truth = synth_texts(args.synth, args.seed, tmp)
    else:
        texts = acm_texts(args.acm)
    stages["read"] = time.perf_counter() - t0
    clock = time.perf_counter()

    def progress(stage: str, _n: int) -> None:
        nonlocal clock
        now = time.perf_counter()
        stages[stage] = now - clock
        clock = now

    model = TopicModel(**params)
    t1 = time.perf_counter()
    model.fit(texts, progress=progress)
    fit_seconds = time.perf_counter() - t1
    t2 = time.perf_counter()
    theta, empty = model.transform(texts, return_empty=True)
    transform_seconds = time.perf_counter() - t2
    result = {
        "corpus": f"synth-{args.synth}-seed{args.seed}" if args.synth else "acm-cr",
        "docs": len(texts), "with_abstract_words": int((~empty).sum()), "vocabulary": len(model.dictionary_),
        "params": {**model.get_params(), "passes": model.passes_, "chunksize": model.chunksize_,
                   "no_below": model.no_below_},
        "fit_seconds": round(fit_seconds, 1), "docs_per_s_fit": round(len(texts) / fit_seconds, 1),
        "stages": {k: round(v, 1) for k, v in stages.items()},
        "transform_seconds": round(transform_seconds, 1),
        "docs_per_s_transform": round(len(texts) / transform_seconds, 1),
        "rss_mb": round(_peak_rss_mb(), 1),
        # The machine may be shared: CPU seconds (this process and its LdaMulticore workers) next to wall time.
        "cpu_seconds": round(sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF,
                                 resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime")), 1),
        "top_words": [" ".join(w for w, _ in row) for row in model.top_words(8)],
    }
    if truth is not None:
        result["purity"], result["planted_topics_found"] = purity(theta, truth)
    print(json.dumps(result))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--acm", default=str(ACM_DIR), help="ACM-CR acm-dl directory")
    ap.add_argument("--synth", type=int, default=0, help="instead of ACM-CR: a synthetic world of N papers")
    ap.add_argument("--seed", type=int, default=0, help="synthetic world seed")
    ap.add_argument("--params", default="{}", help="TopicModel keyword arguments as JSON")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args)
        return 0
    if not args.synth and not os.path.isdir(args.acm):
        print(f"ACM-CR not found at {args.acm}", file=sys.stderr)
        return 2
    cmd = [sys.executable, __file__, "--worker", "--acm", args.acm, "--synth", str(args.synth),
           "--seed", str(args.seed), "--params", args.params]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    result = json.loads(out.strip().splitlines()[-1])
    result["wall_seconds"] = round(wall, 1)
    print(json.dumps(result, indent=1))
    if not args.synth:
        verdict = "OK" if result["fit_seconds"] < TARGET_SECONDS else "TOO SLOW"
        print(f"fit {result['fit_seconds']} s for {result['docs']} docs (target < {TARGET_SECONDS:.0f} s): {verdict}; "
              f"peak RSS {result['rss_mb']} MB")
    else:
        print(f"purity {result['purity']:.3f} ({result['planted_topics_found']} planted topics found)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
