"""The managed local Neo4j (the embedded default): provision, start, stop, status, logs."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from scholargraph.config import (
    APOC_VERSION,
    BROWSER_VERSION,
    GDS_VERSION,
    NEO4J_VERSION,
    Settings,
    ensure_password_file,
)
from scholargraph.errors import ServerError
from scholargraph.registry import write_atomically
from scholargraph.server import browser_guide, jar_signatures

LAUNCHER_CLASS = "ScholargraphNeo4j"
DEFAULT_DATABASE = "neo4j"  # Community Edition's one user database: the one `ingest --bulk` imports into
_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>scholargraph</groupId><artifactId>neo4j-runtime</artifactId><version>{neo4j}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j</artifactId><version>{neo4j}</version></dependency>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j-bolt</artifactId><version>{neo4j}</version></dependency>
    <!-- neo4j-admin database import (ingest with the bulk flag): the offline importer, its entry point -->
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j-import-tool</artifactId><version>{neo4j}</version></dependency>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j-command-line</artifactId><version>{neo4j}</version></dependency>
    <!-- Neo4j Browser, served by the HTTP connector from the classpath (5.26.x is not on Maven Central) -->
    <dependency><groupId>org.neo4j.client</groupId><artifactId>neo4j-browser</artifactId><version>{browser}</version></dependency>
  </dependencies>
</project>
"""


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    uri: str
    version: str | None
    store_bytes: int
    home: Path
    # The Neo4j Browser (http://127.0.0.1:PORT/browser/), or None when the HTTP port is 0 / was off.
    browser_url: str | None = None
    # Whether the running server asks for a password (None: not running, or started before this was kept).
    auth: bool | None = None
    # Where the password is when it is the generated one (None: an explicit password, or auth off).
    password_file: Path | None = None


def _runtime_dir(settings: Settings) -> Path:
    return settings.cache / f"neo4j-{NEO4J_VERSION}"


def _run_dir(settings: Settings) -> Path:
    return settings.home / "run"


def _pid_file(settings: Settings) -> Path:
    return _run_dir(settings) / "neo4j.pid"


def _port_file(settings: Settings) -> Path:
    return _run_dir(settings) / "port"


def _http_port_file(settings: Settings) -> Path:
    return _run_dir(settings) / "http_port"


def _auth_file(settings: Settings) -> Path:
    """Whether the running server was started with authentication ("on" / "off")."""
    return _run_dir(settings) / "auth"


def _running_auth(settings: Settings) -> bool | None:
    try:
        return _auth_file(settings).read_text().strip() == "on"
    except OSError:
        return None  # a server started before the file was kept: it ran with the old default, auth off


def _browser_jar(settings: Settings) -> Path:
    """The Neo4j Browser jar with the query library's guide added (see browser_guide)."""
    return settings.home / "browser" / f"neo4j-browser-{BROWSER_VERSION}-scholargraph.jar"


def log_file(settings: Settings) -> Path:
    return settings.home / "logs" / "server.log"


def _java(settings: Settings) -> str:
    java_home = settings.java_home or os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.exists():
            return str(candidate)
    found = shutil.which("java")
    if not found:
        raise ServerError("Java 17+ is required for the managed Neo4j: install a JDK (e.g. openjdk-17-jdk)")
    return found


def _javac(settings: Settings) -> str:
    java = Path(_java(settings)).resolve()
    candidate = java.parent / "javac"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("javac")
    if not found:
        raise ServerError("javac not found: install a JDK (not only a JRE) to build the Neo4j launcher")
    return found


def _launcher_source() -> str:
    return resources.files("scholargraph.server").joinpath("java", f"{LAUNCHER_CLASS}.java").read_text()


