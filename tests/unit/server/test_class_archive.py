"""Class-data sharing of the managed server: the first start of a runtime writes an archive when it stops, later
starts map it, and a server that did not stop cleanly never leaves a file that a later start would map."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from scholargraph.config import Settings
from scholargraph.server import local_server


@pytest.fixture
def runtime(tmp_path) -> tuple[Settings, Path, str, list[Path]]:
    settings = Settings(home=tmp_path / "home", cache=tmp_path / "cache")
    (settings.home / "run").mkdir(parents=True)
    runtime = tmp_path / "runtime"
    (runtime / "lib").mkdir(parents=True)
    jars = []
    for name in ("a.jar", "b.jar"):
        (runtime / "lib" / name).write_bytes(name.encode())
        jars.append(runtime / "lib" / name)
    java = tmp_path / "java"
    java.write_text("#!/bin/sh\n")
    return settings, runtime, str(java), jars


def _option(options: list[str], name: str) -> Path | None:
    found = [o.split("=", 1)[1] for o in options if o.startswith(f"-XX:{name}=")]
    return Path(found[0]) if found else None


def test_a_clean_stop_puts_the_archive_in_place_and_the_next_start_maps_it(runtime):
    settings, folder, java, jars = runtime
    first = local_server._class_archive_options(settings, folder, java, jars)
    pending = _option(first, "ArchiveClassesAtExit")
    assert pending is not None and _option(first, "SharedArchiveFile") is None
    pending.write_bytes(b"classes")  # what the JVM writes as it exits
    local_server._settle_class_archive(settings, clean_exit=True)
    archive = local_server._archive_file(folder, java, jars, [])
    assert archive.read_bytes() == b"classes" and not pending.exists()
    again = local_server._class_archive_options(settings, folder, java, jars)
    assert _option(again, "SharedArchiveFile") == archive and _option(again, "ArchiveClassesAtExit") is None


def test_a_new_archive_removes_those_no_start_mapped_for_thirty_days(runtime, tmp_path):
    settings, folder, java, jars = runtime
    month_ago = time.time() - (local_server.ARCHIVE_UNUSED_DAYS + 1) * 86_400
    archives = folder / "class-archives"
    archives.mkdir()
    stale, recent = archives / "classes-0000000000000000.jsa", archives / "classes-1111111111111111.jsa"
    in_use = local_server._archive_file(folder, java, jars, ["-XX:TieredStopAtLevel=1"])
    for path in (stale, recent, in_use):
        path.write_bytes(b"classes")
        os.utime(path, (month_ago, month_ago))
    os.utime(recent)  # mapped last week
    # A start that maps an old archive marks its use.
    options = replace(settings, jvm_options="-XX:TieredStopAtLevel=1")
    assert _option(local_server._class_archive_options(options, folder, java, jars), "SharedArchiveFile") == in_use
    assert in_use.stat().st_mtime > month_ago
    first = local_server._class_archive_options(settings, folder, java, jars)
    _option(first, "ArchiveClassesAtExit").write_bytes(b"classes")
    local_server._settle_class_archive(settings, clean_exit=True)
    assert sorted(p.name for p in archives.glob("*.jsa")) == sorted(
        [recent.name, in_use.name, local_server._archive_file(folder, java, jars, []).name])


@pytest.mark.parametrize("written", [True, False], ids=["written, then killed", "killed before writing"])
def test_a_server_that_did_not_stop_cleanly_leaves_no_archive(runtime, written):
    settings, folder, java, jars = runtime
    pending = _option(local_server._class_archive_options(settings, folder, java, jars), "ArchiveClassesAtExit")
    if written:
        pending.write_bytes(b"half")
    local_server._settle_class_archive(settings, clean_exit=False)  # what the next start does first
    assert not pending.exists() and not local_server._archive_file(folder, java, jars, []).exists()
    assert _option(local_server._class_archive_options(settings, folder, java, jars), "ArchiveClassesAtExit")


def test_another_jdk_other_options_or_a_changed_jar_get_an_archive_of_their_own(runtime, tmp_path):
    settings, folder, java, jars = runtime
    archive = local_server._archive_file(folder, java, jars, [])
    other_java = tmp_path / "java17"
    other_java.write_text("#!/bin/sh\n")
    assert local_server._archive_file(folder, str(other_java), jars, []) != archive
    assert local_server._archive_file(folder, java, jars, ["-XX:TieredStopAtLevel=1"]) != archive
    jars[0].write_bytes(b"a newer build")
    assert local_server._archive_file(folder, java, jars, []) != archive


def test_it_can_be_turned_off(runtime):
    settings, folder, java, jars = runtime
    off = Settings.load(env={"SCHOLARGRAPH_CLASS_ARCHIVE": "off"})
    assert off.class_archive is False
    assert local_server._class_archive_options(off, folder, java, jars) == []


def test_jvm_options_are_split_as_a_shell_would_and_must_be_options():
    settings = Settings.load(env={"SCHOLARGRAPH_JVM_OPTIONS": "-XX:TieredStopAtLevel=1 '-Dname=a b'"})
    assert settings.jvm_option_list == ["-XX:TieredStopAtLevel=1", "-Dname=a b"]
    assert Settings.load(env={}).jvm_option_list == []
    from scholargraph.user_files import ConfigError

    for bad, why in (("-Xss1m Main", "not 'Main'"), ("-Dx='unclosed", "No closing quotation")):
        with pytest.raises(ConfigError, match=why):
            Settings.load(env={"SCHOLARGRAPH_JVM_OPTIONS": bad})
