"""Text vectors on Spark (spark/vectors.py) against the in-process encoder, on a real dump, in the same run.

    .venv/bin/python bench/spark_vectors.py [--corpus ../shared/data/nips/nips-1987-1993.aminer.jsonl]
        [--encoder minilm-onnx-int8] [--master local[2]] [--commit-every 2048]

A throw-away managed Neo4j is loaded with the corpus; `features --only vectors` runs in process (the baseline:
encode and commit chunk by chunk over Bolt), the vectors are removed, and the same step runs with the Spark
engine (the Parquet export, the encoder in `mapInPandas` partitions, the connector's write-back). Prints the
docs/s of each, the ratio, Spark's partitions and their summed wall time (the per-partition cost that
docs/scale-out.md projects from), and the parity of the vectors (cosine per paper, and the stamps).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _server import bench_server  # noqa: E402

from scholargraph.graph.encoders import PRETRAINED_ENCODER  # noqa: E402
from scholargraph.graph.features import FeatureOptions, run_features  # noqa: E402
from scholargraph.graph.neo4j_store import Neo4jStore  # noqa: E402
from scholargraph.ingest.loader import ingest  # noqa: E402

STAMPS = ["semantic_encoder", "semantic_text_hash", "semantic_vector"]
REPO = Path(__file__).resolve().parents[1]


def _stored(store) -> dict:
    ids, values = store.read_nodes("Paper", STAMPS)
    return {pid: (k, h, np.asarray(v, dtype=np.float64)) for pid, k, h, v in
            zip(ids, values["semantic_encoder"], values["semantic_text_hash"], values["semantic_vector"]) if k}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(REPO.parent / "shared/data/nips/nips-1987-1993.aminer.jsonl"))
    ap.add_argument("--encoder", default=PRETRAINED_ENCODER)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--commit-every", type=int, default=2048)
    args = ap.parse_args()
    from scholargraph.spark.features import spark_feature_engine

    options = FeatureOptions(only=("vectors",), encoder=args.encoder, commit_every=args.commit_every)
    with bench_server(17699) as settings, tempfile.TemporaryDirectory(prefix="sg-spark-vectors-") as work:
        with Neo4jStore(settings.uri, settings.neo4j_user, settings.password, settings.neo4j_database) as store:
            ingest(store, "aminer", [args.corpus], quarantine_path=Path(work) / "q", checkpoint_dir=Path(work) / "c",
                   quiet=True)
            models = Path(work) / "models"
            t0 = time.perf_counter()
            run_features(store, models, options)
            in_process = time.perf_counter() - t0
            ours = _stored(store)
            ids, _ = store.read_nodes("Paper", [])
            store.write_node_properties("Paper", ids, {name: [None] * len(ids) for name in STAMPS})
            with spark_feature_engine(settings, store, args.master) as engine:
                t0 = time.perf_counter()
                run_features(store, models, options, force=True, engine=engine)
                on_spark = time.perf_counter() - t0
                stats = engine.encode_stats
            theirs = _stored(store)
    n = len(ours)
    cosines = np.array([ours[p][2] @ theirs[p][2] / (np.linalg.norm(ours[p][2]) * np.linalg.norm(theirs[p][2]))
                        for p in ours if p in theirs])
    stamps = sum(ours[p][:2] == theirs[p][:2] for p in ours if p in theirs)
    print(f"{Path(args.corpus).name}: {n:,} papers with text, encoder {args.encoder}, chunks of {args.commit_every}, "
          f"Spark {args.master}")
    print("| path | features --only vectors, wall s | docs/s | encode step s |")
    print("|---|---|---|---|")
    print(f"| in process (baseline) | {in_process:.1f} | {n / in_process:.1f} | |")
    print(f"| Spark | {on_spark:.1f} | {n / on_spark:.1f} | {stats['seconds']:.1f} "
          f"({stats['partitions']} partitions) |")
    print(f"Spark / in process: {on_spark / in_process:.2f}x the wall time; partitions' summed wall time "
          f"{stats['encode_core_seconds']:.1f} s = {1000 * stats['encode_core_seconds'] / max(n, 1):.1f} ms per paper")
    print(f"parity: {len(cosines):,} of {n:,} papers written by both, cosine min {cosines.min():.6f} "
          f"mean {cosines.mean():.6f}; stamps equal for {stamps:,}")


if __name__ == "__main__":
    main()
