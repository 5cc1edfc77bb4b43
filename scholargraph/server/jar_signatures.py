"""Signed jars of the managed server's runtime, rewritten without their signatures once.

The JVM checks a signed jar at every start: the digest of each entry it reads, against a manifest that lists all
of them, and class-data sharing leaves the classes of signed jars out of its archive. Neo4j 5.26 ships two signed
jars (eclipse-collections and its API, 12 MB). Without their signatures a start is ready in 10.1 s with 18.8 s of
CPU instead of 12.0 s and 22.3 s (8.9 s of CPU instead of 11.3 s with the test suite's client-compiler JVMs;
bench/server_start.py). Their integrity is Maven's checksum at download; the JVM enforces nothing more."""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

SIGNATURE_FILE = re.compile(r"META-INF/[^/]+\.(SF|RSA|DSA|EC)$", re.IGNORECASE)
MANIFEST = "META-INF/MANIFEST.MF"
DONE_MARKER = ".unsigned"


def is_signed(jar: Path) -> bool:
    with zipfile.ZipFile(jar) as archive:
        return any(SIGNATURE_FILE.match(name) for name in archive.namelist())


def main_manifest_section(manifest: bytes) -> bytes:
    """The manifest's main attributes alone: the per-entry sections that follow the first blank line hold the
    signature's digests."""
    text = manifest.replace(b"\r\n", b"\n")
    main = text.split(b"\n\n", 1)[0].rstrip(b"\n")
    return main.replace(b"\n", b"\r\n") + b"\r\n\r\n"


def strip_signature(jar: Path) -> bool:
    """Rewrite `jar` without its signature files and digests (every other entry byte for byte, with its own
    metadata), replacing it atomically. False when it was not signed."""
    if not is_signed(jar):
        return False
    partial = jar.with_name(f".{jar.name}.{os.getpid()}.partial")
    try:
        with zipfile.ZipFile(jar) as source, zipfile.ZipFile(partial, "w") as target:
            for entry in source.infolist():
                if SIGNATURE_FILE.match(entry.filename):
                    continue
                data = source.read(entry)
                if entry.filename.upper() == MANIFEST:
                    data = main_manifest_section(data)
                target.writestr(entry, data, compress_type=entry.compress_type)
        os.replace(partial, jar)
    finally:
        partial.unlink(missing_ok=True)
    return True


def strip_signatures(folder: Path) -> list[str]:
    """Strip the signed jars of `folder` once (a marker records it); the names of the jars rewritten."""
    marker = folder / DONE_MARKER
    if marker.exists() or not folder.is_dir():
        return []
    rewritten = [jar.name for jar in sorted(folder.glob("*.jar")) if strip_signature(jar)]
    marker.write_text("".join(name + "\n" for name in rewritten))
    return rewritten
