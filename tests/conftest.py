"""Shared test fixtures: the real-data folder and the test Neo4j (started once per session)."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
IN_CI = bool(os.environ.get("CI"))


def require_shared_data(*parts: str) -> Path:
    """The path under ../shared/data; skips outside CI when absent, fails in CI."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        message = f"real data not found at {path} (see ../shared/data/README.md)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


def real_slice(path: Path, lines: int, out: Path) -> Path:
    """The first `lines` records of a real JSON-lines file, written to `out`: the smallest real input that shows
    a behaviour (docs/testing.md), in the file's own order and format."""
    with open(path, encoding="utf-8") as source:
        kept = [line for _, line in zip(range(lines), source)]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(kept), encoding="utf-8")
    return out


# Each pytest-xdist worker past the first has a test server of its own (Community has one user database, and the
# fault tests stop servers): its own home, and ports WORKER_PORT_STRIDE apart, which leaves room for the
# throw-away servers of each worker (Bolt P+1 and P+3, HTTP P+2 and P+4; see spare_settings and bulk_server).
WORKER_PORT_STRIDE = 10


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ... under `pytest -n N`
    return int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0


def pytest_configure(config):
    """Under xdist, point this worker's environment (and so its `scholargraph` subprocesses) at its own server:
    gw0 keeps the one scripts/test.sh started, gwN gets `<home>-gwN` and ports N*WORKER_PORT_STRIDE higher."""
    index = _worker_index()
    if index == 0:
        return
    if os.environ.get("SCHOLARGRAPH_NEO4J_URI"):
        raise pytest.UsageError("SCHOLARGRAPH_NEO4J_URI names one server, and the tests of each xdist worker need "
                                "a database of their own: run with -n 0, or unset it for the managed test servers")
    env = os.environ
    home = env.get("SCHOLARGRAPH_HOME", str(REPO / ".scholargraph-test"))
    port = int(env.get("SCHOLARGRAPH_NEO4J_PORT", "17688"))
    http = int(env.get("SCHOLARGRAPH_NEO4J_HTTP_PORT", str(port + 2)))
    env["SCHOLARGRAPH_HOME"] = f"{home}-gw{index}"
    env["SCHOLARGRAPH_NEO4J_PORT"] = str(port + index * WORKER_PORT_STRIDE)
    env["SCHOLARGRAPH_NEO4J_HTTP_PORT"] = str(http + index * WORKER_PORT_STRIDE if http else 0)
    env.pop("SCHOLARGRAPH_NEO4J_PASSWORD", None)  # the worker's server generates its own


def _test_settings():
    from scholargraph.config import Settings

    env = dict(os.environ)
    env.setdefault("SCHOLARGRAPH_HOME", str(REPO / ".scholargraph-test"))
    env.setdefault("SCHOLARGRAPH_NEO4J_PORT", "17688")
    # The Browser/HTTP port: never the default 7474 of a user's own server (scripts/test.sh sets it too).
    env.setdefault("SCHOLARGRAPH_NEO4J_HTTP_PORT", str(int(env["SCHOLARGRAPH_NEO4J_PORT"]) + 2))
    env.setdefault("SCHOLARGRAPH_HEAP", "1g")
    return Settings.load(env=env)


@pytest.fixture(scope="session")
def neo4j_settings():
    """Settings of the test server; starts it (or reuses the one `make test` started)."""
    from scholargraph.server import local_server

    settings = _test_settings()
    if settings.managed:
        if not (shutil.which("java") and (shutil.which("mvn") or local_server.running_pid(settings))):
            message = "integration tests need Java 17 and Maven (or a running test server)"
            if IN_CI:
                pytest.fail(message)
            pytest.skip(message)
        started_here = local_server.running_pid(settings) is None
        local_server.start(settings, quiet=True)
        yield settings
        if started_here:  # `make test` starts and stops its own; a bare pytest run cleans up after itself
            local_server.stop(settings)
        return
    yield settings


def cli_env(settings, home: Path) -> dict:
    """The environment a `scholargraph` subprocess needs to reach the test server, with its own home."""
    env = dict(os.environ, SCHOLARGRAPH_NEO4J_URI=settings.uri, SCHOLARGRAPH_HOME=str(home))
    env.pop("SCHOLARGRAPH_NEO4J_PASSWORD", None)
    if settings.password:  # the test server's generated password (its home's file), or an explicit one
        env["SCHOLARGRAPH_NEO4J_PASSWORD"] = settings.password
    return env


