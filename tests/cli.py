"""Running `scholargraph` from the tests, the two ways a test needs.

`run` calls the command in this process through click's test runner: the same parsing, exit code, stdout and
stderr as a subprocess, without paying again for the interpreter and the imports of every call (a command that
loads a model imports torch: 3-4 s of CPU, which was most of what `reviewers assign` or `rising-stars score` cost
in the integration tests). The environment is exactly the one given, as a subprocess would see it, and is put
back afterwards with the signal handlers a command may install. An exception that would have ended a process
with a traceback gives exit 1 and the traceback on stderr, so `"Traceback" not in proc.stderr` still means what
it says. Warnings are errors here as everywhere in the suite.

`run_process` and `start_process` run `python -m scholargraph.cli` as a process of its own: for what needs one
(a kill, a resource limit, a timeout, a run beside another) and for the tests of the entry point itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import traceback

from click.testing import CliRunner

from tests.conftest import REPO

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _completed(args: list[str], returncode: int, stdout: str, stderr: str, check: bool):
    proc = subprocess.CompletedProcess(["scholargraph", *args], returncode, stdout, stderr)
    if check:
        assert proc.returncode == 0, f"scholargraph {' '.join(args)} -> {proc.returncode}\n{proc.stderr[-3000:]}"
    return proc


def run(env: dict, *args: str, check: bool = True, quiet: bool = True) -> subprocess.CompletedProcess:
    """`scholargraph [-q] ARGS` in this process with the environment `env`."""
    from scholargraph.cli import main

    if "SCHOLARGRAPH_NEO4J_URI" not in env and args[:1] != ("synth",):
        # A managed server the command starts would be this worker's child, never reaped once it is stopped or
        # killed (a zombie that still looks alive): such a command runs as a process of its own.
        return run_process(env, *args, check=check, quiet=quiet)
    argv = ["-q", *args] if quiet else list(args)
    saved_env, saved_handlers, saved_cwd = dict(os.environ), {s: signal.getsignal(s) for s in _SIGNALS}, os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(REPO)
    try:
        result = CliRunner().invoke(main, argv, catch_exceptions=True, prog_name="scholargraph")
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, handler in saved_handlers.items():
            signal.signal(sig, handler)
        os.chdir(saved_cwd)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # What the interpreter would have printed on the way out.
        stderr += "".join(traceback.format_exception(result.exception))
    return _completed(argv, result.exit_code, result.stdout, stderr, check)


def run_process(env: dict, *args: str, check: bool = True, quiet: bool = True, timeout: int = 900,
                **popen) -> subprocess.CompletedProcess:
    """`python -m scholargraph.cli [-q] ARGS` as a process of its own."""
    argv = ["-q", *args] if quiet else list(args)
    proc = subprocess.run([sys.executable, "-m", "scholargraph.cli", *argv], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout, **popen)
    return _completed(argv, proc.returncode, proc.stdout, proc.stderr, check)


def start_process(env: dict, *args: str, quiet: bool = True, **popen) -> subprocess.Popen:
    """The same, started: the caller waits for it, signals it or kills its session."""
    argv = ["-q", *args] if quiet else list(args)
    popen = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, "start_new_session": True,
             **popen}
    return subprocess.Popen([sys.executable, "-m", "scholargraph.cli", *argv], cwd=REPO, env=env, **popen)
