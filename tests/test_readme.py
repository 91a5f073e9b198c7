"""The README's commands run as a newcomer runs them (issue 25): on a copy of the repository,
the first block installs into a fresh venv and starts the daemon on the example vault (stopped
with SIGINT once it is ready, as Ctrl-C stops it), then every later ``sh`` block runs in order
in one shell's state (its exports carry on) and must exit 0. A ``text`` block right after a
command block is what that command prints, stdout and stderr as a terminal shows them; times,
scores and timestamps may differ.

A block after ``<!-- readme-test: daemon -->`` starts a daemon: it runs until the daemon says
it is ready, then gets SIGINT. ``<!-- readme-test: skip: why -->`` names a block that needs
a program the test machine lacks (npm for Obsidian, Claude Code) and the test that covers it.
``bash .ci/run`` is the README's second command: it is what runs this test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

BLOCK = re.compile(
    r"(?:<!-- readme-test: (?P<mark>[^>]*?) -->\n\s*)?```(?P<lang>\w*)\n(?P<body>.*?)^\s*```",
    re.S | re.M,
)
SKIP_COPY = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}


@dataclass
class Block:
    lang: str
    body: str
    mark: str
    output: str | None = None  # the text block that follows it


def readme_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    previous_end = -1
    for m in BLOCK.finditer(text):
        body = "\n".join(line.strip() for line in m["body"].splitlines())
        if m["lang"] == "text" and blocks and text[previous_end : m.start()].strip() == "":
            blocks[-1].output = m["body"]
        else:
            blocks.append(Block(m["lang"], body, m["mark"] or ""))
        previous_end = m.end()
    return blocks


def normalised(text: str) -> list[str]:
    """Lines with what differs from run to run replaced: times, scores, timestamps."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.+\d:]*", "<when>", line)
        line = re.sub(r"\b\d+ min \d+ s\b|\b\d+(\.\d+)? m?s\b", "<time>", line)
        line = re.sub(r"in <time> \([^)]*\)", "in <time>", line)  # stages shown when they differ
        line = re.sub(r"^\d\.\d{3}  ", "<score>  ", line)
        out.append(line.rstrip())
    return out


def test_blocks_are_read_from_the_readme() -> None:
    blocks = readme_blocks((REPO / "README.md").read_text("utf-8"))
    shell = [b for b in blocks if b.lang == "sh"]
    assert "pip install -e ." in shell[0].body and "sidecar serve" in shell[0].body
    assert shell[1].body.strip() == "bash .ci/run"
    assert sum(b.output is not None for b in shell) >= 4  # index, search, backlinks, lint
    assert any(b.mark == "daemon" for b in shell)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's files as a fresh clone has them (no venv, no caches)."""
    root = tmp_path_factory.mktemp("readme") / "vault-sidecar"
    shutil.copytree(REPO, root, ignore=lambda _d, names: [n for n in names if n in SKIP_COPY])
    return root


def environment(home: Path) -> dict[str, str]:
    """A newcomer's: their own HOME, data, runtime and cache folders (the model is prepared
    afresh, as on a new machine), nothing of this test run's virtualenv."""
    runtime = Path(tempfile.mkdtemp(prefix="rdm", dir="/tmp"))  # a socket path stays short
    runtime.chmod(0o700)
    ours = ("SIDECAR_", "VIRTUAL_ENV", "PYTHONPATH")  # a newcomer's Python finds only its venv
    env = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return {**env, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"),
            "XDG_CACHE_HOME": str(home / "cache"), "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_RUNTIME_DIR": str(runtime)}  # fmt: skip


def embedded_all(cwd: Path, env: dict[str, str]) -> bool:
    """Whether the running daemon has embedded every chunk (asked through its socket)."""
    r = subprocess.run([str(cwd / ".venv/bin/sidecar"), "status", "--json", "--vault",
                        str(cwd / "docs/example-vault")], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    return r.returncode == 0 and json.loads(r.stdout).get("pending") == 0


def run_daemon_block(
    script: str, cwd: Path, env: dict[str, str], timeout: float, settle: bool = False
) -> str:
    """Start the block in its own process group, wait for the daemon's ready line (and with
    ``settle`` for its background embedding to finish), then SIGINT the group as Ctrl-C does;
    the block must then exit 0. Returns what it printed."""
    log = cwd.parent / f"daemon-{time.monotonic_ns()}.log"
    with log.open("w") as err:
        proc = subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env, stdout=err,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if "ready: ask it from another terminal" in log.read_text("utf-8", "replace"):
                break
            time.sleep(0.5)
        text = log.read_text("utf-8", "replace")
        assert proc.poll() is None, f"the daemon block exited early:\n{text[-3000:]}"
        assert "ready: ask it" in text, f"no ready line in {timeout:.0f} s:\n{text[-3000:]}"
        while settle and not embedded_all(cwd, env) and time.monotonic() < deadline:
            time.sleep(1)
        os.killpg(proc.pid, signal.SIGINT)
        rc = proc.wait(timeout=60)
    text = log.read_text("utf-8", "replace")
    assert rc == 0, f"exit {rc} after SIGINT:\n{text[-3000:]}"
    return text


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
@pytest.mark.timeout(1800)  # a fresh venv's install, then the model prepared afresh
def test_readme_commands_run_as_written(clone: Path) -> None:
    blocks = [b for b in readme_blocks((clone / "README.md").read_text("utf-8")) if b.lang == "sh"]
    env = environment(clone.parent / "home")
    first, ci, rest = blocks[0], blocks[1], blocks[2:]
    assert ci.body.strip() == "bash .ci/run"  # this test runs inside it

    log = run_daemon_block(first.body, clone, env, timeout=900, settle=True)
    assert "Successfully installed" in log and "vault-sidecar" in log
    daemon_lines = log[log.index("Successfully installed") :].splitlines()[1:]
    noise = [line for line in daemon_lines if " INFO " in line and " INFO sidecar" not in line]
    assert noise == [], "third-party INFO lines at the default level:\n" + "\n".join(noise[:5])
    assert any("preparing the embedding model" in line for line in daemon_lines)
    assert not any("Traceback" in line for line in daemon_lines)

    # the shell the daemon was stopped in: activated, and each block's exports kept
    state = clone.parent / "shell-state.sh"
    state.write_text(". .venv/bin/activate\n", "utf-8")
    for block in rest:
        if block.mark.startswith("skip"):
            continue
        script = f". {state}\n{block.body}\nexport -p > {state}.new\n"
        sys.stdout.write(f"README block: {block.body.splitlines()[0]}\n")  # shown if it fails
        if block.mark == "daemon":
            run_daemon_block(script, clone, env, timeout=300)
            continue
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=clone, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=600)  # fmt: skip
        assert r.returncode == 0, f"{block.body}\nexited {r.returncode}:\n{r.stdout[-3000:]}"
        Path(f"{state}.new").replace(state)
        if block.output is not None:
            assert normalised(r.stdout) == normalised(block.output), (
                f"{block.body}\nprinted:\n{r.stdout}"
            )
