"""Start the real daemon as a subprocess on a vault, wait until its socket answers."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sidecar.transports.unix import RpcClient, is_serving

# Deadlines are written for a quiet machine and multiplied by this. CI and developers share
# the cores: at a load average of 8 on 2 cores each process gets about a quarter of one.
# A deadline only bounds a failure; a passing test never waits for it.
LOAD = max(1.0, 8 / (os.cpu_count() or 1))
# kill -9 loops: 6 rounds in CI (each round is a daemon start, a kill and a check); .ci/nightly
# runs the 20 that docs/reliability.md reports.
KILL_ROUNDS = int(os.environ.get("SIDECAR_KILL_ROUNDS", "6"))


@dataclass
class RunningDaemon:
    proc: subprocess.Popen[bytes]
    socket: Path
    env: dict[str, str]
    vault: Path
    log: Path

    def log_text(self) -> str:
        return self.log.read_text("utf-8", "replace")

    def client(self, timeout: float | None = 30.0) -> RpcClient:
        return RpcClient(self.socket, timeout=None if timeout is None else timeout * LOAD)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=timeout * LOAD)

    def wait_for_log(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        """The first line of the daemon's log matching ``pattern``, once it is written."""
        deadline = time.monotonic() + timeout * LOAD
        while (found := re.search(pattern, self.log_text())) is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no {pattern!r} in the daemon's log:\n{self.log_text()}")
            time.sleep(0.05)
        return found


def daemon_env(state: Path, debounce_ms: int = 100, model: str = "tiny") -> dict[str, str]:
    """``model``: the tiny hashing embedder keeps CPU free for the test; pass "minilm" for the
    real model."""
    runtime = state / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    return {
        **os.environ,
        "SIDECAR_DATA_DIR": str(state / "data"),
        "XDG_RUNTIME_DIR": str(runtime),
        "SIDECAR_WATCH_DEBOUNCE_MS": str(debounce_ms),
        "SIDECAR_EMBED_MODEL": model,
        "XDG_CACHE_HOME": str(Path(tempfile.gettempdir()) / "sidecar-test-cache"),
    }


def start(
    vault: Path,
    env: dict[str, str],
    *,
    wait: float = 60,
    wrap: Sequence[str] = (),
    code: Path | None = None,
) -> RunningDaemon:
    """Logs go to a file beside the vault: a pipe nobody reads would block a chatty daemon.
    ``wrap`` runs the daemon under another command (``prlimit --nofile=1024 --``, say).
    ``code``: another checkout with its own ``.venv`` whose daemon to run (benchmarks compare
    two commits); by default this interpreter's."""
    beside = (
        Path(env["XDG_RUNTIME_DIR"]).parent if env.get("XDG_RUNTIME_DIR") else Path(env["HOME"])
    )
    log = beside / f"daemon-{time.monotonic_ns()}.log"
    python = str(code / ".venv" / "bin" / "python") if code else sys.executable
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*wrap, python, "-m", "sidecar", "serve", "--vault", str(vault)],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=code,
        )  # fmt: skip
    where = subprocess.run(
        [python, "-m", "sidecar", "where", "--vault", str(vault)],
        env=env, capture_output=True, text=True, check=True, cwd=code,
    ).stdout.strip()  # fmt: skip
    socket = Path(where)
    deadline = time.monotonic() + wait * LOAD
    while not is_serving(socket):
        if proc.poll() is not None:
            raise RuntimeError(f"daemon exited {proc.returncode}: {log.read_text()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("daemon did not start in time")
        time.sleep(0.05)
    d = RunningDaemon(proc, socket, env, vault, log)
    with d.client() as c:  # serving already; wait for the start-up reconcile to finish
        while not c.call("index.status")["daemon"]["ready"]:
            if time.monotonic() > deadline:
                raise RuntimeError("daemon did not finish its start-up reconcile in time")
            time.sleep(0.05)
    return d


@contextmanager
def running(
    source: Path, *, debounce_ms: int = 100, model: str = "tiny", env: dict[str, str] | None = None,
    wrap: Sequence[str] = (),
) -> Iterator[RunningDaemon]:  # fmt: skip
    """A copy of ``source`` served by a real daemon; short paths keep the socket under 104 bytes.
    ``env`` adds to (or overrides) the daemon's environment."""
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="sct"))
    vault = state / "vault"
    shutil.copytree(source, vault)
    d = start(vault, {**daemon_env(state, debounce_ms, model), **(env or {})}, wrap=wrap)
    try:
        yield d
    finally:
        if d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait(timeout=10 * LOAD)
        shutil.rmtree(state, ignore_errors=True)
