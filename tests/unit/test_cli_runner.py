"""The tests' in-process CLI runner (tests/cli.py) behaves as a subprocess would: the exit code and stderr of a
usage error, an exception as exit 1 with its traceback on stderr, and the environment and signal handlers of
the test process untouched afterwards."""

from __future__ import annotations

import os
import signal

import pytest

from scholargraph.synth import cli as synth_cli
from tests.cli import run


@pytest.fixture
def env(tmp_path) -> dict:
    return dict(os.environ, SCHOLARGRAPH_HOME=str(tmp_path / "home"), SCHOLARGRAPH_RUNNER_PROBE="set for the call")


def test_a_usage_error_is_exit_2_on_stderr(env):
    proc = run(env, "synth", "--papers", "many", check=False)
    assert proc.returncode == 2 and "Invalid value for '--papers'" in proc.stderr and proc.stdout == ""


def test_an_exception_is_exit_1_with_its_traceback(env, tmp_path, monkeypatch):
    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug the test must see")

    monkeypatch.setattr(synth_cli, "generate", broken)
    proc = run(env, "synth", "--papers", "200", "--out", str(tmp_path / "w"), check=False)
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "RuntimeError: a bug the test must see" in proc.stderr
    with pytest.raises(AssertionError, match="scholargraph -q synth"):
        run(env, "synth", "--papers", "200", "--out", str(tmp_path / "w2"))


def test_the_environment_and_signal_handlers_are_put_back(env, tmp_path):
    before_env, before_term = dict(os.environ), signal.getsignal(signal.SIGTERM)
    proc = run(env, "synth", "--papers", "200", "--seed", "1", "--out", str(tmp_path / "w"))
    assert proc.returncode == 0 and (tmp_path / "w" / "corpus.aminer.jsonl").is_file()
    assert dict(os.environ) == before_env and "SCHOLARGRAPH_RUNNER_PROBE" not in os.environ
    assert signal.getsignal(signal.SIGTERM) is before_term
