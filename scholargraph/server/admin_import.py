"""Neo4j's offline importer (`neo4j-admin database import full`) run on the managed server's store.

The importer writes store files directly, so the server must be stopped while it runs; it replaces the
default database (`--overwrite-destination`), which the caller has checked is empty. Half an import is a
store Neo4j cannot open, so the import's phase is recorded in the home (`local_server.import_state`): a
failed or interrupted import is removed (here, or by the next start when this process was killed), and the
steps after a finished one are done by whichever command opens the database next (`connect.finish_import`).
The entry point is `org.neo4j.cli.AdminTool` from the jars `local_server.provision` fetched; it reads NEO4J_HOME
and NEO4J_CONF, here the managed server's home (the embedded DBMS keeps its store under <home>/neo4j).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from scholargraph.config import Settings
from scholargraph.errors import ServerError
from scholargraph.server import local_server

ADMIN_TOOL = "org.neo4j.cli.AdminTool"
DATABASE = local_server.DEFAULT_DATABASE  # Community Edition's one user database


def import_command(files: dict[str, list[str]], array_delimiter: str, report: Path,
                   multiline: bool = True) -> list[str]:
    """The `neo4j-admin` arguments for CSV files given as 'Label=path' (nodes) and 'TYPE=path'.
    `multiline`: whether a field may hold a line break; the importer reads files in parallel chunks only
    without them, so the caller says when none has one."""
    # The database name goes first: --nodes/--relationships take a variable number of files.
    args = ["database", "import", "full", DATABASE, "--overwrite-destination=true", "--id-type=INTEGER",
            f"--array-delimiter=U+{ord(array_delimiter):04X}", f"--multiline-fields={str(multiline).lower()}",
            "--skip-bad-relationships=false", "--skip-duplicate-nodes=false", f"--report-file={report}"]
    args += [f"--nodes={spec}" for spec in files["nodes"]]
    args += [f"--relationships={spec}" for spec in files["relationships"]]
    return args


@dataclass(frozen=True)
class ImportRun:
    seconds: float
    peak_memory: str | None  # as the importer reports it ("1.004GiB")


def _die_with_parent(parent: int) -> Callable[[], None]:
    """The importer's preexec_fn: on Linux it is SIGKILLed when this process dies, so that a killed
    `ingest --bulk` never leaves an importer writing the store on its own (while a start opens it)."""
    prctl = None
    if sys.platform.startswith("linux"):  # looked up here: the forked child must not import anything
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    kill = int(signal.SIGKILL)

    def arm() -> None:
        if prctl is not None:
            prctl(1, kill)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(1)
    return arm


def run_import(settings: Settings, files: dict[str, list[str]], array_delimiter: str, work_dir: Path,
               quiet: bool = False, multiline: bool = True, after: dict | None = None) -> ImportRun:
    """Stop the managed server, import `files` into its default database, start it again. Raises
    ServerError (with the importer's last lines) when it fails; the server is started again either way, on
    the database as it was when the import failed or was interrupted (empty), or as imported. `after`: what
    `connect.finish_import` does once the import finished (recorded, so that it is done even when this
    process cannot)."""
    if not settings.managed:
        raise ServerError("the offline importer needs the managed local Neo4j; with SCHOLARGRAPH_NEO4J_URI set, "
                          "run neo4j-admin database import on that server (or ingest without --bulk)")
    runtime = local_server.provision(settings, quiet=True)
    home = settings.home / "neo4j"
    conf_dir = work_dir / "conf"
    conf_dir.mkdir(parents=True, exist_ok=True)
    (conf_dir / "neo4j.conf").write_text(
        f"server.directories.data={home / 'data'}\nserver.directories.logs={settings.home / 'logs'}\n")
    env = dict(os.environ, NEO4J_HOME=str(home), NEO4J_CONF=str(conf_dir))
    log_path = work_dir / "import.log"
    cmd = [local_server._java(settings), f"-Xmx{settings.heap}", "-Dfile.encoding=UTF-8", *settings.jvm_option_list,
           "-cp", str(runtime / "lib" / "*"), ADMIN_TOOL,
           *import_command(files, array_delimiter, work_dir / "import.report", multiline)]
    local_server.stop(settings)
    started = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    state = {"pid": os.getpid(), "started": started, "work": str(work_dir)}
    local_server.set_import_state(settings, phase="importing", **state)
    finished = False
    t0 = time.perf_counter()
    try:
        with open(log_path, "w") as log:
            with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                  stdin=subprocess.DEVNULL,
                                  preexec_fn=_die_with_parent(os.getpid())) as proc:  # closes the pipe when done
                try:
                    local_server.set_import_state(settings, phase="importing", importer=proc.pid, **state)
                    assert proc.stdout is not None
                    for line in proc.stdout:  # the importer's own progress, shown unless --quiet
                        log.write(line)
                        if not quiet:
                            sys.stderr.write(line)
                    code = proc.wait()
                except BaseException:
                    proc.kill()  # interrupted here: the importer must not go on writing alone
                    raise
        seconds = time.perf_counter() - t0
        if code != 0:
            lines = [ln.strip() for ln in log_path.read_text(errors="replace").splitlines()]
            said = [ln for ln in lines if ln and not ln.startswith("at ")][-2:]  # not the stack trace
            raise ServerError(f"neo4j-admin database import failed (exit {code}): {' | '.join(said)} "
                              f"(log: {log_path}); the database is empty again")
        local_server.set_import_state(settings, phase="imported", after=after or {}, **state)
        finished = True
        peak = re.search(r"Peak memory usage: (\S+)", log_path.read_text(errors="replace"))
        return ImportRun(seconds, peak.group(1) if peak else None)
    finally:
        if not finished:
            # Failed or interrupted: what it wrote is half a database, which Neo4j would refuse to open.
            local_server.discard_partial_import(settings)
            local_server.clear_import_state(settings)
        local_server.start(settings, quiet=True)
