"""Checkpoints belong to one command: format, inputs, quarantine file and target database."""

from __future__ import annotations

from scholargraph.ingest.loader import Checkpoint


def test_the_same_dump_into_another_database_has_its_own_checkpoint(tmp_path):
    dump = tmp_path / "dump.jsonl"
    dump.write_text("{}\n")
    q = tmp_path / "q.jsonl"
    one = Checkpoint.for_command(tmp_path / "ckpt", "aminer", [str(dump)], q, "bolt://127.0.0.1:7687/")
    same = Checkpoint.for_command(tmp_path / "ckpt", "aminer", [str(dump)], q, "bolt://127.0.0.1:7687/")
    other = Checkpoint.for_command(tmp_path / "ckpt", "aminer", [str(dump)], q, "bolt://127.0.0.1:7688/")
    assert one.path == same.path and one.path != other.path
    assert Checkpoint.for_command(tmp_path / "ckpt", "openalex", [str(dump)], q).path != one.path
