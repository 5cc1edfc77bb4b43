"""How long a start of the managed Neo4j takes to ready, and its CPU: the runtime as provisioned (signed jars
rewritten unsigned, scholargraph/server/jar_signatures.py) against the same runtime with Maven's signed jars put
back, measured in the same run. Each runtime's first start writes its class-data archive and is not counted.

    .venv/bin/python bench/server_start.py [--starts 5] [--port 19740] [--jvm-options -XX:TieredStopAtLevel=1]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scholargraph.config import Settings  # noqa: E402
from scholargraph.server import jar_signatures, local_server  # noqa: E402


def signed_copy(runtime: Path, cache: Path) -> list[str]:
    """`runtime` copied under `cache` (jars hard-linked) with the signed originals from the local Maven
    repository in place of the jars provisioning rewrote; the names put back."""
    copy = cache / runtime.name
    shutil.copytree(runtime, copy, copy_function=os.link, ignore=shutil.ignore_patterns("class-archives"))
    restored = []
    for name in (copy / "lib" / jar_signatures.DONE_MARKER).read_text().split():
        artifact, _, version = name.removesuffix(".jar").rpartition("-")
        originals = list((Path.home() / ".m2" / "repository").glob(f"**/{artifact}/{version}/{name}"))
        if originals:
            (copy / "lib" / name).unlink()
            shutil.copy2(originals[0], copy / "lib" / name)
            restored.append(name)
    return restored


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def starts(settings: Settings, count: int) -> list[tuple[float, float]]:
    local_server.start(settings, quiet=True)  # writes the class-data archive when it stops
    local_server.stop(settings)
    out = []
    for _ in range(count):
        t0 = time.perf_counter()
        local_server.start(settings, quiet=True)
        wall = time.perf_counter() - t0
        out.append((wall, cpu_seconds(local_server.running_pid(settings))))
        local_server.stop(settings)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--port", type=int, default=19740)
    parser.add_argument("--jvm-options", default="", help="e.g. -XX:TieredStopAtLevel=1 (the test suite's "
                                                          "throw-away servers)")
    args = parser.parse_args()
    base = replace(Settings.load(), neo4j_uri=None, neo4j_password=None, neo4j_port=args.port, neo4j_http_port=0,
                   heap="512m", pagecache="64m", jvm_options=args.jvm_options)
    runtime = local_server.provision(base, quiet=True)
    with tempfile.TemporaryDirectory(prefix="sg-bench-start-") as tmp:
        restored = signed_copy(runtime, Path(tmp) / "cache")
        if not restored:
            sys.exit("no signed jar to put back (none was rewritten, or ~/.m2 lacks the originals)")
        results = {}
        for name, cache in (("signed (before)", Path(tmp) / "cache"), ("unsigned (as provisioned)", base.cache)):
            settings = replace(base, home=Path(tmp) / f"home-{len(results)}", cache=cache)
            results[name] = starts(settings, args.starts)
    print(f"Neo4j start to ready, {args.starts} starts each after the archive's, JVM options "
          f"{args.jvm_options or '(defaults)'}; signed jars put back: {', '.join(restored)}")
    medians = {}
    for name, rows in results.items():
        medians[name] = (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))
        print(f"  {name:26} median {medians[name][0]:5.2f} s to ready, {medians[name][1]:5.2f} s of CPU")
    (before_wall, before_cpu), (after_wall, after_cpu) = medians.values()
    print(f"  ratio unsigned/signed: {after_wall / before_wall:.2f} of the wall time, {after_cpu / before_cpu:.2f} "
          f"of the CPU")


if __name__ == "__main__":
    main()
