"""RECO-Rank on the real reviewer gold standard (dev half), through the CLI and a real Neo4j, as a user runs it:
`ingest s2`, `features --only topics,vectors`, `reviewers evaluate --protocol expertise` (RECO-Rank trained there
with its defaults). Prints the weighted Kendall loss of each system with its bootstrap interval, RECO-Rank's
ratio to each baseline measured in the same run, the time of each step, and whether the claims of
docs/reviewers.md hold: RECO-Rank below 0.2, not above mean-top-3 TF-IDF, and not above the pretrained encoder's
own mean-top-3 beyond seed noise (0.005). Exit 1 when a claim fails.

    .venv/bin/python bench/reviewers_gold.py [--bootstrap 2000] [--port 17788]

This was the quality half of tests/integration/test_reviewers_expertise.py before issue 49: a quality table is a
benchmark; the test keeps the protocol's behaviour on a small trained model.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _gold import GOLD  # noqa: E402
from _server import bench_server  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^(\S.*?)\s+(\d\.\d{3})\s+\[(\d\.\d{3}), (\d\.\d{3})\]$", re.M)
ENCODER_ROW = "mean-top-3 encoder (minilm-onnx-int8)"
LEXICAL_ROW = "mean-top-3 lexical (TF-IDF)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples over reviewers")
    parser.add_argument("--port", type=int, default=17788, help="Bolt port of the throw-away server")
    args = parser.parse_args(argv)
    if not GOLD.is_dir():
        print(f"reviewers_gold: no gold standard at {GOLD} (see ../shared/data/README.md)", file=sys.stderr)
        return 2
    steps: list[tuple[str, float]] = []
    with bench_server(args.port) as settings, tempfile.TemporaryDirectory(prefix="sg-gold-") as home:
        env = dict(os.environ, SCHOLARGRAPH_NEO4J_URI=settings.uri, SCHOLARGRAPH_HOME=home)
        if settings.password:
            env["SCHOLARGRAPH_NEO4J_PASSWORD"] = settings.password

        def cli(name: str, *command: str) -> str:
            started = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "scholargraph.cli", "-q", *command], cwd=REPO, env=env,
                                  capture_output=True, text=True)
            steps.append((name, time.perf_counter() - started))
            if proc.returncode != 0:
                sys.exit(f"reviewers_gold: scholargraph {' '.join(command)} -> {proc.returncode}\n"
                         f"{proc.stderr[-2000:]}")
            return proc.stdout

        cli("db init", "db", "init")
        cli("ingest s2", "ingest", "s2", str(GOLD / "corpus.s2.jsonl"))
        cli("features", "features", "--only", "topics,vectors")
        table = cli("evaluate (trains RECO-Rank)", "reviewers", "evaluate", "--protocol", "expertise",
                    "--queries", str(GOLD / "queries.jsonl"), "--qrels", str(GOLD / "qrels.txt"),
                    "--bootstrap", str(args.bootstrap))
    losses = {m.group(1).strip(): tuple(float(m.group(i)) for i in (2, 3, 4)) for m in ROW.finditer(table)}
    if "RECO-Rank" not in losses:
        print(table)
        print("reviewers_gold: no RECO-Rank row in the table above", file=sys.stderr)
        return 2
    print("weighted Kendall loss on goldstandard-dev (29 reviewers; lower is better, 0.5 is random)")
    reco = losses["RECO-Rank"][0]
    for name, (loss, low, high) in losses.items():
        ratio = "" if name == "RECO-Rank" else f"   RECO-Rank / this = {reco / loss:.3f}"
        print(f"  {name:<42} {loss:.3f} [{low:.3f}, {high:.3f}]{ratio}")
    print("steps: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in steps))
    claims = {"RECO-Rank < 0.2": reco < 0.2,
              "RECO-Rank <= mean-top-3 TF-IDF": LEXICAL_ROW in losses and reco <= losses[LEXICAL_ROW][0],
              "RECO-Rank <= mean-top-3 encoder + 0.005":
                  ENCODER_ROW in losses and reco <= losses[ENCODER_ROW][0] + 0.005}
    for claim, holds in claims.items():
        print(f"  {'holds' if holds else 'FAILS'}: {claim}")
    return 0 if all(claims.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
