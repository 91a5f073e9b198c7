"""A vault's own ``.sidecar/config.toml`` travels with the vault: it may not send note text off
the machine or make the daemon write outside the vault (issue 24, major 3)."""

from __future__ import annotations

import http.server
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from sidecar.config import SETTINGS, USER_ONLY, load_settings, user_only
from sidecar.config import _warned as warned

HOSTILE = {
    "index.data_dir": "/tmp/elsewhere",
    "embed.model": "openai:text-embedding-3-small@http://127.0.0.1:9/v1",
    "daemon.socket_path": "/tmp/elsewhere/s.sock",
    "memory.folder": "~/stolen",
    "limits.max_line_bytes": 2**40,
}


def toml(values: dict[str, object]) -> str:
    sections: dict[str, list[str]] = {}
    for key, value in values.items():
        section, name = key.split(".", 1)
        sections.setdefault(section, []).append(f"{name} = {json.dumps(value)}")
    return "".join(f"[{s}]\n" + "\n".join(lines) + "\n" for s, lines in sections.items())


def write_config(folder: Path, values: dict[str, object]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(toml(values), "utf-8")


@pytest.fixture(autouse=True)
def fresh_warnings() -> Iterator[None]:
    warned.clear()
    yield
    warned.clear()


def test_the_vault_file_cannot_set_user_only_keys(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vault, home = tmp_path / "v", tmp_path / "xdg"
    write_config(vault / ".sidecar", HOSTILE)
    env = {"XDG_CONFIG_HOME": str(home)}
    with caplog.at_level(logging.WARNING, "sidecar.config"):
        s = load_settings(vault, env)
        load_settings(vault, env)  # the daemon re-reads on SIGHUP: still one warning per key
    defaults = {x.key: x.default for x in SETTINGS}
    for key in HOSTILE:
        assert s[key] == defaults[key], key
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == len(HOSTILE), messages
    for key in HOSTILE:
        assert sum(f"ignoring {key} in" in m for m in messages) == 1, (key, messages)


def test_the_users_own_config_env_and_flags_can(tmp_path: Path) -> None:
    vault, home = tmp_path / "v", tmp_path / "xdg"
    vault.mkdir()
    write_config(home / "sidecar", HOSTILE)
    s = load_settings(vault, {"XDG_CONFIG_HOME": str(home)})
    for key, value in HOSTILE.items():
        assert s[key] == value, key
    env = {"XDG_CONFIG_HOME": str(tmp_path / "none"), "SIDECAR_EMBED_MODEL": "ollama:m"}
    assert load_settings(vault, env)["embed.model"] == "ollama:m"
    flags = {"memory.folder": "/abs/mem"}
    assert load_settings(vault, env, flags)["memory.folder"] == "/abs/mem"


def test_the_vault_file_still_sets_what_stays_inside(tmp_path: Path) -> None:
    """The vault's file wins over the user's for vault-safe keys, as a repository's git config
    wins over the global one."""
    vault, home = tmp_path / "v", tmp_path / "xdg"
    write_config(home / "sidecar", {"embed.model": "minilm", "watch.debounce_ms": 900})
    safe = {"embed.model": "tiny", "memory.folder": "Memory", "watch.debounce_ms": 500,
            "lint.report_note": "Sidecar/Lint.md"}  # fmt: skip
    write_config(vault / ".sidecar", safe)
    s = load_settings(vault, {"XDG_CONFIG_HOME": str(home)})
    for key, value in safe.items():
        assert s[key] == value, key
    for model in ("minilm", "tiny:64", "onnx:/models/m.onnx"):
        assert user_only("embed.model", model) is None
    for model in ("openai:m", "ollama:m@http://10.0.0.1:11434", " openai:m"):
        assert user_only("embed.model", model) is not None
    for folder in ("/abs", "~/x", "../x", "a/../../x"):
        assert user_only("memory.folder", folder) is not None


def test_every_user_only_key_is_a_setting() -> None:
    assert set(USER_ONLY) <= {s.key for s in SETTINGS}
    assert {"index.data_dir", "embed.model", "daemon.socket_path", "memory.folder"} <= set(
        USER_ONLY
    )


class _Recorder(http.server.BaseHTTPRequestHandler):
    posts: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        type(self).posts.append(self.rfile.read(length))
        self.send_response(500)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_sidecar_index_posts_nothing_to_a_server_the_vault_names(tmp_path: Path) -> None:
    """The issue's reproducer: ``[embed] model = "openai:…@http://…"`` in a cloned vault, then
    ``sidecar index``. The user's own config picks the local model."""
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        vault, home = tmp_path / "v", tmp_path / "xdg"
        vault.mkdir()
        (vault / "secret.md").write_text("# Secret\n\nThe launch code is 0000.\n", "utf-8")
        url = f"http://127.0.0.1:{server.server_port}/v1"
        write_config(vault / ".sidecar", {"embed.model": f"openai:m@{url}"})
        write_config(home / "sidecar", {"embed.model": "tiny"})
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIDECAR_")}
        env |= {"XDG_CONFIG_HOME": str(home), "SIDECAR_DATA_DIR": str(tmp_path / "data"),
                "HOME": str(tmp_path)}  # fmt: skip
        run = subprocess.run([sys.executable, "-m", "sidecar", "index", "--vault", str(vault)],
                             env=env, capture_output=True, text=True, timeout=180)  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert _Recorder.posts == [], "note text was sent to the vault's server"
    assert run.returncode == 0, run.stderr
    warnings = [ln for ln in run.stderr.splitlines() if "ignoring embed.model" in ln]
    assert len(warnings) == 1 and "Traceback" not in run.stderr, run.stderr


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_a_memory_folder_the_vault_points_home_is_not_written(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "n.md").write_text("# n\n", "utf-8")
    write_config(vault / ".sidecar", {"embed.model": "tiny", "memory.folder": "~/stolen"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDECAR_")}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "SIDECAR_DATA_DIR": str(tmp_path / "data"),
            "HOME": str(tmp_path / "home")}  # fmt: skip
    argv = [sys.executable, "-m", "sidecar", "rpc", "memory.write", '{"id":"m1","title":"fact"}',
            "--vault", str(vault)]  # fmt: skip
    run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "home" / "stolen").exists()
    assert (vault / ".sidecar" / "memory" / "m1.md").is_file()
    assert "ignoring memory.folder" in run.stderr
