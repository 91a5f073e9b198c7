"""How a client finds the daemon, and what it does when none answers.

The daemon and every client compute the socket from the uid, HOME and the vault alone, so a
client started with the MCP SDK's environment (HOME, PATH, SHELL, TERM) finds the daemon a
shell started. With no daemon, a command says in one line that it runs in-process (or starts
one, when configured); a socket whose daemon died is never waited on.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sidecar.config import load_settings
from sidecar.errors import DaemonUnreachable, UsageError
from sidecar.transports.autostart import start_daemon
from sidecar.transports.unix_client import RpcClient
from sidecar.transports.unix_path import (
    default_socket_path,
    find_daemon,
    runtime_dir,
    socket_candidates,
    socket_path_for,
)
from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import RunningDaemon, start

pytestmark = pytest.mark.e2e  # starts the daemon, the CLI or an editor

UID = os.getuid()
SDK_KEYS = ("HOME", "PATH", "SHELL", "TERM")  # what the MCP SDK passes to a stdio server


@pytest.fixture
def home() -> Iterator[Path]:
    """A short HOME (socket paths are limited to ~104 bytes) holding a copy of the example
    vault, configured for the tiny embedder so an in-process run does not load the model."""
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="sch"))
    vault = path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    (vault / ".sidecar").mkdir(exist_ok=True)
    (vault / ".sidecar" / "config.toml").write_text('[embed]\nmodel = "tiny"\n', "utf-8")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def sdk_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in SDK_KEYS if k in os.environ}
    return {**env, "HOME": str(home), **extra}


def sidecar(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sidecar", *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


Stops = list[Callable[[], object]]


@pytest.fixture
def daemons(home: Path) -> Iterator[Stops]:
    """How to stop each daemon a test started (itself, or through a command)."""
    stops: Stops = []
    yield stops
    for stop in stops:
        with contextlib.suppress(ProcessLookupError):
            stop()


def started(d: RunningDaemon, stops: Stops) -> RunningDaemon:
    stops.append(lambda: d.stop(signal.SIGKILL))
    return d


# -- where the socket is ---------------------------------------------------------------------


def test_runtime_dir_is_the_variable_else_the_users_run_dir(tmp_path: Path) -> None:
    assert runtime_dir({"XDG_RUNTIME_DIR": "/run/user/1000"}) == Path("/run/user/1000")
    run_user = tmp_path / "run-user"
    assert runtime_dir({}, run_user) is None  # no /run/user/<uid>: nothing
    (run_user / str(UID)).mkdir(parents=True, mode=0o700)
    assert runtime_dir({}, run_user) == run_user / str(UID)


def test_candidates_depend_on_home_not_on_xdg_data_home(tmp_path: Path) -> None:
    home = Path("/h")
    with_xdg = socket_candidates("abc", {"HOME": "/h", "XDG_DATA_HOME": "/elsewhere"})
    assert with_xdg == socket_candidates("abc", {"HOME": "/h"})
    assert home / ".local/share/sidecar/abc/sock/s" in with_xdg
    runtime = socket_candidates("abc", {"HOME": "/h", "XDG_RUNTIME_DIR": "/run/user/7"})
    assert runtime[0] == Path("/run/user/7/sidecar/abc.sock")
    assert runtime[-1] == Path(f"/tmp/sidecar-{UID}/abc.sock")
    deep = {"HOME": "/" + "y" * 120, "XDG_RUNTIME_DIR": "/r" + "x" * 100}
    assert default_socket_path("abc", deep) == Path(f"/tmp/sidecar-{UID}/abc.sock")
    with pytest.raises(UsageError, match="104"):
        default_socket_path("v" * 100, deep)


def test_a_configured_socket_path_wins(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, {"SIDECAR_DAEMON_SOCKET_PATH": "/x/d.sock"})
    assert socket_path_for(settings, {}) == Path("/x/d.sock")


def test_daemon_started_from_a_shell_is_found_with_the_sdk_environment(
    home: Path, daemons: Stops
) -> None:
    """The daemon has the shell's variables (an XDG_DATA_HOME of its own among them); the
    client only the four the MCP SDK passes. Both compute the same socket."""
    shell = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "xdg")}
    shell.pop("XDG_RUNTIME_DIR", None)
    started(start(home / "vault", shell), daemons)
    where = sidecar(sdk_env(home), "where", "--json", "--vault", str(home / "vault"))
    assert '"serving": true' in where.stdout, where
    r = sidecar(sdk_env(home), "backlinks", "Auth Service", "--vault", str(home / "vault"))
    assert r.returncode == 0 and "Session Store" in r.stdout
    assert r.stderr == ""  # through the socket: no in-process notice
    own_index = home / ".local/share/sidecar" / load_settings(home / "vault", {}).vault_id / "lance"
    assert not own_index.exists()  # the client opened no index of its own


# -- no daemon, a dead one, starting one -----------------------------------------------------


def seconds_to_first_stderr_line(env: dict[str, str], *args: str) -> tuple[float, str, str]:
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "sidecar", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stderr is not None
    first = proc.stderr.readline()
    took = time.monotonic() - began
    stdout, rest = proc.communicate(timeout=120)
    assert proc.returncode == 0, first + rest
    return took, first, stdout


def floor_seconds(env: dict[str, str]) -> float:
    """How long this interpreter takes to start the CLI at all, under the machine's load now."""
    began = time.monotonic()
    sidecar(env, "--version")
    return time.monotonic() - began


