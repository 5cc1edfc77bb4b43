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


def test_password_file_is_generated_once_private_and_read_back(tmp_path):
    import os
    import stat

    from scholargraph.config import ensure_password_file

    home = tmp_path / "home"
    password = ensure_password_file(home)
    assert len(password) >= 32 and password.strip() == password
    path = home / "neo4j-password"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert ensure_password_file(home) == password  # kept, not regenerated
    assert Settings(home=home).password == password
    assert Settings(home=home, neo4j_password="explicit").password == "explicit"  # the variable overrides
    assert not [p for p in os.listdir(home) if p.endswith(".tmp")]
    assert password not in repr(Settings(home=home))


def test_no_password_file_means_no_password_and_other_homes_get_their_own(tmp_path):
    from scholargraph.config import ensure_password_file

    assert Settings(home=tmp_path / "empty").password is None
    assert ensure_password_file(tmp_path / "a") != ensure_password_file(tmp_path / "b")


def test_a_password_file_other_accounts_can_read_is_refused(tmp_path):
    import pytest

    from scholargraph.config import ensure_password_file
    from scholargraph.errors import ServerError

    home = tmp_path / "home"
    ensure_password_file(home)
    (home / "neo4j-password").chmod(0o644)
    with pytest.raises(ServerError, match="readable by other accounts.*chmod 600"):
        _ = Settings(home=home).password
    with pytest.raises(ServerError, match="chmod 600"):
        ensure_password_file(home)


def test_auth_setting_is_on_by_default_and_turned_off_only_explicitly(tmp_path):
    import pytest

    assert Settings.load(env={"HOME": str(tmp_path)}).neo4j_auth is True
    for off in ("off", "0", "false", "no", "OFF"):
        assert Settings.load(env={"SCHOLARGRAPH_NEO4J_AUTH": off}).neo4j_auth is False
    assert Settings.load(env={"SCHOLARGRAPH_NEO4J_AUTH": "on"}).neo4j_auth is True
    with pytest.raises(ValueError, match="on or off"):
        Settings.load(env={"SCHOLARGRAPH_NEO4J_AUTH": "maybe"})
    toml = tmp_path / "c.toml"
    toml.write_text("[scholargraph]\nneo4j_auth = false\n")
    assert Settings.load(env={}, config_file=toml).neo4j_auth is False