def managed_env(settings) -> dict:
    """The environment of a user of the managed server of `settings`: its home, ports and JVM, no URI and no
    password (the home's file has it), none of the test server's other settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARGRAPH_")}
    env.update(SCHOLARGRAPH_HOME=str(settings.home), SCHOLARGRAPH_NEO4J_PORT=str(settings.neo4j_port),
               SCHOLARGRAPH_NEO4J_HTTP_PORT=str(settings.neo4j_http_port), SCHOLARGRAPH_HEAP=settings.heap,
               SCHOLARGRAPH_PAGECACHE=settings.pagecache, SCHOLARGRAPH_CACHE=str(settings.cache),
               SCHOLARGRAPH_JVM_OPTIONS=settings.jvm_options)
    return env


def open_test_store(settings):
    """A store on the test server (use as a context manager)."""
    from scholargraph.graph.neo4j_store import Neo4jStore

    return Neo4jStore(settings.uri, settings.neo4j_user, settings.password, settings.neo4j_database)


@pytest.fixture
def store(neo4j_settings):
    """A store on an empty database; emptied again afterwards (Community has one user database)."""
    from scholargraph.graph.neo4j_store import Neo4jStore

    s = Neo4jStore(neo4j_settings.uri, neo4j_settings.neo4j_user, neo4j_settings.password,
                   neo4j_settings.neo4j_database)
    s.apply_schema()
    s.reset()
    yield s
    s.reset()
    s.close()


# The JVM options of the throw-away servers (and their offline importers): they live for seconds to a minute,
# and the JIT's client compiler alone halves the CPU of a start and of a little work (docs/testing.md). The test
# servers keep the default: they serve the suite's heavy ingests for half an hour, where C2's code pays.
THROWAWAY_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"


@pytest.fixture
def spare_settings(tmp_path, neo4j_settings):
    """Settings for a second, throw-away managed server (lifecycle tests must not stop the shared one).

    Ports: the test server has Bolt P and HTTP P+2 (by default); the spare one Bolt P+1 and HTTP P+4
    (P+3 is the Bolt port of the bulk-import tests' server).
    """
    return replace(neo4j_settings, home=tmp_path / "home", neo4j_port=neo4j_settings.neo4j_port + 1,
                   neo4j_http_port=neo4j_settings.neo4j_port + 4,
                   neo4j_uri=None, neo4j_password=None, heap="512m", pagecache="64m",
                   jvm_options=THROWAWAY_JVM_OPTIONS)


@pytest.fixture(scope="session")
def bulk_server(neo4j_settings, tmp_path_factory):
    """One throw-away managed server for the session's `ingest --bulk` tests (the offline importer stops and
    restarts its server, so never the shared one): Bolt P+3, no Browser."""
    if not neo4j_settings.managed:
        pytest.skip("--bulk needs the managed server (SCHOLARGRAPH_NEO4J_URI is set)")
    from scholargraph.server import local_server

    settings = replace(neo4j_settings, home=tmp_path_factory.mktemp("bulk-home"),
                       neo4j_port=neo4j_settings.neo4j_port + 3, neo4j_http_port=0, neo4j_uri=None,
                       neo4j_password=None, heap="512m", pagecache="64m", jvm_options=THROWAWAY_JVM_OPTIONS)
    local_server.start(settings, quiet=True)
    yield settings
    local_server.stop(settings)


@pytest.fixture
def bulk_settings(bulk_server):
    """The bulk tests' server, running (a fault test before may have killed or stopped it; starting a running
    one only waits until it is ready)."""
    from scholargraph.server import local_server

    local_server.start(bulk_server, quiet=True)
    return bulk_server


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local[2] SparkSession for the whole test session (the Spark engine's tests); with the connector
    jars when Maven can fetch them. Needs the spark extra: skipped outside CI without it, fails in CI."""
    from scholargraph.config import Settings
    from scholargraph.errors import UsageError
    from scholargraph.spark.session import spark_session

    try:
        from scholargraph.spark.session import require_pyspark

        require_pyspark()
    except UsageError as exc:
        if IN_CI:
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    base = _test_settings()
    settings = Settings(home=tmp_path_factory.mktemp("spark-home"), cache=base.cache, spark_driver_memory="2g")
    with spark_session(settings, "local[2]", connector=bool(shutil.which("mvn")), app="scholargraph-tests") as session:
        yield session


