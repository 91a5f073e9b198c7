"""The memory commands and the Claude Code hooks as a user runs them: subprocesses against the
real daemon, the hook commands copied from docs/agents.md."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT, REPO, SHARED
from tests.daemon_harness import RunningDaemon, running

pytestmark = pytest.mark.e2e  # starts processes: the daemon, the CLI, editors

AGENTS_DOC = REPO / "docs" / "agents.md"


def sidecar(d: RunningDaemon, *args: str, stdin: str = "", cwd: Path | None = None):  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, "-m", "sidecar", *args], input=stdin, capture_output=True, text=True,
        env={**d.env, "SIDECAR_VAULT": str(d.vault)}, cwd=cwd or d.vault, timeout=120,
    )  # fmt: skip


@pytest.fixture(scope="module")
def d() -> object:
    with running(EXAMPLE_VAULT) as daemon:
        yield daemon


def test_memory_add_flags_follow_the_design(d: RunningDaemon) -> None:
    r = sidecar(d, "memory", "add", "redis-ttl", "--title", "Session keys expire after 14 days",
                "--type", "decision", "--content", "Redis keys for sessions have a 14-day TTL.",
                "--tags", "sessions,redis", "--relates", "supports:Auth Service", "--ttl",
                "86400", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    e = json.loads(r.stdout)["entry"]
    assert (e["id"], e["tags"], e["relations"]) == ("redis-ttl", ["sessions", "redis"],
                                                    {"supports": ["[[Auth Service]]"]})  # fmt: skip
    assert "expires_at" in e
    text = (d.vault / ".sidecar" / "memory" / "redis-ttl.md").read_text("utf-8")
    assert text.startswith("---\nid: redis-ttl\n")
    r = sidecar(d, "memory", "add", "--title", "Call Alice", "--type", "reminder", "--due-in",
                "3600", "--json")  # fmt: skip
    assert json.loads(r.stdout)["entry"]["id"] == "call-alice"
    r = sidecar(d, "memory", "add", "--title", "Session keys expire after 14 days", "--content",
                "Redis keys for sessions have a 14-day TTL.", "--type", "decision", "--json")  # fmt: skip
    assert (
        r.returncode == 1 and json.loads(r.stdout)["error"]["data"]["duplicate_of"] == "redis-ttl"
    )
    r = sidecar(d, "memory", "add", "--title", "x", "--relates", "nonsense")
    assert r.returncode == 2 and "REL:TARGET" in r.stderr


def test_memory_read_commands_and_reminders(d: RunningDaemon) -> None:
    sidecar(d, "memory", "add", "ttl-two", "--title", "Refresh tokens live 14 days", "--type",
            "topic", "--due", "2030-01-01T00:00:00Z")  # fmt: skip
    listed = json.loads(sidecar(d, "memory", "list", "--json").stdout)
    assert {"redis-ttl", "call-alice"} <= {e["id"] for e in listed["entries"]}
    found = json.loads(sidecar(d, "memory", "search", "redis session expiry", "--json").stdout)
    assert found["results"][0]["id"] == "redis-ttl"
    assert "supports services/Auth Service.md (note)" in sidecar(d, "memory", "get",
                                                                  "redis-ttl").stdout  # fmt: skip
    rem = json.loads(sidecar(d, "reminders", "--json").stdout)
    assert [e["id"] for e in rem["upcoming"]] == ["call-alice"] and rem["due"] == []
    snoozed = sidecar(d, "reminders", "--snooze", "call-alice", "--for", "7200", "--json")
    assert json.loads(snoozed.stdout)["entry"]["due_at"] > rem["upcoming"][0]["due_at"]
    assert sidecar(d, "reminders", "--done", "call-alice").returncode == 0
    assert json.loads(sidecar(d, "reminders", "--json").stdout)["upcoming"] == []
    exported = json.loads(sidecar(d, "memory", "export").stdout)
    assert "call-alice" in {e["id"] for e in exported["entries"]}


def test_mdkb_entry_files_import(d: RunningDaemon) -> None:
    entries = SHARED / "peers" / "mdkb" / ".mdkb" / "memory" / "entries"
    assert entries.is_dir(), f"the shared peer fixtures are required beside the repo: {entries}"
    r = sidecar(d, "memory", "import", str(entries), "--json")
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["imported"]) == 2


def _documented_json(index: int) -> dict:  # type: ignore[type-arg]
    blocks = re.findall(r"```json\n(.*?)\n```", AGENTS_DOC.read_text("utf-8"), re.S)
    return json.loads(blocks[index])  # type: ignore[no-any-return]


def _hook_command(event: str) -> list[str]:
    command = _documented_json(0)["hooks"][event][0]["hooks"][0]["command"]
    argv = shlex.split(command)
    assert argv[0] == "sidecar"
    return argv[1:]


def test_documented_hooks_feed_claude_code(d: RunningDaemon) -> None:
    start = sidecar(d, *_hook_command("SessionStart"), stdin=json.dumps(
        {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(d.vault)}))  # fmt: skip
    assert start.returncode == 0 and "Remembered:" in start.stdout
    assert len(start.stdout) <= 2001
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "when do redis session keys expire?"}
    recall = sidecar(d, *_hook_command("UserPromptSubmit"), stdin=json.dumps(prompt))
    assert recall.returncode == 0, recall.stderr
    assert "redis-ttl" in recall.stdout and "ADR-7 Session storage" in recall.stdout
    unrelated = {"hook_event_name": "UserPromptSubmit", "prompt": "Who won the 2006 World Cup?"}
    quiet = sidecar(d, *_hook_command("UserPromptSubmit"), stdin=json.dumps(unrelated))
    assert (quiet.returncode, quiet.stdout) == (0, "")


def test_hooks_never_fail_their_caller(d: RunningDaemon, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDECAR_")}
    for args in (["recall", "--hook"], ["session-start", "--hook"]):
        r = subprocess.run([sys.executable, "-m", "sidecar", *args, "--vault", "/nonexistent"],
                           input='{"prompt": "anything"}', capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=60)  # fmt: skip
        assert (r.returncode, r.stdout, r.stderr) == (0, "", "")  # issue 22: nothing printed
        loud = subprocess.run([sys.executable, "-m", "sidecar", *args, "--vault", "/nonexistent"],
                              input='{"prompt": "anything"}', capture_output=True, text=True,
                              env={**env, "SIDECAR_HOOK_DEBUG": "1"}, cwd=tmp_path, timeout=60)  # fmt: skip
        assert loud.returncode == 0 and "vault folder not found" in loud.stderr
    garbage = sidecar(d, "recall", "--hook", stdin="not json")
    assert (garbage.returncode, garbage.stdout) == (0, "")


def test_hooks_without_a_daemon_print_nothing_and_start_one_when_asked(tmp_path: Path) -> None:
    """In-process, the first prompt would index the vault inside the hook's timeout: a hook
    answers from a daemon only, and with ``daemon.autostart`` starts one for the next prompt."""
    home = Path(tempfile.mkdtemp(dir="/tmp", prefix="sch"))
    vault = home / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    (vault / ".sidecar").mkdir(exist_ok=True)
    (vault / ".sidecar" / "config.toml").write_text('[embed]\nmodel = "tiny"\n', "utf-8")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "SHELL", "TERM")}
    env["HOME"] = str(home)
    hook = [sys.executable, "-m", "sidecar", "recall", "--hook", "--vault", str(vault)]
    prompt = '{"prompt": "how long do session keys live in redis"}'
    try:
        r = subprocess.run(hook, input=prompt, capture_output=True, text=True, env=env, timeout=60)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
        assert not (home / ".local/share/sidecar").exists() or not list(
            (home / ".local/share/sidecar").rglob("*.lance")
        )  # no index opened in the hook
        auto = {**env, "SIDECAR_DAEMON_AUTOSTART": "true"}
        r = subprocess.run(hook, input=prompt, capture_output=True, text=True, env=auto, timeout=60)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
        where = [sys.executable, "-m", "sidecar", "where", "--json", "--vault", str(vault)]
        deadline = time.monotonic() + 120
        while '"serving": true' not in subprocess.run(where, capture_output=True, text=True,
                                                      env=env, timeout=60).stdout:  # fmt: skip
            assert time.monotonic() < deadline, "the hook started no daemon"
            time.sleep(0.3)
    finally:
        stop = subprocess.run([sys.executable, "-m", "sidecar", "rpc", "index.status", "--vault",
                               str(vault)], capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
        pid = json.loads(stop.stdout or "{}").get("daemon", {}).get("pid") if stop.stdout else None
        if pid:
            os.kill(pid, signal.SIGTERM)
            time.sleep(1)
        shutil.rmtree(home, ignore_errors=True)
