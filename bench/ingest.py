"""Ingestion throughput: the whole ACM-CR BibTeX collection and a synthetic AMiner file.

For each input: papers/s, edges/s (authorships + citations), wall time, peak RSS of this process,
and the ratio against one transaction per record (the naive baseline, measured on the first
--baseline-records records of the same input in the same run).

    .venv/bin/python bench/ingest.py [--acm ../shared/data/acm-cr/acm-dl] [--synthetic-papers 1000000]

With --bulk (needs the managed server): the synthetic file end to end through `ingest --bulk` (parse,
stage, import files, neo4j-admin import with the server stopped, schema) beside the transactional
ingest of the same file in the same run (papers/s and the ratio; --transactional-records N measures the
transactional path on the first N records only, to save time, and says so):

    .venv/bin/python bench/ingest.py --skip-acm --bulk --synthetic-papers 1000000 [--synthetic-file F]
        [--parse-workers N] [--compare-serial]

--compare-serial first loads the file in bulk with no parse workers (normalising on the main thread), to
show what the workers bring, in the same run.

Uses SCHOLARGRAPH_NEO4J_URI when set, else a throw-away managed server in a temporary home.
The database is emptied before each measurement.
"""

from __future__ import annotations

import argparse
import itertools
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _server import bench_server  # noqa: E402

from scholargraph.errors import InvalidRecord  # noqa: E402
from scholargraph.graph.neo4j_store import Neo4jStore  # noqa: E402
from scholargraph.ingest.loader import default_parse_workers, ingest  # noqa: E402
from scholargraph.ingest.normalize import Dropped, iter_raw, normalize  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def per_record_baseline(store: Neo4jStore, fmt: str, path: str, n: int) -> float:
    """Papers/s writing each record in its own transaction (same parse, same queries)."""
    bundles = []
    for raw in itertools.islice((r for p in _files(path) for r in iter_raw(fmt, p)), n * 2):
        try:
            bundles.append(normalize(fmt, raw))
        except (InvalidRecord, Dropped):
            continue
        if len(bundles) == n:
            break
    store.reset()
    t0 = time.perf_counter()
    for b in bundles:
        store.write_bundles([b])
    return len(bundles) / (time.perf_counter() - t0)


def _files(path: str) -> list[str]:
    from scholargraph.ingest.sources import expand_inputs

    return expand_inputs([path])


def measure(store: Neo4jStore, fmt: str, path: str, batch_size: int, tmp: Path, label: str,
            baseline_records: int, writers: int = 1) -> float:
    baseline = per_record_baseline(store, fmt, path, baseline_records)
    store.reset()
    t0 = time.perf_counter()
    summary = ingest(store, fmt, [path], quarantine_path=tmp / f"{label}.quarantine.jsonl",
                     checkpoint_dir=tmp / "ckpt", batch_size=batch_size, restart=True, quiet=True,
                     writers=writers)
    wall = time.perf_counter() - t0
    papers_s = summary.written / wall
    edges_s = (summary.authorships + summary.citations) / wall
    print(f"{label}: {summary.read:,} records, {summary.written:,} papers, "
          f"{summary.authorships + summary.citations:,} edges in {wall:.1f}s")
    print(f"  batched (size {batch_size:,}, {writers} writer thread(s)): {papers_s:,.0f} papers/s, "
          f"{edges_s:,.0f} edges/s")
    print(f"  1 tx per record (baseline): {baseline:,.0f} papers/s -> ratio {papers_s / baseline:.1f}x")
    print(f"  quarantined {summary.quarantined:,} {dict(summary.quarantine_reasons)}, "
          f"dropped {summary.dropped:,} {dict(summary.drop_reasons)}")
    print(f"  peak RSS of the ingest process so far: {peak_rss_mib():,.0f} MiB")
    return papers_s


