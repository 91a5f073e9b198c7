"""A real editor drives ``sidecar lsp``: Neovim 0.11 (the PyPI wheel ``.ci/run`` installs),
headless, configured by the ``docs/lsp.md`` snippet copied verbatim, started in a folder outside
the vault, on a note whose path has a space. It types a broken link, waits for the diagnostic,
applies the preferred code action, and the test reads the buffer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import RunningDaemon, running
from tests.test_plugins import tool

pytestmark = pytest.mark.e2e  # starts the daemon, the CLI or an editor

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "plugins" / "nvim" / "tests" / "lsp.lua"
NOTE = "services/Session Store.md"


def docs_snippet() -> str:
    """The Lua block under the Neovim heading of docs/lsp.md, exactly as written there."""
    text = (ROOT / "docs" / "lsp.md").read_text("utf-8")
    section = text.split("## Neovim", 1)[1]
    found = re.search(r"```lua\n(.*?)```", section, re.S)
    assert found is not None, "docs/lsp.md lost its Neovim snippet"
    return found.group(1)


@pytest.fixture
def daemon() -> Iterator[RunningDaemon]:
    with running(EXAMPLE_VAULT, model="tiny") as d:
        yield d


@pytest.mark.timeout(180)
def test_neovim_applies_the_preferred_fix_on_a_spaced_note(daemon: RunningDaemon,
                                                          tmp_path: Path) -> None:  # fmt: skip
    nvim = tool("nvim")
    wide = daemon.vault / "people" / "Zoë — notes.md"  # non-ASCII before its links
    wide.write_text("Ça — voir [[Session Store]] · 😀 [[Session Store|the store]]\n", "utf-8")
    with daemon.client() as c:
        for _ in range(300):
            refs = c.call("note.references", {"note": NOTE})["references"]
            if any(r["source"] == "people/Zoë — notes.md" for r in refs):
                break
            time.sleep(0.05)
    snippet = tmp_path / "snippet.lua"
    snippet.write_text(docs_snippet(), "utf-8")
    report = tmp_path / "report.json"
    bin_dir = str(Path(sys.executable).parent)  # `sidecar` as the snippet names it, on PATH
    env = {k: v for k, v in daemon.env.items() if k != "SIDECAR_VAULT"}
    env.update(
        PATH=bin_dir + os.pathsep + env.get("PATH", ""),
        SIDECAR_OUT=str(report),
        SIDECAR_LSP_SNIPPET=str(snippet),
        SIDECAR_NOTE=str(daemon.vault / NOTE),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    done = subprocess.run([nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c",
                           f"luafile {SCRIPT}"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=150)  # fmt: skip
    assert report.exists(), done.stderr
    r = json.loads(report.read_bytes().decode("utf-8", "replace"))  # a range cut mid-character
    assert r.get("error") is None, (r, done.stderr[-2000:])
    assert done.returncode == 0, done.stderr
    assert r["filetype"] == "markdown" and r["root_dir"] == str(daemon.vault)
    assert r["diagnostic"]["code"] == "dangling_target"
    assert r["line"] == "Typed: see [[Session Store]] now." and r["modified"]
    assert "Session Store" in (daemon.vault / NOTE).read_text("utf-8")
    assert "[[Sesion Store]]" not in (daemon.vault / NOTE).read_text("utf-8")  # never saved
    # references as Neovim lists them: each item's range covers a link to the note
    assert r["encoding"] == "utf-8"  # Neovim prefers UTF-8: ranges count bytes
    rel = {(str(Path(i["file"]).relative_to(daemon.vault)), i["lnum"], i["covered"])
           for i in r["references"]}  # fmt: skip
    assert rel == {
        ("services/Auth Service.md", 4, "[[Session Store]]"),
        ("services/Auth Service.md", 11, "[[Session Store]]"),
        ("services/Auth Service.md", 20, "[Session Store runbook](Session%20Store.md#runbook)"),
        ("decisions/ADR-7 Session storage.md", 16, "[[Session Store]]"),
        ("people/Alice.md", 7, "[[Session Store]]"),
        ("people/Zoë — notes.md", 1, "[[Session Store]]"),
        ("people/Zoë — notes.md", 1, "[[Session Store|the store]]"),
    }, r["references"]