def fetch_maven_jars(runtime: Path, pom: str, what: str, quiet: bool = True, args: tuple[str, ...] = ()) -> Path:
    """The jars of `pom`'s dependencies in runtime/lib, fetched with Maven once (`what` names them in messages).

    The marker holds the POM they were fetched with: a runtime from an older POM is fetched again."""
    lib = runtime / "lib"
    marker = lib / ".complete"
    if not marker.exists() or marker.read_text() != pom:
        mvn = shutil.which("mvn")
        if not mvn:
            raise ServerError(f"Maven (mvn) is required once to fetch the {what}: install maven")
        runtime.mkdir(parents=True, exist_ok=True)
        (runtime / "pom.xml").write_text(pom)
        shutil.rmtree(lib, ignore_errors=True)
        cmd = [mvn, "-B", "-q", "-f", str(runtime / "pom.xml"), "dependency:copy-dependencies", *args,
               f"-DoutputDirectory={lib}"]
        if not quiet:
            print(f"fetching the {what} into {lib} ...", file=sys.stderr, flush=True)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            raise ServerError(f"could not fetch the {what} from Maven: {' | '.join(tail)}")
        marker.write_text(pom)
    return lib


def provision(settings: Settings, quiet: bool = False) -> Path:
    """Download the Neo4j jars (and APOC core when it resolves) and compile the launcher, once.

    Returns the runtime directory. Everything lands in the cache, outside the repository.
    """
    runtime = _runtime_dir(settings)
    fetch_maven_jars(runtime, _POM.format(neo4j=NEO4J_VERSION, browser=BROWSER_VERSION),
                     f"Neo4j {NEO4J_VERSION} jars", quiet)
    for name in requested_plugins(settings):
        _provision_plugin(runtime, name, quiet)
    for folder in jar_folders(settings, runtime):
        jar_signatures.strip_signatures(folder)  # checked at every start otherwise, and never archived
    _compile_launcher(settings, runtime)
    return runtime


def jar_folders(settings: Settings, runtime: Path) -> list[Path]:
    """The runtime's folders of jars that a start puts on its classpath: Neo4j's and the requested plugins'."""
    return [runtime / "lib", *(_plugin_dir(runtime, name) for name in requested_plugins(settings))]


_PLUGIN_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>scholargraph</groupId><artifactId>{name}-plugin</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""
# name -> (the plugin's own group id, its artifacts, version)
PLUGINS = {
    "apoc": ("org.neo4j.procedure", ("apoc-core", "apoc-common"), APOC_VERSION),
    "gds": ("org.neo4j.gds", ("proc", "opengds-extension"), GDS_VERSION),
}
_JAR_VERSION = re.compile(r"-\d[\w.]*\.jar$")


def _artifact(jar: Path) -> str:
    return _JAR_VERSION.sub("", jar.name)


def _plugin_dir(runtime: Path, name: str) -> Path:
    return runtime / f"plugins-{name}"


def _provision_plugin(runtime: Path, name: str, quiet: bool) -> None:
    """Fetch a plugin from Maven Central once; a failure is remembered and reported, not fatal.

    Maven Central has no self-contained APOC or GDS jar, so a plugin comes with its libraries: all of
    the plugin's own group are kept, other libraries only when Neo4j does not ship them already (two
    versions of one library on a classpath break at run time).
    """
    group, artifacts, version = PLUGINS[name]
    target = _plugin_dir(runtime, name)
    marker = target / ".attempted"
    if marker.exists():
        return
    mvn = shutil.which("mvn")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    ok = False
    if mvn:
        pom = runtime / f"{name}-pom.xml"
        deps = "\n".join(f"    <dependency><groupId>{group}</groupId><artifactId>{a}</artifactId>"
                         f"<version>{version}</version></dependency>" for a in artifacts)
        pom.write_text(_PLUGIN_POM.format(name=name, dependencies=deps))
        base = [mvn, "-B", "-q", "-f", str(pom), "dependency:copy-dependencies", "-DincludeScope=runtime"]
        own = target / "own"
        libs = target / "libs"
        ok = (subprocess.run([*base, f"-DincludeGroupIds={group}", f"-DoutputDirectory={own}"],
                             capture_output=True, text=True).returncode == 0
              and subprocess.run([*base, f"-DexcludeGroupIds={group}", f"-DoutputDirectory={libs}"],
                                 capture_output=True, text=True).returncode == 0)
        if ok:
            shipped = {_artifact(jar) for jar in (runtime / "lib").glob("*.jar")}
            for jar in own.glob("*.jar"):
                jar.rename(target / jar.name)
            for jar in libs.glob("*.jar"):
                if _artifact(jar) not in shipped:
                    jar.rename(target / jar.name)
        shutil.rmtree(own, ignore_errors=True)
        shutil.rmtree(libs, ignore_errors=True)
    if not ok:
        for jar in target.glob("*.jar"):
            jar.unlink()
        if not quiet:
            print(f"note: plugin {name} {version} did not resolve from Maven; running without it", file=sys.stderr)
    marker.write_text(version)


