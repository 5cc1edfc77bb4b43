"""The model registry and the saved-config check that every model shares."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from scholargraph.errors import NotFitted
from scholargraph.registry import CurrentModels, ModelRegistry, new_version, peek_config, read_config, write_config


def test_two_claims_in_one_microsecond_get_two_versions(tmp_path):
    registry = ModelRegistry(tmp_path, "reviewers")
    claimed = [registry.claim() for _ in range(50)]
    versions = [v for v, _ in claimed]
    assert len(set(versions)) == 50
    assert all(path.is_dir() and path.parent == tmp_path / "reviewers" for _, path in claimed)
    assert registry.versions() == sorted(versions)
    assert all(len(v) == len("20261202T001500123456") for v in versions)


def test_current_is_none_before_publish_and_require_names_the_trainer(tmp_path):
    registry = ModelRegistry(tmp_path, "citations", train_hint="scholargraph citations train")
    assert registry.current() is None and not registry.has_current()
    with pytest.raises(NotFitted, match="run `scholargraph citations train` first"):
        registry.require_current()
    version, path = registry.claim()
    registry.publish({"version": version, "path": str(path)})
    assert registry.require_current() == {"version": version, "path": str(path)}
    assert json.loads((tmp_path / "citations" / "current.json").read_text())["version"] == version
    assert not list((tmp_path / "citations").glob(".current.json*"))  # no temporary file left


def test_read_config_checks_model_version_params_and_files(tmp_path):
    write_config(tmp_path / "m", "Thing", 2, {"params": {"a": 1}})
    assert read_config(tmp_path / "m", "Thing", 2, known_params=["a"])["params"] == {"a": 1}
    with pytest.raises(NotFitted, match="version 2; this code reads 'Thing' version 3"):
        read_config(tmp_path / "m", "Thing", 3)
    with pytest.raises(NotFitted, match="holds 'Thing'"):
        read_config(tmp_path / "m", "Other", 2)
    with pytest.raises(NotFitted, match=r"unknown Thing parameters \['a'\]"):
        read_config(tmp_path / "m", "Thing", 2, known_params=["b"])
    with pytest.raises(NotFitted, match=r"state.pt missing"):
        read_config(tmp_path / "m", "Thing", 2, required=["state.pt"])
    with pytest.raises(NotFitted, match="config.json missing"):
        read_config(tmp_path / "nothing", "Thing", 2)


def test_a_config_may_name_its_model_under_another_key_and_be_peeked_unchecked(tmp_path):
    write_config(tmp_path / "e", "tfidf", 1, {"dim": 8}, name_key="encoder")
    assert peek_config(tmp_path / "e", label="encoder") == {"encoder": "tfidf", "version": 1, "dim": 8}
    assert read_config(tmp_path / "e", "tfidf", 1, name_key="encoder")["dim"] == 8
    with pytest.raises(NotFitted, match="holds 'tfidf' version 1; this code reads 'minilm'"):
        read_config(tmp_path / "e", "minilm", 1, name_key="encoder")
    with pytest.raises(NotFitted, match="no saved encoder model"):
        peek_config(tmp_path / "nothing", label="encoder")


def test_current_models_name_several_kinds_each_claimed_in_its_own_registry(tmp_path):
    current = CurrentModels(tmp_path)
    assert current.paths() == {}
    started = datetime(2026, 12, 2, 0, 15, 0, 123456, tzinfo=UTC)
    version, topics = current.claim("topics", started)
    assert version == new_version(started) == "20261202T001500123456" and topics == tmp_path / "topics" / version
    again, other = current.claim("topics", started)  # that microsecond is taken: the next one
    assert again == "20261202T001500123457" and other.is_dir()
    _, encoder = current.claim("encoders", started)
    assert encoder == tmp_path / "encoders" / version  # another kind: the run's own version
    current.publish({"topics": str(topics)})
    current.publish({"encoder": str(encoder)})
    assert current.paths() == {"topics": str(topics), "encoder": str(encoder)}
    assert json.loads((tmp_path / "current.json").read_text()) == current.paths()
    assert not list(tmp_path.glob(".current.json*"))
