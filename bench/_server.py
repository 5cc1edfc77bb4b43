"""The Neo4j a benchmark writes to: SCHOLARGRAPH_NEO4J_URI when set, else a throw-away managed server."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scholargraph.config import Settings  # noqa: E402
from scholargraph.server import local_server  # noqa: E402


@contextmanager
def bench_server(port: int, **overrides) -> Iterator[Settings]:
    """Settings of the server to measure; a managed one lives in a temporary home for the `with` block."""
    settings = Settings.load()
    if not settings.managed:
        yield settings
        return
    with tempfile.TemporaryDirectory(prefix="sg-bench-") as home:
        # No HTTP: a benchmark needs Bolt only, and must not collide with a user's Browser on 7474.
        settings = replace(settings, home=Path(home), neo4j_port=port, **{"neo4j_http_port": 0, **overrides})
        local_server.start(settings, quiet=True)
        try:
            yield settings
        finally:
            local_server.stop(settings)
