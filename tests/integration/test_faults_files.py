"""Disk full and damaged files, through the CLI as a user runs it (issue 30; docs/reliability.md).

"Disk full" is a file-size limit in the child (RLIMIT_FSIZE, SIGXFSZ ignored), so writes past it fail with
EFBIG as a full disk fails them with ENOSPC; the product treats both alike. Each test checks what the user
sees (one line, a non-zero exit, no traceback), that nothing was lost or left half-written, and that the next
run, without the fault, recovers.
"""

from __future__ import annotations

import importlib.util
import json
import resource
import shutil
import signal
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from scholargraph.graph.parquet import read_manifest, read_snapshot, verify_snapshot
from scholargraph.synth import SynthParams, generate
from tests.cli import run, run_process
from tests.conftest import IN_CI, SPARK_SLOW_TIER, cli_env, open_test_store
from tests.integration.ingest.test_bulk import _env as managed_env

AS_OF, HORIZON = 2020, 3


def run_cli(env: dict, *args: str, fsize: int | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """`scholargraph -q ARGS`; with `fsize`, in a child none of whose files may grow past that many bytes."""
    if fsize is None:
        return run(env, *args, check=False)

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the child
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return run_process({**env, "PYTHONDONTWRITEBYTECODE": "1"}, *args, check=False, timeout=timeout,
                       preexec_fn=limit)


def one_clear_line(proc: subprocess.CompletedProcess, *words: str, code: int = 1) -> str:
    """The failure's stderr: one `scholargraph:` line holding `words`, and no traceback; exit `code`."""
    assert proc.returncode == code, (proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("scholargraph: "), proc.stderr[-3000:]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    return proc


def leftovers(root: Path) -> list[Path]:
    """Temporary files an atomic write would leave after a failure."""
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


def dump(settings) -> list[str]:
    with open_test_store(settings) as store:
        return sorted(store.dump_lines())


# --- ingest: the quarantine file and the checkpoint ------------------------------------------------------


def mixed_aminer(path: Path, n: int = 300) -> Path:
    """AMiner lines, every other one malformed, so that the quarantine file grows with every batch."""
    rows = []
    for i in range(n):
        if i % 2:
            rows.append(f"{{broken record {i} {'x' * 80}")
        else:
            rows.append(json.dumps({"id": f"q{i}", "title": f"Paper {i}", "abstract": "Words about graphs.",
                                    "authors": [f"Author {i % 17}"], "venue": "Venue", "year": 2000 + i % 20,
                                    "references": [f"q{i - 2}"] if i >= 2 else []}))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_disk_full_writing_the_quarantine_file(store, neo4j_settings, tmp_path):
    data = mixed_aminer(tmp_path / "mixed.jsonl")
    env = cli_env(neo4j_settings, tmp_path / "home")
    quarantine = tmp_path / "bad.jsonl"
    args = ("ingest", "aminer", str(data), "--quarantine", str(quarantine), "--batch-size", "50",
            "--max-bad-ratio", "1")
    # 25 bad records a batch, a few hundred bytes each: a batch after the first passes 10 kB.
    failed = run_cli(env, *args, fsize=10_000)
    one_clear_line(failed, "disk full", str(quarantine))
    # Only whole lines are left, those of the batches before the fault: the failed append was cut back.
    kept = quarantine.read_bytes()
    assert kept.endswith(b"\n") and all(json.loads(line)["reason"] for line in kept.splitlines())
    assert 0 < len(kept.splitlines()) < 150 and len(kept.splitlines()) % 25 == 0
    assert not leftovers(tmp_path)
    # The next run resumes after the last committed batch and ends as one run without the fault would.
    ok(run_cli(env, *args))
    resumed = [json.loads(line) for line in quarantine.read_text(encoding="utf-8").splitlines()]
    clean_quarantine = tmp_path / "clean.jsonl"
    resumed_dump = dump(neo4j_settings)
    store.reset()
    ok(run_cli(cli_env(neo4j_settings, tmp_path / "clean-home"), "ingest", "aminer", str(data), "--quarantine",
               str(clean_quarantine), "--batch-size", "50", "--max-bad-ratio", "1"))
    clean = [json.loads(line) for line in clean_quarantine.read_text(encoding="utf-8").splitlines()]
    assert [(r["line"], r["reason"]) for r in resumed] == [(r["line"], r["reason"]) for r in clean]
    assert len(clean) == 150
    assert resumed_dump == dump(neo4j_settings)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "wrong types"])
