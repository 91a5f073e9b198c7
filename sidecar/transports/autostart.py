"""Start a daemon for a vault when none answers, for any client (the CLI, ``sidecar lsp``,
``sidecar mcp``): ``sidecar serve --vault V`` detached, then a wait for its socket.

The daemon runs in a session of its own with its output in a log file, so it outlives the
client that started it (an editor closing, an agent's MCP server killed) and no terminal
signal reaches it. The wait polls the socket on a short, growing interval up to a deadline,
and ends early when the daemon exits, with the last line of its log as the reason (the index
held by another process, a bad config): a client never waits out the deadline on a daemon
that is already dead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from sidecar.config import Settings
from sidecar.errors import DaemonUnreachable
from sidecar.transports.unix_client import RpcClient
from sidecar.transports.unix_path import find_daemon, is_serving, socket_path_for

__all__ = ["daemon_log_path", "start_daemon"]

Progress = Callable[[str], None]


def daemon_log_path(settings: Settings) -> Path:
    return settings.data_dir / "daemon.log"


def start_daemon(
    settings: Settings,
    env: Mapping[str, str],
    *,
    timeout: float = 60.0,
    wait_ready: bool = False,
    progress: Progress | None = None,
    command: Sequence[str] | None = None,
) -> Path:
    """The socket of a daemon serving ``settings.vault``, started now if none answers.

    ``timeout`` bounds the whole wait; ``wait_ready`` also waits for the daemon's start-up
    reconcile (``index.status`` -> ``daemon.ready``), so the first answer is not from a
    half-built index. ``progress`` gets a few human-readable lines (what was started, the log
    file, the wait so far). ``command`` replaces ``python -m sidecar serve --vault V``.
    Raises ``DaemonUnreachable`` when the daemon exits or the deadline passes.
    """
    say = progress or (lambda _message: None)
    serving = find_daemon(settings, env)
    if serving is not None:
        return serving
    socket = socket_path_for(settings, env)
    log = daemon_log_path(settings)
    argv = list(
        command or [sys.executable, "-m", "sidecar", "serve", "--vault", str(settings.vault)]
    )
    proc = _spawn(argv, log, env, settings.vault)
    say(f"started a daemon for {settings.vault} (pid {proc.pid}, log {log})")
    deadline = time.monotonic() + timeout
    _wait(lambda: is_serving(socket), proc, deadline, log, say, "socket")
    if wait_ready:
        _wait(lambda: _ready(socket), proc, deadline, log, say, "first index pass")
    return socket


def _spawn(
    argv: list[str], log: Path, env: Mapping[str, str], cwd: Path
) -> subprocess.Popen[bytes]:
    """``cwd``: the vault, not the client's folder, which may be deleted while the daemon lives
    on (an editor's temporary folder): a daemon in a deleted folder fails every relative path."""
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, env=dict(env), cwd=cwd,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
    except OSError as exc:
        raise DaemonUnreachable(f"cannot start the daemon ({argv[0]}): {exc}") from exc
    finally:
        os.close(fd)


def _wait(
    done: Callable[[], bool], proc: subprocess.Popen[bytes], deadline: float, log: Path,
    say: Progress, what: str,
) -> None:  # fmt: skip
    interval, started, told = 0.005, time.monotonic(), 0
    while not done():
        if proc.poll() is not None and not done():
            # it may have lost a race to another client's daemon, which then serves
            raise DaemonUnreachable(
                f"the daemon exited ({proc.returncode}) before serving: {_last_line(log)}",
                {"log": str(log)},
            )
        now = time.monotonic()
        if now >= deadline:
            raise DaemonUnreachable(
                f"no daemon's {what} within {deadline - started:.0f} s (log {log})",
                {"log": str(log)},
            )
        if int(now - started) >= told + 5:
            told = int(now - started)
            say(f"waiting for the daemon's {what} ({told} s)")
        time.sleep(min(interval, max(deadline - now, 0)))
        interval = min(interval * 2, 0.1)


def _ready(socket: Path) -> bool:
    try:
        with RpcClient(socket, timeout=5.0) as client:
            return bool(client.call("index.status")["daemon"]["ready"])
    except DaemonUnreachable:
        return False


def _last_line(log: Path) -> str:
    try:
        lines = log.read_text("utf-8", "replace").strip().splitlines()
    except OSError:
        return "no log"
    return lines[-1] if lines else "no output"
