"""The record of an offline import in progress (`ingest --bulk`): a half import is removed by the next start,
the last steps of a finished one are done by the next command that opens the database."""

from __future__ import annotations

import subprocess
import sys

import pytest

from scholargraph.config import Settings
from scholargraph.errors import ServerError
from scholargraph.server import connect, local_server


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(home=tmp_path / "home")


def half_import(settings: Settings) -> list:
    """Store files of the default database, as neo4j-admin leaves them when it is killed, and the system one's."""
    data = settings.home / "neo4j" / "data"
    made = []
    for sub in ("databases", "transactions"):
        for db in ("neo4j", "system"):
            (data / sub / db).mkdir(parents=True)
            (data / sub / db / "neostore").write_bytes(b"x")
            made.append(data / sub / db)
    return made


def test_the_state_round_trips_and_a_damaged_record_counts_as_an_unfinished_import(settings):
    settings.home.mkdir()
    assert local_server.import_state(settings) is None
    local_server.set_import_state(settings, phase="imported", after={"fill_empty_sources": True})
    assert local_server.import_state(settings) == {"phase": "imported", "after": {"fill_empty_sources": True}}
    (settings.home / "neo4j-import.json").write_text("{half")
    assert local_server.import_state(settings) == {"phase": "importing"}
    local_server.clear_import_state(settings)
    assert local_server.import_state(settings) is None


def test_a_start_removes_an_interrupted_import_with_one_warning(settings, tmp_path, capsys):
    made = half_import(settings)
    work = tmp_path / "import" / "bulk-20260101-000000-aminer"
    (work / "csv").mkdir(parents=True)
    # pids of no living process: the ingest and its importer were killed
    local_server.set_import_state(settings, phase="importing", pid=2**22 + 1, importer=2**22 + 2,
                                  started="2026-01-01T00:00:00Z", work=str(work))
    local_server._recover_interrupted_import(settings)
    assert [p.exists() for p in made] == [False, True, False, True]  # the default database's only
    assert not work.exists() and local_server.import_state(settings) is None
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("scholargraph: warning: an `ingest --bulk` was stopped during its "
                                               "import (started 2026-01-01T00:00:00Z)")
    local_server._recover_interrupted_import(settings)  # nothing left to do
    assert not capsys.readouterr().err


def test_a_start_waits_for_an_import_that_still_runs(settings):
    made = half_import(settings)
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "scholargraph"]) as ingest:
        try:
            local_server.set_import_state(settings, phase="importing", pid=ingest.pid)
            with pytest.raises(ServerError, match="is importing into the database"):
                local_server._recover_interrupted_import(settings)
        finally:
            ingest.kill()
    assert all(p.exists() for p in made) and local_server.import_state(settings)["phase"] == "importing"


def test_a_finished_import_keeps_its_store_at_the_start(settings):
    made = half_import(settings)
    local_server.set_import_state(settings, phase="imported", after={})
    local_server._recover_interrupted_import(settings)
    assert all(p.exists() for p in made) and local_server.import_state(settings)["phase"] == "imported"


class RecordingStore:
    def __init__(self, migrated: bool = False):
        self.calls: list[str] = []
        self.migrated = migrated

    def fill_empty_sources(self):
        self.calls.append("fill_empty_sources")

    def apply_schema(self):
        self.calls.append("apply_schema")

    def ids_migrated(self):
        return self.migrated

    def migrate_ids(self):
        self.calls.append("migrate_ids")


@pytest.mark.parametrize("fill", [True, False])
def test_opening_the_database_finishes_a_finished_import(settings, fill):
    settings.home.mkdir()
    store = RecordingStore()
    assert not connect.finish_import(settings, store)  # nothing recorded: nothing to do
    local_server.set_import_state(settings, phase="importing")
    assert not connect.finish_import(settings, store) and not store.calls  # a half import is the start's
    local_server.set_import_state(settings, phase="imported", after={"fill_empty_sources": fill})
    assert connect.finish_import(settings, store)
    assert store.calls == ["fill_empty_sources"] * fill + ["apply_schema", "migrate_ids"]
    assert local_server.import_state(settings) is None