def test_a_damaged_checkpoint_says_so_and_starts_over(store, neo4j_settings, tmp_path, damage):
    data = mixed_aminer(tmp_path / "mixed.jsonl", n=120)
    home = tmp_path / "home"
    env = cli_env(neo4j_settings, home)
    args = ("ingest", "aminer", str(data), "--quarantine", str(tmp_path / "bad.jsonl"), "--batch-size", "20",
            "--max-bad-ratio", "1")
    first = ok(run_cli(env, *args))
    before = dump(neo4j_settings)
    [checkpoint] = (home / "checkpoints").glob("ingest-aminer-*.json")
    text = checkpoint.read_text()
    if damage == "truncated":
        checkpoint.write_text(text[: len(text) // 2])
    elif damage == "garbage":
        checkpoint.write_bytes(b"\x00\xff" * 40)
    else:  # valid JSON, this command's key, but nothing a resume could trust
        state = json.loads(text)
        state["files"] = {k: {"done": "many", "finished": "yes"} for k in state["files"]}
        checkpoint.write_text(json.dumps(state))
    again = ok(run_cli(env, *args))
    warning = [line for line in again.stderr.splitlines() if line.strip()]
    assert len(warning) == 1 and "checkpoint" in warning[0] and str(checkpoint) in warning[0]
    assert "damaged" in warning[0] and "from the start" in warning[0], warning
    assert "Traceback" not in again.stderr
    # Read again from the start: the same records as the first run, and the same graph (idempotent writes).
    def records(out: str) -> str:
        return next(line for line in out.splitlines() if line.strip().startswith("records"))
    assert records(again.stdout) == records(first.stdout)
    assert dump(neo4j_settings) == before
    # And a good checkpoint again: a third run skips the finished file.
    assert "already done" in ok(run_cli(env, *args)).stdout


# --- ingest --bulk: the staging files -----------------------------------------------------------------


@pytest.mark.long(reason="an offline import stops and restarts its server")
def test_disk_full_during_bulk_staging(bulk_settings, tmp_path):  # noqa: F811 (the imported fixture)
    world = tmp_path / "world"
    generate(SynthParams(papers=300, seed=3, reviewer_queries=3, citation_queries=5), world)
    corpus = world / "corpus.aminer.jsonl"
    with open_test_store(bulk_settings) as store:
        store.reset()
    env = managed_env(bulk_settings)
    imports, quarantine = tmp_path / "import", tmp_path / "bad.jsonl"
    args = ("ingest", "aminer", str(corpus), "--bulk", "--parse-workers", "0", "--import-dir", str(imports),
            "--quarantine", str(quarantine))
    # The spilled paper records pass 64 kB long before the import; the quarantine stays empty.
    assert corpus.stat().st_size > 4 * 65_536
    failed = run_cli(env, *args, fsize=65_536)
    one_clear_line(failed, "disk full", "bulk staging", str(imports))
    # Nothing half-staged is left to fill the disk, the server never stopped, the database is still empty.
    assert not imports.exists() or not any(imports.iterdir())
    with open_test_store(bulk_settings) as store:
        assert not store.has_data()
    # The next run, with room, loads everything.
    loaded = ok(run_cli(env, *args, timeout=600))
    assert "imported" in loaded.stdout
    with open_test_store(bulk_settings) as store:
        assert store.stats()["nodes"]["Paper"] > 300
        store.reset()


# --- the model registry: disk full while saving, a damaged model file or current.json ----------------------


@pytest.fixture(scope="module")
def trained_home(neo4j_settings, tmp_path_factory) -> tuple[dict, Path]:
    """A small synthetic world ingested with its topics and one rising-star model trained, in a home that each
    test copies (so each damages only its own)."""
    with open_test_store(neo4j_settings) as store:
        store.apply_schema()
        store.reset()
    base = tmp_path_factory.mktemp("trained")
    generate(SynthParams(papers=400, seed=5, reviewer_queries=3, citation_queries=5), base / "world")
    env = cli_env(neo4j_settings, base / "home")
    ok(run_cli(env, "ingest", "aminer", str(base / "world" / "corpus.aminer.jsonl")))
    ok(run_cli(env, "features", "--only", "topics"))
    ok(run_cli(env, "rising-stars", "train", "--as-of", str(AS_OF), "--horizon", str(HORIZON)))
    yield env, base / "home"
    with open_test_store(neo4j_settings) as store:
        store.reset()


def copy_home(trained_home, tmp_path: Path) -> tuple[dict, Path, Path]:
    env, home = trained_home
    mine = tmp_path / "home"
    shutil.copytree(home, mine)
    return dict(env, SCHOLARGRAPH_HOME=str(mine)), mine, mine / "models" / "rising_stars"


def train(env: dict, fsize: int | None = None) -> subprocess.CompletedProcess:
    return run_cli(env, "rising-stars", "train", "--as-of", str(AS_OF), "--horizon", str(HORIZON), fsize=fsize)


def score(env: dict) -> subprocess.CompletedProcess:
    return run_cli(env, "rising-stars", "score", "--no-write", "--format", "tsv")


@pytest.mark.long(reason="the module's trained home: ingest, topics and a rising-star model through the CLI")
def test_disk_full_saving_a_model_keeps_the_previous_one(trained_home, tmp_path):
    env, _home, registry = copy_home(trained_home, tmp_path)
    current = (registry / "current.json").read_bytes()
    expected = ok(score(env)).stdout
    # The config (about 1.6 kB) fits, the weights (about 6 kB) do not.
    failed = train(env, fsize=4096)
    one_clear_line(failed, "disk full", "iirl.pt")
    assert (registry / "current.json").read_bytes() == current
    assert not leftovers(registry) and not list(registry.rglob("iirl.pt.*"))
    assert ok(score(env)).stdout == expected  # the previous model still answers
    ok(train(env))
    assert json.loads((registry / "current.json").read_text())["version"] != json.loads(current)["version"]
    ok(score(env))


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_damaged_model_file_names_it_and_how_to_retrain(trained_home, tmp_path, damage):
    env, home, registry = copy_home(trained_home, tmp_path)
    # The copied record names the original home's directory: point it at this copy's.
    meta = json.loads((registry / "current.json").read_text())
    meta["path"] = meta["path"].replace(str(trained_home[1]), str(home))
    (registry / "current.json").write_text(json.dumps(meta))
    weights = Path(meta["path"]) / "iirl.pt"
    body = weights.read_bytes()
    weights.write_bytes({"truncated": body[: len(body) // 2], "garbage": bytes(range(256)) * 8, "empty": b""}[damage])
    line = one_clear_line(score(env), str(weights), "rising-stars train")
    assert "cannot read" in line
    ok(train(env))  # retraining publishes a new version beside the damaged one
    ok(score(env))


@pytest.mark.parametrize("damage", ["truncated", "not an object", "no path"])
def test_a_damaged_current_json_is_one_line_and_training_recovers(trained_home, tmp_path, damage):
    env, _home, registry = copy_home(trained_home, tmp_path)
    current = registry / "current.json"
    text = current.read_text()
    current.write_text({"truncated": text[: len(text) // 2], "not an object": "[1, 2]",
                        "no path": json.dumps({"version": "x"})}[damage])
    one_clear_line(score(env), str(current), "rising-stars train")
    versions = sorted(p.name for p in registry.iterdir() if p.is_dir())
    ok(train(env))
    assert len(sorted(p.name for p in registry.iterdir() if p.is_dir())) == len(versions) + 1
    ok(score(env))


# --- a damaged Parquet snapshot under `features --engine spark --snapshot DIR` -------------------------------


SPARK_STEPS = "networks,pagerank"


def damage_part(part: Path, damage: str) -> None:
    """Cut a part file in half, flip 4 bytes in the middle of a data page (of its last column, the cited ids of
    a citations part: undetected, they would name other papers), or delete it."""
    if damage == "deleted":
        part.unlink()
        return
    body = bytearray(part.read_bytes())
    if damage == "truncated":
        part.write_bytes(bytes(body[: len(body) // 2]))
        return
    meta = pq.ParquetFile(part).metadata
    column = meta.row_group(0).column(meta.num_columns - 1)
    start = column.data_page_offset  # the data page follows the dictionary page
    end = (column.dictionary_page_offset or start) + column.total_compressed_size
    for i in range((start + end) // 2, (start + end) // 2 + 4):
        body[i] ^= 0xFF
    part.write_bytes(bytes(body))


def derived_edges(settings) -> list[tuple]:
    with open_test_store(settings) as store:
        out = []
        for rel in ("COAUTHOR", "CITES_AUTHOR", "CITES_VENUE"):
            src, dst, weight = store.read_edges(rel)
            pairs = zip(src, dst) if rel != "COAUTHOR" else (tuple(sorted(p)) for p in zip(src, dst))
            out += [(rel, *pair, float(w)) for pair, w in zip(pairs, weight)]
    return sorted(out)


@pytest.mark.long(reason="ingest, features and two Parquet exports through the CLI")
@pytest.mark.parametrize("damage", ["truncated", "flipped bytes", "deleted",
                                    pytest.param("flipped bytes, then Spark", marks=SPARK_SLOW_TIER)])
def test_a_damaged_snapshot_part_stops_spark_features(store, neo4j_settings, tmp_path, damage):
    """Spark reads the parts of `--snapshot DIR` itself, without checking page checksums or the manifest: before
    the fix a deleted citations part or four flipped bytes gave other CITES_AUTHOR and CITES_VENUE weights, exit 0.
    Now the snapshot is verified before Spark starts: one line naming the part and saying to export again, and
    nothing computed or written; exported again, the snapshot reads whole and (flipped bytes) Spark computes
    what the in-process pipeline does ("then Spark", in the slow tier: a Spark job of a minute)."""
    then_spark = damage.endswith(", then Spark")
    damage = damage.removesuffix(", then Spark")
    world = tmp_path / "world"
    generate(SynthParams(papers=300, seed=3, reviewer_queries=3, citation_queries=5), world)
    env = cli_env(neo4j_settings, tmp_path / "home")
    ok(run_cli(env, "ingest", "aminer", str(world / "corpus.aminer.jsonl")))
    ok(run_cli(env, "features", "--only", SPARK_STEPS))  # in process: what the Spark run must reproduce
    expected = derived_edges(neo4j_settings)
    snap = tmp_path / "snap"
    export = ("export", "parquet", str(snap), "--rows-per-file", "1000", "--workers", "1")
    ok(run_cli(env, *export))
    good = read_snapshot(snap)
    assert read_manifest(snap)["tables"]["citations"] == [f"citations/part-{i:05d}.parquet" for i in range(3)]
    part = snap / "citations" / "part-00001.parquet"
    damage_part(part, damage)
    before = dump(neo4j_settings)

    failed = run_cli(env, "features", "--engine", "spark", "--snapshot", str(snap), "--only", SPARK_STEPS,
                     "--force")
    line = one_clear_line(failed, "citations/part-00001.parquet", f"scholargraph export parquet {snap} --overwrite",
                          code=2)
    assert ("missing" if damage == "deleted" else "is damaged") in line, line
    assert dump(neo4j_settings) == before  # no feature, no ScoringRun: Spark never started

    # The user's next run: export again (over the damaged one), then compute.
    ok(run_cli(env, *export, "--overwrite"))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".snap.")]  # no temporary or old export left
    verify_snapshot(snap)
    again = read_snapshot(snap)
    assert again.paper_ids == good.paper_ids and again.author_ids == good.author_ids
    assert (again.citations != good.citations).nnz == 0 and (again.authorship != good.authorship).nnz == 0
    if not then_spark:
        return  # one Spark run (about a minute) is enough to show the recovery
    if importlib.util.find_spec("pyspark") is None:
        if IN_CI:
            pytest.fail("the spark extra is not installed")
        pytest.skip("--engine spark needs the spark extra (pip install 'scholargraph[spark]')")
    recovered = ok(run_cli(env, "features", "--engine", "spark", "--snapshot", str(snap), "--only", SPARK_STEPS,
                           "--force", timeout=600))
    assert "(spark)" in recovered.stdout, recovered.stdout
    # Spark's run writes its edges under a new version and deletes every other: these are all Spark's.
    assert derived_edges(neo4j_settings) == expected