def children_peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def measure_bulk(settings, path: str, tmp: Path, label: str, batch_size: int, parse_workers: int) -> float:
    """`ingest --bulk` of `path` into the (empty) managed database; returns papers/s end to end."""
    from scholargraph.ingest.bulk_load import bulk_ingest

    t0 = time.perf_counter()
    report = bulk_ingest(settings, "aminer", [path], quarantine_path=tmp / f"{label}.bulk.quarantine.jsonl",
                         batch_size=batch_size, import_root=tmp / "import", quiet=True, parse_workers=parse_workers)
    wall = time.perf_counter() - t0
    s = report.summary
    print(f"{label} --bulk --parse-workers {parse_workers}: {s.read:,} records, {s.written:,} papers, "
          f"{s.authorships + s.citations:,} edges in {wall:.1f}s end to end: {s.written / wall:,.0f} papers/s")
    for line in report.lines():
        print("  " + line)
    print(f"  peak RSS: this process (parse, staging, import files) {peak_rss_mib():,.0f} MiB; "
          f"importer {report.importer_peak_memory} (its own report); largest child process so far "
          f"{children_peak_rss_mib():,.0f} MiB")
    return s.written / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--acm", default=str(REPO.parent / "shared" / "data" / "acm-cr" / "acm-dl"))
    ap.add_argument("--synthetic-papers", type=int, default=0,
                    help="also generate and ingest a synthetic AMiner corpus of this size (e.g. 1000000)")
    ap.add_argument("--batch-size", type=int, default=2000)
    ap.add_argument("--baseline-records", type=int, default=300)
    ap.add_argument("--writers", type=int, default=1, help="writer threads of the loader")
    ap.add_argument("--skip-acm", action="store_true")
    ap.add_argument("--bulk", action="store_true",
                    help="measure `ingest --bulk` on the synthetic file beside the transactional path")
    ap.add_argument("--synthetic-file", default=None,
                    help="an AMiner file to use instead of generating --synthetic-papers (same generator output)")
    ap.add_argument("--parse-workers", type=int, default=default_parse_workers(),
                    help="with --bulk: normalising processes (default: as `ingest --bulk`)")
    ap.add_argument("--compare-serial", action="store_true",
                    help="with --bulk: first a bulk load with --parse-workers 0 (the database is emptied after)")
    ap.add_argument("--bulk-only", action="store_true",
                    help="with --bulk: no transactional ingest after it (no ratio against it)")
    ap.add_argument("--transactional-records", type=int, default=0,
                    help="with --bulk: time the transactional path on the first N records only (0: all)")
    ap.add_argument("--keep", action="store_true",
                    help="leave the last corpus in the database (with SCHOLARGRAPH_NEO4J_URI, for bench/features.py "
                         "--reuse)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="sg-bench-ingest-"))
    with bench_server(17697) as settings:
        with Neo4jStore(settings.uri, settings.neo4j_user, settings.password,
                        settings.neo4j_database) as store:
            store.apply_schema()
            if args.skip_acm:
                pass
            elif Path(args.acm).exists():
                measure(store, "bibtex", args.acm, args.batch_size, work, "ACM-CR", args.baseline_records,
                        args.writers)
            else:
                print(f"ACM-CR not found at {args.acm}: skipped")
            if args.synthetic_papers or args.synthetic_file:
                corpus = args.synthetic_file or _generate(work, args.synthetic_papers)
                label = f"synthetic {args.synthetic_papers or Path(corpus).name}"
                if args.bulk:
                    store.reset()
                    if args.compare_serial and args.parse_workers:
                        serial_rate = measure_bulk(settings, corpus, work, label, args.batch_size, 0)
                        store = _reconnect(store, settings)
                        store.reset()
                    bulk_rate = measure_bulk(settings, corpus, work, label, args.batch_size, args.parse_workers)
                    if args.compare_serial and args.parse_workers:
                        print(f"bulk with {args.parse_workers} parse workers vs none (papers/s, same run): "
                              f"{bulk_rate:,.0f} / {serial_rate:,.0f} = {bulk_rate / serial_rate:.2f}x")
                    store = _reconnect(store, settings)
                    if not args.bulk_only:
                        if args.transactional_records:
                            head = work / "transactional-head.jsonl"
                            with open(corpus, "rb") as src, open(head, "wb") as dst:
                                dst.writelines(itertools.islice(src, args.transactional_records))
                            corpus, label = str(head), f"{label} (first {args.transactional_records:,} records)"
                        tx_rate = measure(store, "aminer", corpus, args.batch_size, work, label,
                                          args.baseline_records, args.writers)
                        print(f"bulk vs transactional (papers/s, same machine, same run): {bulk_rate:,.0f} / "
                              f"{tx_rate:,.0f} = {bulk_rate / tx_rate:.2f}x")
                else:
                    measure(store, "aminer", corpus, args.batch_size, work, label, args.baseline_records,
                            args.writers)
            if not args.keep and not settings.managed:
                store.reset()  # a server of the user's; a managed one goes with its temporary home


def _reconnect(store: Neo4jStore, settings) -> Neo4jStore:
    """A bulk load restarts the server: a fresh connection."""
    store.close()
    return Neo4jStore(settings.uri, settings.neo4j_user, settings.password, settings.neo4j_database)


def _generate(work: Path, papers: int) -> str:
    from scholargraph import synth

    out = work / "synth"
    t0 = time.perf_counter()
    synth.generate(synth.SynthParams(papers=papers, seed=7), out)
    print(f"generated {papers:,} synthetic papers in {time.perf_counter() - t0:.1f}s")
    return str(out / "corpus.aminer.jsonl")


if __name__ == "__main__":
    main()
