"""Signed jars of the server's runtime are rewritten unsigned: every other entry the same, the manifest's main
attributes kept, once per folder."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from scholargraph.server.jar_signatures import main_manifest_section, strip_signatures

MANIFEST = (b"Manifest-Version: 1.0\r\nAutomatic-Module-Name: org.example.collections\r\nMulti-Release: true\r\n"
            b"Implementation-Title: a long title that the manifest writer wraps after seventy-two by\r\n tes\r\n"
            b"\r\n")


def _jar(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as jar:
        for name, data in entries.items():
            jar.writestr(name, data)
    return path


def _entries(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as jar:
        return {name: jar.read(name) for name in jar.namelist()}


@pytest.fixture(scope="module")
def signed_original(tmp_path_factory) -> Path:
    """A jar signed by the JDK's jarsigner with a throw-away key (as Neo4j's eclipse-collections jars are)."""
    tmp_path = tmp_path_factory.mktemp("signed")
    keytool, jarsigner = shutil.which("keytool"), shutil.which("jarsigner")
    if not (keytool and jarsigner):
        pytest.skip("keytool and jarsigner come with a JDK (CI installs one)")
    (tmp_path / "lib").mkdir()
    jar = _jar(tmp_path / "lib" / "collections-1.0.jar",
               {"META-INF/MANIFEST.MF": MANIFEST, "org/example/A.class": b"\xca\xfe\xba\xbe" + bytes(range(200)),
                "META-INF/versions/11/org/example/A.class": b"\xca\xfe\xba\xbe eleven",
                "org/example/data.txt": b"text" * 100})
    store = tmp_path / "keys.p12"
    subprocess.run([keytool, "-genkeypair", "-keystore", str(store), "-storepass", "secret12", "-alias", "k",
                    "-keyalg", "EC", "-dname", "CN=test", "-validity", "2"], check=True, capture_output=True)
    subprocess.run([jarsigner, "-keystore", str(store), "-storepass", "secret12", str(jar), "k"],
                   check=True, capture_output=True)
    return jar


@pytest.fixture
def signed_jar(signed_original, tmp_path) -> Path:
    (tmp_path / "lib").mkdir()
    return Path(shutil.copy2(signed_original, tmp_path / "lib" / signed_original.name))


def test_a_signed_jar_loses_its_signature_and_keeps_everything_else(signed_jar):
    before = _entries(signed_jar)
    signatures = [n for n in before if n.startswith("META-INF/K.")]
    assert signatures and b"SHA-256-Digest" in before["META-INF/MANIFEST.MF"]  # signed as Maven's jars are

    assert strip_signatures(signed_jar.parent) == [signed_jar.name]
    after = _entries(signed_jar)
    assert set(after) == set(before) - set(signatures)
    assert all(after[name] == before[name] for name in after if name != "META-INF/MANIFEST.MF")
    manifest = after["META-INF/MANIFEST.MF"]  # the main attributes as jarsigner left them, no digests
    assert before["META-INF/MANIFEST.MF"].startswith(manifest) and b"Digest" not in manifest
    assert b"Multi-Release: true\r\n" in manifest and b"Automatic-Module-Name: org.example.collections" in manifest
    verified = subprocess.run([shutil.which("jarsigner"), "-verify", str(signed_jar)], capture_output=True, text=True)
    assert "jar is unsigned" in verified.stdout, verified.stdout


def test_the_folder_is_stripped_once_and_unsigned_jars_are_left_alone(signed_jar):
    plain = _jar(signed_jar.parent / "plain.jar", {"META-INF/MANIFEST.MF": MANIFEST, "A.class": b"\xca\xfe"})
    plain_bytes = plain.read_bytes()
    assert strip_signatures(signed_jar.parent) == [signed_jar.name]
    assert plain.read_bytes() == plain_bytes
    # Once per folder: the marker stops a second pass (a runtime fetched anew starts from an empty folder).
    stripped = signed_jar.read_bytes()
    assert strip_signatures(signed_jar.parent) == []
    assert signed_jar.read_bytes() == stripped
    assert not list(signed_jar.parent.glob(".*.partial"))


def test_the_main_section_survives_any_line_ending():
    digests = b"Name: org/example/A.class\nSHA-256-Digest: abc=\n\n"
    assert main_manifest_section(MANIFEST.replace(b"\r\n", b"\n") + digests) == MANIFEST
    assert main_manifest_section(MANIFEST + digests.replace(b"\n", b"\r\n")) == MANIFEST
