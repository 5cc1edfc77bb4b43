"""Where the test suite's time goes: a JUnit XML report (pytest --junitxml) as Markdown tables, per kind of
test and per file, for docs/testing.md.

    .venv/bin/python scripts/test_times.py report.xml [--top 25]
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_file(case: ET.Element) -> str:
    """The test's file, from the JUnit classname (tests.integration.test_jobs[.Class])."""
    parts = case.get("classname", "").split(".")
    for end in range(len(parts), 0, -1):
        candidate = Path(*parts[:end]).with_suffix(".py")
        if (REPO / candidate).exists():
            return candidate.as_posix()
    return "/".join(parts) + ".py"


def reads_shared_data(path: str) -> bool:
    try:
        text = (REPO / path).read_text(encoding="utf-8")
    except OSError:
        return False
    return bool(re.search(r"require_shared_data\(|shared_path\(|shared_data\b", text))


def kind_of(path: str) -> str:
    """The kinds of docs/testing.md, first match wins."""
    if path.startswith("tests/unit/"):
        return "unit"
    if "/spark/" in path or path.endswith("_spark.py"):
        return "Spark"
    if "test_faults_" in path:
        return "faults"
    if path.startswith("tests/integration/server/"):
        return "server lifecycle"
    if reads_shared_data(path):
        return "real data + Neo4j"
    return "Neo4j integration"


def read_cases(report: Path) -> list[dict]:
    cases = []
    for case in ET.parse(report).getroot().iter("testcase"):
        outcome = "skipped" if case.find("skipped") is not None else (
            "failed" if case.find("failure") is not None or case.find("error") is not None else "passed")
        path = test_file(case)
        cases.append({"file": path, "name": case.get("name", ""), "seconds": float(case.get("time", 0) or 0),
                      "outcome": outcome, "kind": kind_of(path)})
    return cases


def tables(cases: list[dict], top: int) -> str:
    total = sum(c["seconds"] for c in cases)
    out = [f"{len(cases)} tests, {total:,.0f} s in tests (setup, call and teardown; the server's own start "
           "before pytest is not counted)", ""]
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for c in cases:
        by_kind[c["kind"]].append(c)
    out += ["| kind | tests | seconds | share |", "|---|---:|---:|---:|"]
    for kind, group in sorted(by_kind.items(), key=lambda kv: -sum(c["seconds"] for c in kv[1])):
        seconds = sum(c["seconds"] for c in group)
        out.append(f"| {kind} | {len(group)} | {seconds:,.0f} | {seconds / max(total, 1e-9):.0%} |")
    by_file: dict[str, list[dict]] = defaultdict(list)
    for c in cases:
        by_file[c["file"]].append(c)
    out += ["", "| file | kind | tests | seconds | slowest test (s) |", "|---|---|---:|---:|---:|"]
    for path, group in sorted(by_file.items(), key=lambda kv: -sum(c["seconds"] for c in kv[1]))[:top]:
        seconds = sum(c["seconds"] for c in group)
        slowest = max(group, key=lambda c: c["seconds"])
        out.append(f"| {path} | {group[0]['kind']} | {len(group)} | {seconds:,.0f} | {slowest['seconds']:,.0f} |")
    rest = sorted(by_file.items(), key=lambda kv: -sum(c["seconds"] for c in kv[1]))[top:]
    if rest:
        seconds = sum(c["seconds"] for _, group in rest for c in group)
        out.append(f"| {len(rest)} other files | | {sum(len(g) for _, g in rest)} | {seconds:,.0f} | |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="a pytest --junitxml report")
    parser.add_argument("--top", type=int, default=25, help="files listed (the rest are summed)")
    args = parser.parse_args(argv)
    if not args.report.is_file():
        print(f"test_times: {args.report}: no such file", file=sys.stderr)
        return 2
    try:
        cases = read_cases(args.report)
    except ET.ParseError as exc:
        print(f"test_times: {args.report}: not a JUnit XML report ({exc})", file=sys.stderr)
        return 2
    print(tables(cases, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
