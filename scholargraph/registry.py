"""Saved models: one JSON config with a version beside the weights, and one registry of versions per kind."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from scholargraph.errors import NotFitted

CONFIG_FILE = "config.json"
CURRENT_FILE = "current.json"


def write_config(directory: str | os.PathLike, model: str, version: int, config: dict, *,
                 filename: str = CONFIG_FILE) -> Path:
    """`config.json` (or `filename`, for a layout saved before this helper) in `directory` (created): the
    model's name and code version first, then `config`."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    body = {"model": model, "version": version, **config}
    (out / filename).write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    return out


def read_config(directory: str | os.PathLike, model: str, version: int, *, label: str | None = None,
                known_params: Iterable[str] | None = None, params_key: str = "params",
                required: Iterable[str] = (), filename: str = CONFIG_FILE) -> dict:
    """The config saved by `write_config`, checked: this model, this code's version, only known parameters,
    and the files named in `required` beside it. Anything else is NotFitted with the reason."""
    src = Path(directory)
    label = label or model
    missing = [name for name in (filename, *required) if not (src / name).exists()]
    if missing:
        raise NotFitted(f"no saved {label} model in {src} ({', '.join(missing)} missing)")
    try:
        config = json.loads((src / filename).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NotFitted(f"no saved {label} model in {src}: {exc}") from exc
    if not isinstance(config, dict):
        raise NotFitted(f"no saved {label} model in {src}: {filename} is not a JSON object")
    if config.get("model") != model or config.get("version") != version:
        raise NotFitted(f"{src} holds {config.get('model')!r} version {config.get('version')!r}; this code "
                        f"reads {model!r} version {version}: retrain it")
    if known_params is not None:
        unknown = set(config.get(params_key, {})) - set(known_params)
        if unknown:
            raise NotFitted(f"{src}: unknown {label} parameters {sorted(unknown)}")
    return config


def new_version(now: datetime | None = None) -> str:
    """A sortable UTC timestamp to the microsecond: two trainings in one second get two versions."""
    return (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%f")


class ModelRegistry:
    """The models of one kind under `models_dir/<kind>/<version>/`, and `current.json` naming the one in use
    (with whatever the trainer records about it: its path, version, options, data sizes).

    Versions are claimed by creating their directory, so two processes training at once never share one."""

    def __init__(self, models_dir: str | os.PathLike, kind: str, *, train_hint: str = "", label: str | None = None):
        self.root = Path(models_dir) / kind
        self.kind = kind
        self.train_hint = train_hint
        self.label = label or kind  # how messages name the model ("rising-star" for the kind "rising_stars")

    @property
    def current_file(self) -> Path:
        return self.root / CURRENT_FILE

    def claim(self) -> tuple[str, Path]:
        """A new version and its (new, empty) directory."""
        self.root.mkdir(parents=True, exist_ok=True)
        now = datetime.now(UTC)
        while True:
            version = new_version(now)
            path = self.root / version
            try:
                path.mkdir()
            except FileExistsError:
                now = now.replace(microsecond=(now.microsecond + 1) % 1_000_000)
                continue
            return version, path

    def has_current(self) -> bool:
        return self.current_file.exists()

    def current(self) -> dict | None:
        """The record of the model in use, or None before the first one."""
        if not self.current_file.exists():
            return None
        return json.loads(self.current_file.read_text(encoding="utf-8"))

    def require_current(self) -> dict:
        """The record of the model in use; NotFitted saying how to train one when there is none."""
        meta = self.current()
        if meta is None:
            hint = f": run `{self.train_hint}` first" if self.train_hint else ""
            raise NotFitted(f"no {self.label} model{hint}")
        return meta

    def publish(self, meta: dict) -> None:
        """Make `meta` the current record; written to a temporary file and renamed, so a reader never
        sees half of it."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.current_file.with_name(f".{CURRENT_FILE}.{os.getpid()}")
        tmp.write_text(json.dumps(meta, indent=2), encoding="utf-8")
        os.replace(tmp, self.current_file)

    def versions(self) -> list[str]:
        """Every saved version, oldest first."""
        if not self.root.exists():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))
