"""Saved models: one JSON config with a version beside the weights, and one registry of versions per kind."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from scholargraph.errors import NotFitted, naming_disk_full

CONFIG_FILE = "config.json"
CURRENT_FILE = "current.json"

_M = TypeVar("_M")


def write_config(directory: str | os.PathLike, model: str, version: int, config: dict, *,
                 filename: str = CONFIG_FILE, name_key: str = "model") -> Path:
    """`config.json` (or `filename`, for a layout saved before this helper) in `directory` (created): the
    model's name (under `name_key`, likewise) and code version first, then `config`."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    body = {name_key: model, "version": version, **config}
    write_atomically(out / filename, (json.dumps(body, indent=2) + "\n").encode("utf-8"))
    return out


def peek_config(directory: str | os.PathLike, *, label: str, filename: str = CONFIG_FILE,
                required: Iterable[str] = ()) -> dict:
    """The saved config as it is, unchecked (to see which model it names); NotFitted when it or a file named
    in `required` is missing, or it is not a JSON object."""
    src = Path(directory)
    missing = [name for name in (filename, *required) if not (src / name).exists()]
    if missing:
        raise NotFitted(f"no saved {label} model in {src} ({', '.join(missing)} missing)")
    try:
        config = json.loads((src / filename).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NotFitted(f"no saved {label} model in {src}: {exc}") from exc
    if not isinstance(config, dict):
        raise NotFitted(f"no saved {label} model in {src}: {filename} is not a JSON object")
    return config


def read_config(directory: str | os.PathLike, model: str, version: int, *, label: str | None = None,
                known_params: Iterable[str] | None = None, params_key: str = "params",
                required: Iterable[str] = (), filename: str = CONFIG_FILE, name_key: str = "model") -> dict:
    """The config saved by `write_config`, checked: this model, this code's version, only known parameters,
    and the files named in `required` beside it. Anything else is NotFitted with the reason."""
    src = Path(directory)
    label = label or model
    config = peek_config(src, label=label, filename=filename, required=required)
    if config.get(name_key) != model or config.get("version") != version:
        raise NotFitted(f"{src} holds {config.get(name_key)!r} version {config.get('version')!r}; this code "
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

    def claim(self, now: datetime | None = None) -> tuple[str, Path]:
        """A new version and its (new, empty) directory: of `now` (a run's start, so that its models and its
        writes share one version) unless another process claimed that microsecond first."""
        self.root.mkdir(parents=True, exist_ok=True)
        now = now or datetime.now(UTC)
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
        """The record of the model in use, or None before the first one. A damaged record is NotFitted: it
        holds the trainer's options that scoring needs, so no other version is guessed in its place."""
        hint = f"retrain with `{self.train_hint}`" if self.train_hint else "retrain the model"
        return _read_record(self.current_file, f"{hint}, which publishes a new one (the saved versions under "
                                               f"{self.root} are kept)")

    def require_current(self) -> dict:
        """The record of the model in use; NotFitted saying how to train one when there is none."""
        meta = self.current()
        if meta is None:
            hint = f": run `{self.train_hint}` first" if self.train_hint else ""
            raise NotFitted(f"no {self.label} model{hint}")
        return meta

    def load_current(self, loader: Callable[[str], _M]) -> tuple[_M, dict]:
        """The model in use, loaded by `loader` from the directory its record names, and the record; a damaged
        record or model is NotFitted saying how to train a new one."""
        meta = self.require_current()
        hint = f"train a new one with `{self.train_hint}`" if self.train_hint else "train a new one"
        if not isinstance(meta.get("path"), str):
            raise NotFitted(f"{self.current_file} is damaged (no model path): {hint}")
        try:
            return loader(meta["path"]), meta
        except NotFitted as exc:
            raise NotFitted(f"{exc} (the current {self.label} model): {hint}") from exc

    def publish(self, meta: dict) -> None:
        """Make `meta` the current record; written to a temporary file and renamed, so a reader never
        sees half of it."""
        _write_atomically(self.current_file, meta)

    def versions(self) -> list[str]:
        """Every saved version, oldest first."""
        if not self.root.exists():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))


class CurrentModels:
    """`models_dir/current.json` naming the directory in use of several kinds at once: the graph's topic model
    and text encoder ({"topics": dir, "encoder": dir}), which every model reads and `features` refreshes. Each
    kind's versions are claimed in its own ModelRegistry (`models_dir/topics/<v>`, `models_dir/encoders/<v>`)."""

    def __init__(self, models_dir: str | os.PathLike):
        self.models_dir = Path(models_dir)

    @property
    def current_file(self) -> Path:
        return self.models_dir / CURRENT_FILE

    def paths(self) -> dict[str, str]:
        """Kind -> directory of the models in use (empty before the first)."""
        return _read_record(self.current_file, "remove it and run `scholargraph features --retrain` to fit and "
                                               "publish new models") or {}

    def claim(self, kind_dir: str, now: datetime | None = None) -> tuple[str, Path]:
        """A new version of the kind saved under `kind_dir`, and its (new, empty) directory."""
        return ModelRegistry(self.models_dir, kind_dir).claim(now)

    def publish(self, paths: dict[str, str]) -> None:
        """Make these directories current (the other kinds stay as they are), atomically."""
        _write_atomically(self.current_file, {**self.paths(), **paths})


def _write_atomically(path: Path, record: dict) -> None:
    write_atomically(path, json.dumps(record, indent=2).encode("utf-8"))


def _read_record(path: Path, remedy: str) -> dict | None:
    """The JSON object in `path` (None when there is none); NotFitted naming the file and `remedy` when it is
    damaged (truncated, not JSON, not an object)."""
    try:
        record = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise NotFitted(f"{path} is damaged ({str(exc).splitlines()[0]}): {remedy}") from exc
    if not isinstance(record, dict):
        raise NotFitted(f"{path} is damaged (not a JSON object): {remedy}")
    return record


def write_atomically(path: Path, data: bytes) -> None:
    """`data` in `path`, written to a temporary file, synced and renamed: a reader (or the next run after a
    crash or a full disk) finds the old file or the new one, never half of one. DiskFull names `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with naming_disk_full(path), open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # after a failure: no partial file left to take space


def save_state(state: dict, path: str | os.PathLike) -> None:
    """A torch state dict (tensors only) in `path`, atomically. Serialised in memory first: torch.save into a
    file that meets a full disk raises a bare RuntimeError ("unexpected pos") and leaves half a file."""
    import io

    import torch

    buffer = io.BytesIO()
    torch.save(state, buffer)
    write_atomically(Path(path), buffer.getvalue())


def load_state(path: str | os.PathLike, label: str) -> dict:
    """The state dict saved by `save_state`; NotFitted naming the file when it is missing, truncated or not a
    torch file (torch raises RuntimeError, UnpicklingError or a bare EOFError for these)."""
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # any of torch's readers' errors: each means the same, an unreadable file
        said = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise NotFitted(f"cannot read the {label} model file {path} ({said})") from exc