def test_no_daemon_says_in_one_line_that_it_runs_in_process(home: Path) -> None:
    env = sdk_env(home)
    took, first, stdout = seconds_to_first_stderr_line(
        env, "backlinks", "Auth Service", "--vault", str(home / "vault")
    )
    assert "running in-process" in first
    assert "Session Store" in stdout
    assert took < floor_seconds(env) + 1.0  # said before any work, not after a wait


def stale_socket(path: Path) -> None:
    """A socket file whose daemon is gone: bound, never listening, closed without unlinking
    (what a daemon killed with SIGKILL leaves)."""
    path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.close()


def test_a_dead_daemons_socket_is_not_waited_on(home: Path) -> None:
    env = sdk_env(home)
    settings = load_settings(home / "vault", env)
    stale_socket(socket_path_for(settings, env))
    assert socket_path_for(settings, env).exists() and find_daemon(settings, env) is None
    took, first, stdout = seconds_to_first_stderr_line(
        env, "backlinks", "Auth Service", "--vault", str(home / "vault")
    )
    assert "running in-process" in first and "Session Store" in stdout
    assert took < floor_seconds(env) + 1.0


def test_autostart_starts_a_daemon_that_outlives_the_command(home: Path, daemons: Stops) -> None:
    env = sdk_env(home, SIDECAR_DAEMON_AUTOSTART="true")
    settings = load_settings(home / "vault", env)
    stale_socket(socket_path_for(settings, env))  # a previous daemon died: replaced
    r = sidecar(env, "backlinks", "Auth Service", "--vault", str(home / "vault"))
    said = re.search(r"started a daemon .*\(pid (\d+)", r.stderr)
    assert said, r.stderr
    pid = int(said.group(1))
    daemons.append(lambda: os.kill(pid, signal.SIGKILL))  # the command's child, not ours
    assert r.returncode == 0 and "Session Store" in r.stdout, r.stderr
    path = find_daemon(settings, env)
    assert path is not None
    with RpcClient(path) as client:
        assert client.call("index.status")["daemon"]["pid"] == pid
    assert os.getsid(pid) == pid  # its own session: the caller's terminal cannot stop it
    again = sidecar(env, "backlinks", "Auth Service", "--vault", str(home / "vault"))
    assert "Session Store" in again.stdout and again.stderr == ""


def test_start_daemon_reports_a_daemon_that_exits(home: Path) -> None:
    settings = load_settings(home / "vault", {})
    fail = [sys.executable, "-c", "import sys; print('cannot open the index: locked'); sys.exit(1)"]
    seen: list[str] = []
    began = time.monotonic()
    with pytest.raises(DaemonUnreachable, match="locked"):
        start_daemon(settings, sdk_env(home), timeout=60, progress=seen.append, command=fail)
    assert time.monotonic() - began < 30  # ended by the exit, not by the deadline
    assert seen and "started a daemon" in seen[0]


def test_start_daemon_returns_a_running_daemons_socket_at_once(home: Path, daemons: Stops) -> None:
    env = sdk_env(home)
    started(start(home / "vault", env), daemons)
    settings = load_settings(home / "vault", env)
    never = [sys.executable, "-c", "raise SystemExit('must not run')"]
    assert start_daemon(settings, env, command=never) == find_daemon(settings, env)