def requested_plugins(settings: Settings) -> list[str]:
    names = [n.strip().lower() for n in settings.plugins.split(",") if n.strip()]
    unknown = [n for n in names if n not in PLUGINS]
    if unknown:
        raise ServerError(f"unknown plugin(s) {', '.join(unknown)} in SCHOLARGRAPH_PLUGINS "
                          f"(known: {', '.join(PLUGINS)})")
    return names


def _compile_launcher(settings: Settings, runtime: Path) -> Path:
    """The launcher, compiled once into a jar (class-data sharing archives classes from jars only)."""
    jar = _launcher_jar(runtime)
    if jar.exists():
        return jar
    src_dir = runtime / "src"
    src_dir.mkdir(parents=True, exist_ok=True)
    src = src_dir / f"{LAUNCHER_CLASS}.java"
    src.write_text(_launcher_source())
    tmp = runtime / f".{jar.stem}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    proc = subprocess.run([_javac(settings), "-cp", str(runtime / "lib" / "*"), "-d", str(tmp), str(src)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise ServerError(f"could not compile the Neo4j launcher: {proc.stderr.strip()[:300]}")
    staged = tmp / jar.name
    with zipfile.ZipFile(staged, "w") as archive:
        for cls in sorted(tmp.glob("*.class")):
            archive.write(cls, cls.name)
    os.replace(staged, jar)
    shutil.rmtree(tmp, ignore_errors=True)
    return jar


def _launcher_jar(runtime: Path) -> Path:
    digest = hashlib.sha256(_launcher_source().encode()).hexdigest()[:16]
    return runtime / f"launcher-{digest}.jar"


def _shared_jars(settings: Settings, runtime: Path) -> list[Path]:
    """What every start puts first on its classpath, in a fixed order: the launcher, the Neo4j jars, the plugins'
    jars. The Browser jar (or the copy with this home's guide) goes after them, so that one class-data archive
    serves every home: the archive holds no class of the Browser jar, which carries only static files."""
    lib = sorted(j for j in (runtime / "lib").glob("*.jar") if j.name != _original_browser_jar(runtime).name)
    plugins = [j for name in requested_plugins(settings) for j in sorted(_plugin_dir(runtime, name).glob("*.jar"))]
    return [_launcher_jar(runtime), *lib, *plugins]


def _original_browser_jar(runtime: Path) -> Path:
    return runtime / "lib" / f"neo4j-browser-{BROWSER_VERSION}.jar"


# --- class-data sharing: the Neo4j classes, loaded and verified once -----------------------------------------
# A start spends most of its time loading and verifying some 20,000 classes. The first start of a runtime (a
# JDK, the jars, the plugins) archives the classes it loaded when it stops; later starts map the archive
# (JDK class-data sharing): measured 13.6 s -> 9.6 s to ready, 25 s -> 18 s of CPU (README, the managed server).


ARCHIVE_UNUSED_DAYS = 30


