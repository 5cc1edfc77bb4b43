"""docker-compose.yml structure (no Docker engine runs here; `docker compose config` runs when it can)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def test_neo4j_service(compose):
    neo4j = compose["services"]["neo4j"]
    assert neo4j["image"].startswith("neo4j:5.26")
    plugins = neo4j["environment"]["NEO4J_PLUGINS"]
    assert "apoc" in plugins and "graph-data-science" in plugins
    assert "${NEO4J_PASSWORD" in neo4j["environment"]["NEO4J_AUTH"]  # from the environment, not the file
    assert any(v.endswith(":/data") for v in neo4j["volumes"]) and "neo4j-data" in compose["volumes"]
    assert "healthcheck" in neo4j and neo4j["healthcheck"]["test"]


def test_app_and_scheduler_services(compose):
    for name in ("app", "scheduler"):
        svc = compose["services"][name]
        assert svc["build"] == "."
        assert svc["depends_on"]["neo4j"]["condition"] == "service_healthy"
        assert svc["environment"]["SCHOLARGRAPH_NEO4J_URI"] == "bolt://neo4j:7687"
    assert (REPO / "Dockerfile").exists()
    scheduler = compose["services"]["scheduler"]
    assert scheduler["command"][:3] == ["jobs", "schedule", "--cron"]
    assert scheduler["stop_signal"] == "SIGTERM" and scheduler["restart"] == "unless-stopped"


def test_no_password_literal_in_file():
    text = (REPO / "docker-compose.yml").read_text()
    for line in text.splitlines():
        if "PASSWORD" in line and ":" in line and not line.strip().startswith("#"):
            assert "{NEO4J_PASSWORD" in line, line


def test_docker_compose_config_when_client_can(tmp_path):
    docker = shutil.which("docker")
    if not docker:
        pytest.skip("docker client not installed")
    proc = subprocess.run([docker, "compose", "config", "--quiet"], cwd=REPO, capture_output=True, text=True,
                          env={"NEO4J_PASSWORD": "x", "PATH": "/usr/bin:/bin:/usr/local/bin"}, timeout=60)
    if proc.returncode != 0 and ("is not a docker command" in proc.stderr or "unknown" in proc.stderr.lower()):
        pytest.skip("docker compose plugin not available")
    assert proc.returncode == 0, proc.stderr
