"""Claude Code itself runs what ``sidecar agent install claude-code`` writes: its hooks and our
MCP server, in a project folder, with the environment a desktop gives it.

The CLI is the npm package, pinned in tests/clients/claude-code (``npm ci`` on first use). It is
run as ``claude -p`` with hook events in its stream: Claude Code runs the SessionStart and
UserPromptSubmit hooks and connects to its MCP servers before it asks the model anything, and
reports each in that stream; the test stops it at its ``init`` event, so no model is asked and no
key is needed (it gets a placeholder so that it starts at all).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLE_VAULT, REPO, require
from tests.test_mcp import shell_daemon

CLIENT = REPO / "tests" / "clients" / "claude-code"
SIDECAR = str(Path(sys.executable).with_name("sidecar"))
ON_TOPIC = "Where are user sessions stored: Redis session storage decision"


def claude_cli() -> Path:
    npm = shutil.which("npm")
    require(npm is not None, "npm is not installed (Debian's package)")
    assert npm is not None
    exe = CLIENT / "node_modules" / ".bin" / "claude"
    if not exe.exists():
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=CLIENT,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
    return exe


def claude_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",  # a desktop's: the commands install writes are absolute
        "TERM": "dumb",
        "ANTHROPIC_API_KEY": "placeholder-never-sent",
        # a closed local port: with the default address, and no network here, Claude Code
        # retried its managed-settings fetch for ~17 s before it started MCP servers or hooks
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def mcp_get(exe: Path, home: Path, project: Path) -> str:
    """``claude mcp get sidecar``: Claude Code starts the server as configured and checks it
    (in ``-p``, its ``init`` may report a stdio server still "pending": a known race)."""
    r = subprocess.run([str(exe), "mcp", "get", "sidecar"], cwd=project, env=claude_env(home),
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)  # fmt: skip
    return r.stdout + r.stderr


def session(exe: Path, home: Path, project: Path, prompt: str) -> list[dict[str, Any]]:
    """Claude Code's events for one prompt, up to (and with) its ``init``."""
    env = claude_env(home)
    argv = [str(exe), "-p", prompt, "--output-format", "stream-json", "--verbose",
            "--include-hook-events"]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=project, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    events: list[dict[str, Any]] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if not line.startswith("{"):
                continue
            events.append(json.loads(line))
            if events[-1].get("subtype") == "init":
                break
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=30)
    assert events and events[-1].get("subtype") == "init", err[-2000:]
    return events


def hook_output(events: list[dict[str, Any]], event: str) -> dict[str, Any]:
    (reply,) = [e for e in events if e.get("subtype") == "hook_response"
                and e.get("hook_event") == event]  # fmt: skip
    return reply


def install(home: Path, project: Path, *args: str) -> None:
    r = subprocess.run([SIDECAR, "agent", *args, "--yes"], cwd=project, capture_output=True,
                       env={**os.environ, "HOME": str(home)}, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr


def approve(home: Path, project: Path) -> None:
    """What Claude Code records when the user trusts the folder and approves the server of its
    ``.mcp.json`` (it asks on the first interactive start; ``-p`` cannot ask, and leaves such a
    server pending)."""
    state = home / ".claude.json"
    config = json.loads(state.read_text("utf-8")) if state.exists() else {}
    config.setdefault("projects", {})[str(project)] = {"hasTrustDialogAccepted": True}
    state.write_text(json.dumps(config), "utf-8")
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"enabledMcpjsonServers": ["sidecar"]}), "utf-8")


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
@pytest.mark.timeout(900)
@pytest.mark.parametrize("scope", ["--project", "--user"])
def test_claude_code_runs_the_installed_hooks_and_server(scope: str) -> None:
    exe = claude_cli()
    with shell_daemon(EXAMPLE_VAULT) as (d, home):
        project = home / "project"
        project.mkdir()
        install(home, project, "install", "claude-code", "--vault", str(d.vault), scope)
        if scope == "--project":
            approve(home, project)

        asked = session(exe, home, project, ON_TOPIC)
        thanks = session(exe, home, project, "thanks!")
        served = mcp_get(exe, home, project)

        install(home, project, "uninstall", "claude-code", scope)
        gone = session(exe, home, project, ON_TOPIC)
        unserved = mcp_get(exe, home, project)

    start = hook_output(asked, "SessionStart")
    assert (start["exit_code"], start["stderr"]) == (0, "")
    assert "Recently edited notes" in start["stdout"]
    recalled = hook_output(asked, "UserPromptSubmit")
    assert recalled["exit_code"] == 0 and "ADR-7 Session storage" in recalled["stdout"], recalled
    silent = hook_output(thanks, "UserPromptSubmit")
    assert (silent["exit_code"], silent["stdout"], silent["stderr"]) == (0, "", "")

    assert "Status: ✔ Connected" in served, served
    assert ("Project config" if scope == "--project" else "User config") in served

    assert not [e for e in gone if e.get("subtype") == "hook_response"]
    assert not [t for t in gone[-1]["tools"] if t.startswith("mcp__sidecar__")]
    assert 'No MCP server named "sidecar"' in unserved, unserved