def _archive_key(java: str, shared: list[Path], jvm_options: list[str]) -> str:
    """What the archive depends on: the JVM binary, the options it runs with (a JVM refuses an archive written
    under other options that bear on it, such as the collector) and each shared jar (name, size, time)."""
    real = Path(java).resolve()
    parts = [str(real), str(real.stat().st_mtime_ns), *jvm_options]
    parts += [f"{jar}:{jar.stat().st_size}:{jar.stat().st_mtime_ns}" for jar in shared if jar.exists()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _archive_record(settings: Settings) -> Path:
    return _run_dir(settings) / "class-archive.json"


def _archive_file(runtime: Path, java: str, shared: list[Path], jvm_options: list[str]) -> Path:
    return runtime / "class-archives" / f"classes-{_archive_key(java, shared, jvm_options)}.jsa"


def class_archive_file(settings: Settings) -> Path:
    """The class-data archive that a start of the managed server maps (once a server of this runtime has
    stopped cleanly; before that, the next stop writes it)."""
    runtime = _runtime_dir(settings)
    return _archive_file(runtime, _java(settings), _shared_jars(settings, runtime), settings.jvm_option_list)


def _class_archive_options(settings: Settings, runtime: Path, java: str, shared: list[Path]) -> list[str]:
    """The JVM options of class-data sharing for this start: map the runtime's archive when there is one, else
    write one when this server stops (to a file of its own, moved into place by `stop`: a server killed while
    writing it, or two servers writing at once, never leave a damaged archive in use)."""
    if not settings.class_archive:
        return []
    archive = _archive_file(runtime, java, shared, settings.jvm_option_list)
    folder = archive.parent
    quiet = "-Xlog:cds=error,cds+dynamic=error"  # its warnings (classes it leaves out) are not the server's
    if archive.is_file():
        try:
            os.utime(archive)  # its last use: archives unused for ARCHIVE_UNUSED_DAYS are removed
        except OSError:
            pass
        return [f"-XX:SharedArchiveFile={archive}", quiet]
    folder.mkdir(parents=True, exist_ok=True)
    pending = folder / f".{archive.stem}-{os.getpid()}-{time.time_ns()}.jsa"
    write_atomically(_archive_record(settings), json.dumps({"pending": str(pending), "archive": str(archive)})
                     .encode("utf-8"))
    return [f"-XX:ArchiveClassesAtExit={pending}", quiet]


def _settle_class_archive(settings: Settings, clean_exit: bool) -> None:
    """After the server ended: an archive it wrote at a clean exit takes its place; anything else is removed."""
    record = _archive_record(settings)
    try:
        paths = json.loads(record.read_text(encoding="utf-8"))
        pending, archive = Path(paths["pending"]), Path(paths["archive"])
    except (OSError, ValueError, KeyError, TypeError):
        record.unlink(missing_ok=True)
        return
    if clean_exit and pending.is_file() and pending.stat().st_size > 0:
        os.replace(pending, archive)
        _remove_unused_archives(archive.parent, keep=archive)
    pending.unlink(missing_ok=True)
    record.unlink(missing_ok=True)


def _remove_unused_archives(folder: Path, keep: Path) -> None:
    """The archives no start has mapped for ARCHIVE_UNUSED_DAYS (another JDK's, older jars', options no longer
    used), removed when a new one takes its place: each is 120-210 MB, and nothing else removes them."""
    cutoff = time.time() - ARCHIVE_UNUSED_DAYS * 86_400
    for old in folder.glob("classes-*.jsa"):
        try:
            if old != keep and old.stat().st_mtime < cutoff:
                old.unlink()  # a server still mapping it keeps its mapping
        except OSError:
            continue


def _read_pid(settings: Settings) -> int | None:
    try:
        return int(_pid_file(settings).read_text().strip())
    except (OSError, ValueError):
        return None


def _is_our_server(pid: int) -> bool:
    """True when `pid` is alive and is our launcher (guards against a recycled pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True
    if not cmdline:  # a zombie: exited, not yet reaped
        return False
    return LAUNCHER_CLASS.encode() in cmdline


# --- an offline import in progress (server/admin_import.py) ------------------------------------------------


def _import_file(settings: Settings) -> Path:
    return settings.home / "neo4j-import.json"


def import_state(settings: Settings) -> dict | None:
    """What `ingest --bulk` left of an offline import into this home's database, or None: phase "importing"
    (neo4j-admin is replacing the database, or was stopped doing so) or "imported" (the import finished and the
    load's last steps, `after`, are still to do: server/connect.finish_import)."""
    try:
        state = json.loads(_import_file(settings).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        state = None  # written atomically, so damaged only by hand: treated as the worse case
    return state if isinstance(state, dict) and state.get("phase") in ("importing", "imported") \
        else {"phase": "importing"}


def set_import_state(settings: Settings, **state) -> None:
    """Record the import's phase (atomically: a kill leaves the old record or the new one)."""
    write_atomically(_import_file(settings), json.dumps(state).encode("utf-8"))


def clear_import_state(settings: Settings) -> None:
    _import_file(settings).unlink(missing_ok=True)


def discard_partial_import(settings: Settings) -> None:
    """Remove what an unfinished import wrote into the default database (the server is stopped). Neo4j cannot
    open half a store ("This database is shutdown", at every start); `ingest --bulk` imports only into an
    empty database, so the empty one Neo4j creates at the next start is the database as it was."""
    data = settings.home / "neo4j" / "data"
    for sub in ("databases", "transactions"):
        shutil.rmtree(data / sub / DEFAULT_DATABASE, ignore_errors=True)


def _alive(pid: object, needle: bytes) -> bool:
    """Whether `pid` runs and its command line holds `needle` (guards against a recycled pid)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        return needle in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return not Path("/proc").is_dir()  # no /proc to read (not Linux): alive is all we can tell


def _recover_interrupted_import(settings: Settings) -> None:
    """Before a start: an import that was stopped half way (its `ingest --bulk` killed) leaves a store that
    Neo4j cannot open; it is removed, with one warning line, so that the database is again the empty one
    the import was replacing. An import still running is waited for, not started over."""
    state = import_state(settings)
    if state is None or state.get("phase") != "importing":
        return
    if _alive(state.get("importer"), b"AdminTool") or _alive(state.get("pid"), b"scholargraph"):
        raise ServerError(f"an `ingest --bulk` is importing into the database in {settings.home} (pid "
                          f"{state.get('pid')}): the server starts again when it is done; wait for it")
    discard_partial_import(settings)
    work = state.get("work")
    if isinstance(work, str) and Path(work).name.startswith("bulk-"):
        shutil.rmtree(work, ignore_errors=True)  # its staging and import files: about 3x the input
    clear_import_state(settings)
    sys.stderr.write(f"scholargraph: warning: an `ingest --bulk` was stopped during its import (started "
                     f"{state.get('started', '?')}); the half-imported database was removed and the database is "
                     "empty, as it was before: run that ingest again\n")


def _exiting(pid: int | None) -> bool:
    """Whether the server `pid` of this home still runs or is still exiting: a killed JVM's threads close its
    sockets one by one after its main thread is a zombie (an empty command line). A recycled pid is not it."""
    if pid is None:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return not Path("/proc").is_dir() and _alive(pid, b"")
    return not cmdline or LAUNCHER_CLASS.encode() in cmdline


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _scratch_dir(settings: Settings) -> Path:
    """The running server's temporary files (java.io.tmpdir)."""
    return _run_dir(settings) / "tmp"


def running_pid(settings: Settings) -> int | None:
    pid = _read_pid(settings)
    if pid is not None and _is_our_server(pid):
        return pid
    return None


def _running_port(settings: Settings) -> int:
    try:
        return int(_port_file(settings).read_text().strip())
    except (OSError, ValueError):
        return settings.neo4j_port


def _running_http_port(settings: Settings) -> int:
    """The HTTP port of the running server (0: off; a server started without the file had it off)."""
    try:
        return int(_http_port_file(settings).read_text().strip())
    except (OSError, ValueError):
        return 0


def browser_url(http_port: int) -> str | None:
    return f"http://127.0.0.1:{http_port}/browser/" if http_port > 0 else None


def _port_in_use(port: int, variable: str, hint: str = "") -> ServerError:
    return ServerError(f"port {port} on 127.0.0.1 is already in use by another program: "
                       f"set {variable} to a free port{hint}")


def start(settings: Settings, timeout: float = 120.0, quiet: bool = False) -> ServerStatus:
    """Start the managed server, or reuse the one already running for this home."""
    if not settings.managed:
        raise ServerError(f"SCHOLARGRAPH_NEO4J_URI is set ({settings.neo4j_uri}): the managed server is not used")
    pid = running_pid(settings)
    if pid is not None:
        _wait_ready(settings, pid, _running_port(settings), timeout, http_port=_running_http_port(settings))
        return status(settings)
    _recover_interrupted_import(settings)
    port = settings.neo4j_port
    http_port = settings.neo4j_http_port
    if port == http_port:
        raise ServerError(f"SCHOLARGRAPH_NEO4J_PORT and SCHOLARGRAPH_NEO4J_HTTP_PORT are both {port}: "
                          "give the Bolt and the HTTP port different values")
    runtime = provision(settings, quiet=quiet)
    # A server of this home killed a moment ago may still hold its sockets while it exits: wait for it (up to
    # 10 s). A port held by any other program is reported at once.
    ports = [p for p in (port, http_port) if p > 0]
    previous = _read_pid(settings)
    deadline = time.monotonic() + 10
    while _exiting(previous) and any(_port_open(p) for p in ports) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _port_open(port):
        raise _port_in_use(port, "SCHOLARGRAPH_NEO4J_PORT")
    if http_port > 0 and _port_open(http_port):
        raise _port_in_use(http_port, "SCHOLARGRAPH_NEO4J_HTTP_PORT", ", or 0 to turn the Neo4j Browser off")
    home = settings.home
    home.mkdir(parents=True, exist_ok=True)
    os.chmod(home, 0o700)  # the store, the logs and the password file are this account's alone
    for sub in ("run", "logs", "plugins"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    # The JVM's temporary files in the home, not the shared /tmp: Jetty unpacks the Browser there on every
    # start and left a directory in /tmp each time. What a killed server left is cleared here.
    scratch = _scratch_dir(settings)
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    password = server_password(settings)
    plugin_dirs = [_plugin_dir(runtime, name) for name in requested_plugins(settings)]
    _sync_plugins(plugin_dirs, home / "plugins")
    # APOC registers extensions through the classpath ServiceLoader, which embedded mode does not
    # extend to plugins/; its jars go on both (class loading is parent-first, so one copy is used).
    browser = _original_browser_jar(runtime)
    guide = http_port > 0 and browser.exists()
    if guide:
        # The query library as a Browser guide, rebuilt on every start (it follows the library's files), in a
        # copy of the Browser jar that takes the original's place on the classpath.
        page = browser_guide.library_guide()
        browser = browser_guide.write_browser_jar(browser, _browser_jar(settings), page)
    shared = _shared_jars(settings, runtime)
    java = _java(settings)
    _settle_class_archive(settings, clean_exit=False)  # what a server killed before left
    env = dict(os.environ)
    env.pop("SCHOLARGRAPH_NEO4J_PASSWORD", None)
    if password:
        # Passed in the environment, never on the command line, so `ps` cannot show it.
        env["SCHOLARGRAPH_NEO4J_PASSWORD"] = password
    env["SCHOLARGRAPH_NEO4J_PAGECACHE"] = settings.pagecache
    env.pop("SCHOLARGRAPH_NEO4J_BROWSER_GUIDE", None)
    if guide:
        env["SCHOLARGRAPH_NEO4J_BROWSER_GUIDE"] = browser_guide.guide_url(http_port)
    cmd = [java, f"-Xmx{settings.heap}", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError", "-Dfile.encoding=UTF-8",
           f"-Djava.io.tmpdir={scratch}",
           *_class_archive_options(settings, runtime, java, shared), *settings.jvm_option_list,
           "-cp", os.pathsep.join(map(str, [*shared, browser])), LAUNCHER_CLASS, str(home), str(port), str(http_port)]
    log = log_file(settings)
    with open(log, "ab") as out:
        log_from = out.tell()  # what this start writes: an earlier run's error is not this one's
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True, cwd=str(home))
    _pid_file(settings).write_text(str(proc.pid))
    _port_file(settings).write_text(str(port))
    _http_port_file(settings).write_text(str(http_port))
    _auth_file(settings).write_text("on" if password else "off")
    _wait_ready(settings, proc.pid, port, timeout, proc, http_port=http_port, log_from=log_from)
    # The server outlives this process by design (`neo4j stop` ends it through its pid file): its handle
    # is dropped here without the "subprocess is still running" ResourceWarning.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        del proc
    return status(settings)


def server_password(settings: Settings) -> str | None:
    """The password the managed server starts with: the explicit one, else the home's generated one
    (created on the first start); None only when authentication is turned off explicitly."""
    if not settings.neo4j_auth:
        return None
    return settings.neo4j_password or ensure_password_file(settings.home)


def _sync_plugins(provided_dirs: list[Path], plugins: Path) -> None:
    """Copy the provisioned plugin jars into the home's plugins/; jars a user added stay untouched."""
    manifest = plugins / ".provisioned"
    previous = manifest.read_text().split() if manifest.exists() else []
    for name in previous:
        (plugins / name).unlink(missing_ok=True)
    names = []
    for jar in sorted(j for d in provided_dirs for j in d.glob("*.jar")):
        shutil.copy2(jar, plugins / jar.name)
        names.append(jar.name)
    manifest.write_text("\n".join(names) + "\n")


def _wait_ready(settings: Settings, pid: int, port: int, timeout: float,
                proc: subprocess.Popen | None = None, http_port: int = 0, log_from: int = 0) -> None:
    ready = _run_dir(settings) / "ready"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            code = proc.returncode
            how = f"was killed (signal {-code})" if code < 0 else f"exited during start-up (code {code})"
            said = _last_error_line(settings, log_from)
            raise ServerError(f"Neo4j {how}{': ' + said if said else ''} (log: {log_file(settings)})")
        if proc is None and not _is_our_server(pid):
            raise ServerError(f"Neo4j (pid {pid}) stopped while starting; see {log_file(settings)}")
        if ready.exists() and _port_open(port) and (http_port <= 0 or _port_open(http_port)):
            return
        time.sleep(0.2)
    raise ServerError(f"Neo4j did not become ready within {timeout:.0f}s; see {log_file(settings)}")


def _last_error_line(settings: Settings, since: int = 0) -> str:
    """The last error the log shows after byte `since` (where this start began writing), else its last line
    ('' when it wrote nothing)."""
    try:
        with open(log_file(settings), "rb") as fh:
            fh.seek(since)
            lines = fh.read().decode(errors="replace").strip().splitlines()
    except OSError:
        return ""
    for line in reversed(lines[-200:]):
        if "Exception" in line or "ERROR" in line or "Error" in line:
            return line.strip()[:300]
    return lines[-1].strip()[:300] if lines else ""


def stop(settings: Settings, timeout: float = 60.0) -> bool:
    """Stop the managed server with SIGTERM and wait for its clean shutdown. False if none ran."""
    pid = running_pid(settings)
    if pid is None:
        _cleanup_run_files(settings)
        return False
    ports = [p for p in (_running_port(settings), _running_http_port(settings)) if p > 0]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _is_our_server(pid):
            _reap(pid)
            # Its main thread is done; the others may still hold the sockets for a moment: a start right after
            # this stop must find the ports free (start waits only for a server whose pid file is still there).
            closing = time.monotonic() + 10
            while any(_port_open(p) for p in ports) and time.monotonic() < closing:
                time.sleep(0.05)
            _settle_class_archive(settings, clean_exit=True)
            _cleanup_run_files(settings)
            return True
        _reap(pid)
        time.sleep(0.2)
    raise ServerError(f"Neo4j (pid {pid}) did not stop within {timeout:.0f}s")


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _cleanup_run_files(settings: Settings) -> None:
    for path in (_pid_file(settings), _run_dir(settings) / "ready", _auth_file(settings)):
        path.unlink(missing_ok=True)


def _dir_size(path: Path) -> int:
    total = 0
    if not path.exists():
        return 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += (Path(root) / name).stat().st_size
            except OSError:
                pass
    return total


def status(settings: Settings) -> ServerStatus:
    pid = running_pid(settings)
    version = None
    ready = _run_dir(settings) / "ready"
    if pid is not None and ready.exists():
        version = ready.read_text().strip() or None
    port = _running_port(settings) if pid is not None else settings.neo4j_port
    http_port = _running_http_port(settings) if pid is not None else settings.neo4j_http_port
    auth = _running_auth(settings) if pid is not None else None
    generated = auth and not settings.neo4j_password and settings.password_file.exists()
    return ServerStatus(running=pid is not None, pid=pid, uri=f"bolt://127.0.0.1:{port}",
                        version=version or NEO4J_VERSION, store_bytes=_dir_size(settings.home / "neo4j"),
                        home=settings.home, browser_url=browser_url(http_port), auth=auth,
                        password_file=settings.password_file if generated else None)


def tail_logs(settings: Settings, lines: int = 50) -> list[str]:
    try:
        content = log_file(settings).read_text(errors="replace").splitlines()
    except OSError:
        return []
    return content[-lines:]


def ensure_running(settings: Settings, quiet: bool = True) -> str:
    """The URI to use: the configured remote one, or the managed server (started if needed)."""
    if not settings.managed:
        return settings.uri
    return start(settings, quiet=quiet).uri
