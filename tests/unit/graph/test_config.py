"""Settings: defaults, TOML, environment precedence; no password in repr."""

from pathlib import Path

from scholargraph.config import Settings


def test_defaults_use_managed_server(tmp_path):
    s = Settings.load(env={"HOME": str(tmp_path)})
    assert s.managed and s.uri == "bolt://127.0.0.1:7687"
    assert s.home.name == "scholargraph"


def test_env_overrides_toml(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text('[scholargraph]\nneo4j_port = 9999\nhome = "/tmp/x"\n')
    s = Settings.load(env={"SCHOLARGRAPH_NEO4J_PORT": "7777"}, config_file=toml)
    assert s.neo4j_port == 7777 and s.home == Path("/tmp/x")
    remote = Settings.load(env={"SCHOLARGRAPH_NEO4J_URI": "neo4j://db:7687", "SCHOLARGRAPH_NEO4J_PASSWORD": "s3cret"})
    assert not remote.managed and remote.uri == "neo4j://db:7687"
    assert "s3cret" not in repr(remote)
