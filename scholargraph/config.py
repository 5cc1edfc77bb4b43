"""Settings from the environment (SCHOLARGRAPH_*) and an optional TOML file; read on demand."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

NEO4J_VERSION = "5.26.30"  # newest 5.26.x LTS that resolved from Maven Central
APOC_VERSION = "5.26.19"  # newest apoc-core of the 5.26 line that resolved
BROWSER_VERSION = "5.24.0"  # org.neo4j.client:neo4j-browser (no 5.26.x on Maven Central)
GDS_VERSION = "2.13.9"  # Graph Data Science for Neo4j 5.26 (opt-in: SCHOLARGRAPH_PLUGINS=apoc,gds)
# The Neo4j Connector for Apache Spark (Scala 2.12, Spark 3), fetched from Maven Central on first Spark run.
SPARK_CONNECTOR_VERSION = "5.0.3_for_spark_3"
DEFAULT_PORT = 7687
DEFAULT_HTTP_PORT = 7474  # the Neo4j Browser and the HTTP API of the managed server; 0 turns them off


def _default_home() -> Path:
    return Path.home() / ".local" / "share" / "scholargraph"


def _default_cache() -> Path:
    return Path.home() / ".cache" / "scholargraph"


@dataclass(frozen=True)
class Settings:
    """Everything configurable. Build with `Settings.load()`; tests build it directly."""

    home: Path = field(default_factory=_default_home)
    # Jars and the compiled launcher live outside the repository and outside `home`,
    # so that several homes (tests, demo, user) share one download.
    cache: Path = field(default_factory=_default_cache)
    neo4j_port: int = DEFAULT_PORT
    # HTTP port of the managed server (the Neo4j Browser and the HTTP API, 127.0.0.1 only); 0: no HTTP.
    neo4j_http_port: int = DEFAULT_HTTP_PORT
    # When set, commands use this server and never start the managed one.
    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: str | None = field(default=None, repr=False)
    neo4j_database: str | None = None
    java_home: str | None = None
    heap: str = "2g"
    pagecache: str = "512m"
    # Plugins of the managed server, fetched from Maven Central on first use.
    plugins: str = "apoc"
    # `--engine spark`: the master (local[N] or a cluster URL) and the driver's memory; see docs/scale-out.md.
    spark_master: str = "local[2]"
    spark_driver_memory: str = "4g"

    @property
    def managed(self) -> bool:
        return not self.neo4j_uri

    @property
    def uri(self) -> str:
        return self.neo4j_uri or f"bolt://127.0.0.1:{self.neo4j_port}"

    @property
    def database_target(self) -> str:
        """The database commands write to, as ingest checkpoints name it (server URI and database)."""
        return f"{self.uri}/{self.neo4j_database or ''}"

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    @property
    def checkpoints_dir(self) -> Path:
        return self.home / "checkpoints"

    @classmethod
    def load(cls, env: dict[str, str] | None = None, config_file: str | Path | None = None,
             **overrides) -> Settings:
        """Defaults < TOML file (`SCHOLARGRAPH_CONFIG` or `config_file`) < environment < overrides."""
        env = dict(os.environ if env is None else env)
        values: dict[str, object] = {}
        path = config_file or env.get("SCHOLARGRAPH_CONFIG")
        if path:
            with open(path, "rb") as fh:
                values.update(tomllib.load(fh).get("scholargraph", {}))
        for f in fields(cls):
            key = "SCHOLARGRAPH_" + f.name.upper()
            if env.get(key):
                values[f.name] = env[key]
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls()
        coerced: dict[str, object] = {}
        for f in fields(cls):
            if f.name not in values:
                continue
            raw = values[f.name]
            if f.name in ("home", "cache"):
                coerced[f.name] = Path(str(raw)).expanduser()
            elif f.name in ("neo4j_port", "neo4j_http_port"):
                coerced[f.name] = int(raw)
            else:
                coerced[f.name] = str(raw)
        return replace(settings, **coerced)
