"""Settings from the environment (SCHOLARGRAPH_*) and an optional TOML file; read on demand."""

from __future__ import annotations

import os
import secrets
import shlex
import stat
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from scholargraph.errors import ServerError
from scholargraph.user_files import INTEGER, ConfigError, read_toml_table

NEO4J_VERSION = "5.26.30"  # newest 5.26.x LTS that resolved from Maven Central
APOC_VERSION = "5.26.19"  # newest apoc-core of the 5.26 line that resolved
BROWSER_VERSION = "5.24.0"  # org.neo4j.client:neo4j-browser (no 5.26.x on Maven Central)
GDS_VERSION = "2.13.9"  # Graph Data Science for Neo4j 5.26 (opt-in: SCHOLARGRAPH_PLUGINS=apoc,gds)
# The Neo4j Connector for Apache Spark (Scala 2.12, Spark 3), fetched from Maven Central on first Spark run.
SPARK_CONNECTOR_VERSION = "5.0.3_for_spark_3"
DEFAULT_PORT = 7687
DEFAULT_HTTP_PORT = 7474  # the Neo4j Browser and the HTTP API of the managed server; 0 turns them off


PASSWORD_FILE = "neo4j-password"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _jvm_options(raw: str) -> str:
    """JVM options as a shell would split them, each an option (`-X...`, `-D...`): a stray word or an unclosed
    quote would make the JVM take it as its main class."""
    try:
        options = shlex.split(raw)
    except ValueError as exc:
        raise ValueError(f"jvm_options: {exc}") from None
    stray = [o for o in options if not o.startswith("-")]
    if stray:
        raise ValueError(f"jvm_options must be JVM options (each starting with -), not {stray[0]!r}"[:120])
    return raw


def _boolean(name: str, raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in _TRUE | _FALSE:
        return text in _TRUE
    raise ValueError(f"{name} must be on or off, not {raw!r}")


def read_password_file(path: Path) -> str | None:
    """The password kept in `path`, or None when there is none. Like ssh with a private key, a file that
    other accounts can read is refused rather than used: the password may already be known to them."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ServerError(f"the password file {path} is readable by other accounts (mode "
                              f"{stat.S_IMODE(mode):04o}): run chmod 600 {path}, or remove it to have a new "
                              "password generated on the next start of the server")
    return path.read_text(encoding="utf-8").strip() or None


def ensure_password_file(home: Path) -> str:
    """The home's password, generated on first use: the home becomes 0700 and the file is created 0600
    (never with wider permissions, not even for a moment); a start racing this one reads the winner's."""
    home.mkdir(parents=True, exist_ok=True)
    os.chmod(home, 0o700)
    path = home / PASSWORD_FILE
    existing = read_password_file(path)
    if existing:
        return existing
    tmp = home / f".{PASSWORD_FILE}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(secrets.token_urlsafe(32) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # fails when another start created it first: theirs is kept
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
    password = read_password_file(path)
    if not password:
        raise ServerError(f"the password file {path} is empty: remove it to have a new one generated")
    return password


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
    # An explicit password (SCHOLARGRAPH_NEO4J_PASSWORD); without it the managed server's password file.
    neo4j_password: str | None = field(default=None, repr=False)
    # Authentication of the managed server: on unless turned off explicitly (SCHOLARGRAPH_NEO4J_AUTH=off,
    # `neo4j start --no-auth`) for a throw-away server.
    neo4j_auth: bool = True
    neo4j_database: str | None = None
    java_home: str | None = None
    heap: str = "2g"
    pagecache: str = "512m"
    # Plugins of the managed server, fetched from Maven Central on first use.
    plugins: str = "apoc"
    # Class-data sharing for the managed server (SCHOLARGRAPH_CLASS_ARCHIVE=off turns it off): the first start
    # archives the classes it loaded when it stops, and later starts map them (server/local_server.py).
    class_archive: bool = True
    # More options for the JVMs scholargraph starts (the managed server and `ingest --bulk`'s importer), after
    # its own, so they win: a collector, or `-XX:TieredStopAtLevel=1` for short-lived servers (the test suite's).
    jvm_options: str = ""
    # `--engine spark`: the master (local[N] or a cluster URL) and the driver's memory; see docs/scale-out.md.
    spark_master: str = "local[2]"
    spark_driver_memory: str = "4g"

    @property
    def managed(self) -> bool:
        return not self.neo4j_uri

    @property
    def jvm_option_list(self) -> list[str]:
        return shlex.split(self.jvm_options)

    @property
    def uri(self) -> str:
        return self.neo4j_uri or f"bolt://127.0.0.1:{self.neo4j_port}"

    @property
    def password_file(self) -> Path:
        """The managed server's generated password (mode 0600, in a home of mode 0700)."""
        return self.home / PASSWORD_FILE

    @property
    def password(self) -> str | None:
        """The password to connect with: the explicit one, else the password file when there is one."""
        if self.neo4j_password:
            return self.neo4j_password
        return read_password_file(self.password_file)

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
        origin: dict[str, str] = {}  # where each value came from, for the one line a bad one gets
        path = config_file or env.get("SCHOLARGRAPH_CONFIG")
        if path:
            values.update(read_toml_table(path, "scholargraph", "--config"))
            origin.update({name: f"--config {path}" for name in values})
        for f in fields(cls):
            key = "SCHOLARGRAPH_" + f.name.upper()
            if env.get(key):
                values[f.name] = env[key]
                origin[f.name] = key
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls()
        coerced: dict[str, object] = {}
        for f in fields(cls):
            if f.name not in values:
                continue
            raw = values[f.name]
            try:
                if f.name in ("neo4j_auth", "class_archive"):
                    coerced[f.name] = _boolean(f.name, raw)
                elif f.name in ("neo4j_port", "neo4j_http_port"):
                    if isinstance(raw, bool) or not isinstance(raw, int | str) or not INTEGER.match(str(raw)):
                        raise ValueError(f"{f.name} must be an integer, not {raw!r}"[:120])
                    coerced[f.name] = int(raw)
                elif not isinstance(raw, str | int) or isinstance(raw, bool):  # a TOML list, table or flag
                    raise ValueError(f"{f.name} must be a string, not {raw!r}"[:120])
                elif f.name in ("home", "cache"):
                    try:
                        coerced[f.name] = Path(str(raw)).expanduser()
                    except RuntimeError:  # `~name/...` of an account this machine does not know
                        raise ValueError(f"{f.name} must be a path whose ~user exists, not {raw!r}"[:120]) from None
                elif f.name == "jvm_options":
                    coerced[f.name] = _jvm_options(str(raw))
                else:
                    coerced[f.name] = str(raw)
            except ValueError as exc:
                raise ConfigError(f"{origin.get(f.name, 'settings')}: {exc}") from None
        return replace(settings, **coerced)