# Spark tests beyond the one that `make test` keeps (tests/integration/spark/test_spark_engine.py, the features
# steps): each starts local[2] jobs of a minute or more (docs/testing.md).
SPARK_SLOW_TIER = pytest.mark.slow(reason="Spark on local[2]: `make test` keeps one Spark test, the features steps")


# PySpark 3.5's own warnings, and only those (the suite makes warnings errors): its pandas version check uses
# distutils' LooseVersion; its Arrow conversions call APIs that pandas 3 deprecates (a warning raised there
# makes createDataFrame fall back to its slow path and toPandas fail); the local sockets it reads results
# through are left to the garbage collector. Applied to every test that uses the `spark` fixture.
SPARK_WARNINGS = ("distutils Version classes are deprecated:DeprecationWarning",
                  "is_categorical_dtype is deprecated:DeprecationWarning",
                  "The copy keyword is deprecated",
                  "unclosed <socket.socket:ResourceWarning")


# The suite's budget (docs/testing.md): a test that takes over LONG_TEST_S (setup, call and teardown) needs a
# `long` or `slow` marker with a reason. Over it the run lists the test; over twice it (room for a noisy
# machine) the run fails, so that the suite cannot creep back to an hour one unmarked test at a time.
LONG_TEST_S = 30.0
BUDGET_MARKERS = ("long", "slow")
_test_seconds: dict[str, float] = {}
_allowed_long: set[str] = set()


def pytest_collection_modifyitems(items):
    _long_files_first(items)
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            for message in SPARK_WARNINGS:
                item.add_marker(pytest.mark.filterwarnings(f"ignore:{message}"))
        if "/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
        for name in BUDGET_MARKERS:
            marker = item.get_closest_marker(name)
            if marker is None:
                continue
            reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "")
            if not str(reason).strip():
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{name} needs a reason (why it takes that long)")
            _allowed_long.add(item.nodeid)


def _long_files_first(items) -> None:
    """The files with `long` tests first (each file's own order kept): under xdist (`--dist loadfile`) the
    longest work starts first, instead of one worker finishing a long file alone while the other waits."""
    has_long = {item.path for item in items if item.get_closest_marker("long")}
    items.sort(key=lambda item: item.path not in has_long)


def pytest_runtest_logreport(report):
    _test_seconds[report.nodeid] = _test_seconds.get(report.nodeid, 0.0) + report.duration
    # Under xdist the controller collects nothing: a report's keywords (its markers) travel with it.
    if any(name in report.keywords for name in BUDGET_MARKERS):
        _allowed_long.add(report.nodeid)


def _failing_seconds(config) -> float:
    """Twice the bound fails the run; under N xdist workers N times that, since the workers share the cores and
    each test ran about 1.6 times slower with two of them (docs/testing.md)."""
    workers = config.getoption("numprocesses", default=None) or 1
    try:
        workers = int(workers)
    except (TypeError, ValueError):  # "auto" or "logical"
        workers = os.cpu_count() or 1
    return 2 * LONG_TEST_S * max(1, workers)


def _unmarked_long_tests(limit: float) -> list[tuple[str, float]]:
    return sorted(((nodeid, seconds) for nodeid, seconds in _test_seconds.items()
                   if seconds > limit and nodeid not in _allowed_long), key=lambda pair: -pair[1])


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == pytest.ExitCode.OK and _unmarked_long_tests(_failing_seconds(session.config)):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    over = _unmarked_long_tests(LONG_TEST_S)
    if not over:
        return
    terminalreporter.section(f"tests over {LONG_TEST_S:.0f} s without a long/slow marker (docs/testing.md)")
    failing = _failing_seconds(config)
    for nodeid, seconds in over:
        verdict = "FAILS the run" if seconds > failing else "give it a marker and a reason, or make it smaller"
        terminalreporter.write_line(f"{seconds:7.1f} s  {nodeid}: {verdict}")
