"""Unit tests: a warning is a failure (a deprecated API or an unclosed resource shows up here first).

The integration tests do not turn warnings into errors yet: several drive CLI subprocesses through pipes
they do not close (tests/integration/ingest), which pytest reports as unraisable ResourceWarnings."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/unit/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.filterwarnings("error"))
