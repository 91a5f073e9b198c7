from pathlib import Path

import pytest

from sidecar.config import find_vault, load_settings
from sidecar.errors import UsageError, VaultNotFound


def test_precedence_file_env_flags(tmp_path: Path) -> None:
    (tmp_path / ".sidecar").mkdir()
    (tmp_path / ".sidecar" / "config.toml").write_text("[watch]\ndebounce_ms = 500\n")
    assert load_settings(tmp_path, {})["watch.debounce_ms"] == 500
    env = {"SIDECAR_WATCH_DEBOUNCE_MS": "700"}
    assert load_settings(tmp_path, env)["watch.debounce_ms"] == 700
    assert load_settings(tmp_path, env, {"watch.debounce_ms": 900})["watch.debounce_ms"] == 900


def test_unknown_or_mistyped_keys_are_usage_errors(tmp_path: Path) -> None:
    (tmp_path / ".sidecar").mkdir()
    cfg = tmp_path / ".sidecar" / "config.toml"
    cfg.write_text("[watch]\ndebounce = 5\n")
    with pytest.raises(UsageError, match=r"unknown setting watch\.debounce"):
        load_settings(tmp_path, {})
    cfg.write_text("[watch]\ndebounce_ms = 'soon'\n")
    with pytest.raises(UsageError, match=r"must be a int"):
        load_settings(tmp_path, {})


def test_data_dir_default_and_override(tmp_path: Path) -> None:
    s = load_settings(tmp_path, {})
    assert s.data_dir.parent.name == "sidecar" and s.data_dir.name.startswith(tmp_path.name[:10])
    assert load_settings(tmp_path, {"SIDECAR_DATA_DIR": "/x/y"}).data_dir == Path("/x/y")


def test_vault_discovery(tmp_path: Path) -> None:
    (tmp_path / "v" / ".obsidian").mkdir(parents=True)
    (tmp_path / "v" / "a" / "b").mkdir(parents=True)
    assert find_vault(None, {}, tmp_path / "v" / "a" / "b") == (tmp_path / "v").resolve()
    assert find_vault(None, {"SIDECAR_VAULT": str(tmp_path)}, tmp_path / "v") == tmp_path
    assert find_vault(str(tmp_path / "v"), {"SIDECAR_VAULT": "/nope"}, tmp_path) == tmp_path / "v"
    with pytest.raises(VaultNotFound):
        find_vault(None, {}, tmp_path)
    with pytest.raises(VaultNotFound):
        find_vault(str(tmp_path / "missing"), {}, tmp_path)
