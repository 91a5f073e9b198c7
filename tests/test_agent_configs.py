"""The MCP configurations in docs/agents.md, each started as its client starts it, and
``sidecar agent install|uninstall claude-code`` on real settings files.

How the clients pass their environment (what is modelled here): Claude Code starts a stdio
server with the MCP SDK's default variables (HOME, PATH, SHELL, TERM) in the project folder;
Claude Desktop and Cursor, started from a desktop, have the desktop's minimal PATH and no
particular folder. In every case the server must reach the daemon a shell started, not open an
index of its own.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import EXAMPLE_VAULT, REPO
from tests.test_mcp import shell_daemon

pytestmark = pytest.mark.e2e  # starts processes: the CLI, the MCP server, the hooks

DOC = REPO / "docs" / "agents.md"
SIDECAR = str(Path(sys.executable).with_name("sidecar"))
DESKTOP_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"


def documented(client: str) -> dict[str, Any]:
    blocks = re.findall(rf"```json {client}\n(.*?)\n```", DOC.read_text("utf-8"), re.S)
    assert len(blocks) == 1, f"docs/agents.md: one ```json {client} block"
    return json.loads(blocks[0])  # type: ignore[no-any-return]


def client_env(client: str, home: Path) -> tuple[dict[str, str], Path | None]:
    """The variables and folder each client starts a server with."""
    if client == "claude-code":
        keep = {k: os.environ[k] for k in ("PATH", "SHELL", "TERM") if k in os.environ}
        return {**keep, "HOME": str(home)}, home / "project"
    return {"HOME": str(home), "PATH": DESKTOP_PATH}, None


def serve(server: dict[str, Any], env: dict[str, str], cwd: Path | None) -> dict[str, Any]:
    params = StdioServerParameters(command=server["command"], args=server["args"],
                                   env={**env, **server.get("env", {})}, cwd=cwd)  # fmt: skip

    async def go() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=120) as c:
            tools = (await c.list_tools()).tools
            read = await c.call_tool("read_note", {"note": "Auth Service"})
            return {"tools": len(tools), "read": read.structured_content, "error": read.is_error}

    return anyio.run(go)


@pytest.mark.parametrize("client", ["claude-code", "claude-desktop", "cursor"])
def test_each_documented_config_reaches_the_daemon(client: str) -> None:
    config = documented(client)
    server = json.loads(json.dumps(config["mcpServers"]["sidecar"])
                        .replace("/path/to/venv/bin/sidecar", SIDECAR))  # fmt: skip
    with shell_daemon(EXAMPLE_VAULT) as (d, home):
        server["args"] = [str(d.vault) if a == "/path/to/vault" else a for a in server["args"]]
        env, cwd = client_env(client, home)
        if cwd is not None:
            cwd.mkdir()
        got = serve(server, env, cwd)
        own = list((home / ".local/share/sidecar").rglob("lance"))
        with d.client() as c:
            served = c.call("index.status")["daemon"]["pid"] == d.proc.pid
    assert not got["error"] and got["tools"] == 15
    assert got["read"]["path"] == "services/Auth Service.md"
    assert served and own == []  # the server, with HOME alone, opened no index of its own


def install(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run([SIDECAR, "agent", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def test_install_shows_then_writes_and_uninstall_removes_only_ours(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    home.mkdir()
    theirs = {"permissions": {"allow": ["Bash(ls)"]}, "hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "echo other-hook"}]}]}}  # fmt: skip
    (project / ".claude" / "settings.json").write_text(json.dumps(theirs), "utf-8")
    (project / ".mcp.json").write_text('{"mcpServers": {"other": {"command": "x"}}}', "utf-8")
    vault = str(EXAMPLE_VAULT)

    shown = install(home, project, "install", "claude-code", "--vault", vault, "--dry-run")
    assert shown.returncode == 0 and "+++ " in shown.stdout and "recall --hook" in shown.stdout
    assert json.loads((project / ".claude" / "settings.json").read_text()) == theirs  # not yet
    asked = install(home, project, "install", "claude-code", "--vault", vault)  # no tty
    assert "Not written" in asked.stderr and not (project / ".mcp.json").read_text().count(
        "sidecar"
    )

    wrote = install(home, project, "install", "claude-code", "--vault", vault, "--yes")
    assert wrote.returncode == 0, wrote.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert settings["permissions"] == theirs["permissions"] and servers["other"] == {"command": "x"}
    prompts = [h["command"] for g in settings["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert prompts[0] == "echo other-hook"
    assert shlex.split(prompts[1]) == [SIDECAR, "recall", "--hook", "--vault", vault]
    assert servers["sidecar"]["command"] == SIDECAR
    assert servers["sidecar"]["args"] == ["mcp", "--vault", vault]
    again = install(home, project, "install", "claude-code", "--vault", vault, "--yes")
    assert "nothing to change" in again.stdout

    user = install(home, project, "install", "claude-code", "--vault", vault, "--user", "--yes")
    assert user.returncode == 0, user.stderr
    assert (
        json.loads((home / ".claude.json").read_text())["mcpServers"]["sidecar"]["args"][2] == vault
    )
    assert "SessionStart" in json.loads((home / ".claude" / "settings.json").read_text())["hooks"]

    removed = install(home, project, "uninstall", "claude-code", "--yes")
    assert removed.returncode == 0, removed.stderr
    assert json.loads((project / ".claude" / "settings.json").read_text()) == theirs
    assert json.loads((project / ".mcp.json").read_text()) == {
        "mcpServers": {"other": {"command": "x"}}
    }


def test_installed_hooks_run_as_claude_code_runs_them() -> None:
    """The commands install writes, fed the hook JSON on stdin in the project folder."""
    with shell_daemon(EXAMPLE_VAULT) as (d, home):
        project = home / "project"
        (project / ".claude").mkdir(parents=True)
        r = install(home, project, "install", "claude-code", "--vault", str(d.vault), "--yes")
        assert r.returncode == 0, r.stderr
        hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
        env = {k: os.environ[k] for k in ("PATH", "SHELL", "TERM") if k in os.environ}
        env["HOME"] = str(home)

        def hook(event: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
            command = hooks[event][0]["hooks"][0]["command"]
            return subprocess.run(command, shell=True, cwd=project, env=env, text=True,
                                  input=json.dumps(payload), capture_output=True, timeout=60)  # fmt: skip

        start = hook("SessionStart", {"hook_event_name": "SessionStart", "source": "startup"})
        asked = hook("UserPromptSubmit", {"prompt": "Where are user sessions stored: Redis "
                                          "session storage decision"})  # fmt: skip
        thanks = hook("UserPromptSubmit", {"prompt": "thanks!"})
    assert start.returncode == 0 and start.stderr == ""
    assert asked.returncode == 0 and "ADR-7 Session storage" in asked.stdout, asked.stderr
    assert (thanks.returncode, thanks.stdout, thanks.stderr) == (0, "", "")
