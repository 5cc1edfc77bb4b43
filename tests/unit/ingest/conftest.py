"""Ingestion test fixtures: the hand-written fixture files and the shared real-data folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "ingest"
# Real third-party data lives beside the project, never inside it (see its README.md).
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def require_data(path: Path) -> Path:
    """`path` when it exists; otherwise skip the test, or fail it in CI (env CI set)."""
    if path.exists():
        return path
    message = f"real data not found at {path} (see ../shared/data/README.md)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI requires it")
    pytest.skip(message)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared real-data folder: skips the test when it is absent, fails it in CI."""
    return require_data(SHARED_DATA)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def shared_path(shared_data: Path):
    """shared_path('nips/x.jsonl') -> the path, with the same skip/fail rule for that one item."""
    return lambda relative: require_data(shared_data / relative)
