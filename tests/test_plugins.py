"""The editor plugins against the real daemon, and their generated method tables.

The Obsidian plugin's client, discovery and pane logic run in node (``npm test``) against a
daemon started here; the Neovim plugin runs headless against another. Both need tools from
outside PyPI's Python world (node/npm, nvim): without them the tests skip locally and fail in CI.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.api import build_registry
from sidecar.api.typegen import generate, stale, ts_type
from tests.conftest import EXAMPLE_VAULT, require
from tests.daemon_harness import RunningDaemon, running

pytestmark = pytest.mark.e2e  # starts processes: the daemon, the CLI, editors

ROOT = Path(__file__).resolve().parents[1]
OBSIDIAN = ROOT / "plugins" / "obsidian"
NVIM_PLUGIN = ROOT / "plugins" / "nvim"


def tool(name: str) -> str:
    """``name`` on PATH or beside this Python (a venv's bin); skip, or fail under CI, if absent."""
    beside = Path(sys.executable).parent / name
    found = shutil.which(name) or (str(beside) if beside.exists() else None)
    require(found is not None, f"{name} is not installed (see plugins/README.md)")
    assert found is not None
    return found


@pytest.fixture
def daemon() -> Iterator[RunningDaemon]:
    with running(EXAMPLE_VAULT, model="tiny") as d:
        yield d


def plugin_env(d: RunningDaemon, **extra: str) -> dict[str, str]:
    env = {**d.env, "SIDECAR_SOCKET": str(d.socket), "SIDECAR_VAULT": str(d.vault), **extra}
    sidecar = shutil.which("sidecar") or str(Path(sys.executable).parent / "sidecar")
    if Path(sidecar).exists():
        env["SIDECAR_BIN"] = sidecar
    return env


def test_generated_method_tables_are_current() -> None:
    """A renamed method or changed parameter must be regenerated, which breaks the plugins'
    builds where they use it: ``python -m sidecar.api.typegen``."""
    assert stale(ROOT, generate(build_registry())) == []


def test_typegen_maps_params_schemas() -> None:
    defs = {"Pair": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}
    assert (
        ts_type({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}, {})
        == "string[] | null"
    )
    assert ts_type({"enum": ["json", "text"]}, {}) == '"json" | "text"'
    assert (
        ts_type(
            {
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"type": "string"}},
            },
            {},
        )
        == "Record<string, string[]>"
    )
    assert ts_type({"$ref": "#/$defs/Pair"}, defs) == "{\n  a: number;\n}"
    ts = generate(build_registry())[Path("plugins/obsidian/src/generated/methods.ts")]
    assert '"note.backlinks": { params: NoteBacklinksParams; result: unknown };' in ts
    assert "  note: string;\n" in ts and "  depth?: number;\n" in ts  # required vs defaulted
    lua = generate(build_registry())[Path("plugins/nvim/lua/sidecar/methods.lua")]
    assert '["note.backlinks"] = { ["params"] = { "note" }, ["required"] = { "note" }' in lua


def run(
    cmd: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.timeout(240)
def test_obsidian_plugin_builds_and_its_client_works_against_the_daemon(
    daemon: RunningDaemon,
) -> None:
    npm = tool("npm")
    tool("node")
    env = plugin_env(daemon)
    for step in (["ci", "--no-audit", "--no-fund"], ["run", "build"], ["test"]):
        done = run([npm, *step], OBSIDIAN, env, timeout=180)
        assert done.returncode == 0, (
            f"npm {' '.join(step)}:\n{done.stdout[-6000:]}\n{done.stderr[-4000:]}"
        )
    out = done.stdout
    assert "ℹ fail 0" in out and "ℹ skipped 0" in out, out[-3000:]
    passed = int(out.split("ℹ pass ")[1].split()[0])
    assert passed >= 30, out[-3000:]
    for name in ("lists backlinks with line and paragraph context", "searches in lexical mode",
                 "answers malformed calls with the documented errors and stays usable",
                 "subscribes to every event and sees index.changed when a note is written",
                 "builds the relations pane from the daemon and refreshes it on index.changed"):  # fmt: skip
        assert f"✔ {name}" in out, name
    assert (OBSIDIAN / "main.js").stat().st_size > 10_000


@pytest.mark.timeout(120)
def test_neovim_plugin_headless_against_the_daemon(daemon: RunningDaemon, tmp_path: Path) -> None:
    nvim = tool("nvim")
    report_file = tmp_path / "nvim.json"
    env = plugin_env(daemon, SIDECAR_OUT=str(report_file))
    script = NVIM_PLUGIN / "tests" / "headless.lua"
    done = run([nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={NVIM_PLUGIN}",
                "-c", f"luafile {script}"], ROOT, env, timeout=90)  # fmt: skip
    assert report_file.exists(), done.stderr
    r = json.loads(report_file.read_text("utf-8"))
    assert r.get("error") is None, r.get("error")
    assert done.returncode == 0, done.stderr
    vault = daemon.vault

    assert r["command_defined"] and r["unknown_methods"] == []
    assert r["socket"] == str(daemon.socket)  # computed in Lua exactly as the daemon does
    assert r["backlinks_path"] == "services/Auth Service.md"
    assert {"Welcome.md", "people/Alice.md"} <= set(r["backlinks_sources"])
    assert r["errors"][0].startswith('unknown method "note.backlink"')
    assert "no parameter" in r["errors"][1] and r["errors"][2] == -32002

    assert r["current_note"] == "services/Auth Service.md"
    assert r["backlinks_picker"]["prompt"] == "Backlinks: services/Auth Service.md"
    assert any(label.startswith("Welcome.md:7 ") for label in r["backlinks_picker"]["labels"])
    assert r["opened"] == {"file": "Welcome.md", "line": 7}

    assert "supersedes → ADR-5 Sessions in Postgres  (both ends)" in r["relations"]
    assert "superseded_by → ADR-7 Session storage  (implied)" in r["relations"]
    assert r["search"]["prompt"] == "Search (lexical): memcached restart"
    assert any(
        "ADR-6" in label and "superseded → ADR-7" in label for label in r["search"]["labels"]
    )
    assert r["reminders"] is True

    qf = r["quickfix"]
    assert r["quickfix_title"] == "Sidecar graph lint" and r["quickfix_open"]
    assert [q["type"] for q in qf] == sorted((q["type"] for q in qf), key="EWI".index)
    dangling = [q for q in qf if q["text"].startswith("[dangling_target]")]
    assert {q["file"] for q in dangling} >= {str(vault / "services/Session Store.md")}
    assert any(q["lnum"] == 14 for q in dangling)

    assert r["index_changed"]["paths"] == ["Nvim note.md"]
    health = "\n".join(r["health"])
    assert "OK socket:" in health and "OK daemon answers" in health and "ERROR" not in health
