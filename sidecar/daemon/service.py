"""Run the daemon as a per-user service: a systemd user unit on Linux, a LaunchAgent on macOS.

Describing and planning are pure: frozen values in, the file's text and an ordered tuple of steps
out. So ``--dry-run`` prints exactly what ``apply`` would do, and the tests need no running user
manager. Only ``apply`` and ``status`` touch the world, through a ``Runner`` the caller passes.
The files themselves come from ``service_render``.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from sidecar.config import Settings
from sidecar.daemon.service_render import render_plist, render_unit, systemd_escape_path
from sidecar.errors import SidecarError, UsageError
from sidecar.transports.unix_path import socket_path_for

Platform = Literal["linux", "macos"]
LABEL_PREFIX = "com.vaultsidecar.sidecar."
SYSTEMCTL = ("systemctl", "--user")
SYSTEM_PATH = ("/usr/local/bin", "/opt/homebrew/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin")
UNIT_NAME_MAX = 255  # systemd's UNIT_NAME_MAX (256) counts the terminating NUL
_NO_MANAGER = re.compile(r"Failed to connect to bus|not been booted with systemd")


@dataclass(frozen=True, slots=True)
class Service:
    """One vault's service on one platform: what to write where, and what to call it."""

    platform: Platform
    vault: Path
    name: str  # the systemd unit name, or the launchd label
    path: Path  # the unit file or plist that install writes
    text: str
    domain: str = ""  # launchd's gui/<uid>
    log_file: Path | None = None  # launchd's; systemd's go to the journal
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Write:
    path: Path
    text: str


@dataclass(frozen=True, slots=True)
class MakeDir:
    path: Path


@dataclass(frozen=True, slots=True)
class Remove:
    path: Path


@dataclass(frozen=True, slots=True)
class Run:
    argv: tuple[str, ...]
    may_fail: bool = False  # e.g. disabling a unit that was never enabled


Step = Write | MakeDir | Remove | Run


@dataclass(frozen=True, slots=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str


class Runner(Protocol):
    def __call__(self, argv: Sequence[str]) -> Completed: ...


def run_command(argv: Sequence[str]) -> Completed:
    """The real runner. A non-zero exit is returned, not raised: the plan says what may fail."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=120, check=False)
    return Completed(proc.returncode, proc.stdout, proc.stderr)


def describe(
    settings: Settings, platform: Platform, command: Sequence[str],
    environ: Mapping[str, str], home: Path, uid: int,
) -> Service:  # fmt: skip
    """Everything about this vault's service that can be known without running anything."""
    if platform == "linux":
        return _systemd(settings, command, environ, home)
    return _launchd(settings, command, home, uid)


def _systemd(
    settings: Settings, command: Sequence[str], env: Mapping[str, str], home: Path
) -> Service:
    name = f"sidecar@{systemd_escape_path(str(settings.vault))}.service"
    if len(name) > UNIT_NAME_MAX:
        raise UsageError(
            f"the vault path is too long for a systemd unit name "
            f"({len(name)} > {UNIT_NAME_MAX} characters once escaped)"
        )
    socket_dir = socket_path_for(settings, env).parent
    in_runtime = socket_dir == Path(env.get("XDG_RUNTIME_DIR") or "/-", "sidecar")
    extra = [] if in_runtime or socket_dir.is_relative_to(settings.data_dir) else [socket_dir]
    pinned = {}
    if env.get("XDG_DATA_HOME") and not settings["index.data_dir"]:
        pinned["XDG_DATA_HOME"] = env["XDG_DATA_HOME"]  # the user manager may not have the shell's
    warnings = tuple(
        f"{p} is under /tmp, which the service sees as its own private /tmp (PrivateTmp=yes)"
        for p in (settings.vault, *extra)
        if p.is_relative_to("/tmp") or p.is_relative_to("/var/tmp")
    )
    folder = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "systemd" / "user"
    text = render_unit(command, [str(p) for p in (settings.data_dir, *extra)], pinned)
    return Service("linux", settings.vault, name, folder / name, text, warnings=warnings)


def _launchd(settings: Settings, command: Sequence[str], home: Path, uid: int) -> Service:
    slug = re.sub(r"[^A-Za-z0-9.-]+", "-", settings.vault_id)
    label = LABEL_PREFIX + slug
    log = home / "Library" / "Logs" / "sidecar" / f"{slug}.log"
    path_env = ":".join(dict.fromkeys([str(Path(command[0]).parent), *SYSTEM_PATH]))
    text = render_plist(label, command, str(settings.vault), str(log), path_env)
    path = home / "Library" / "LaunchAgents" / f"{label}.plist"
    return Service("macos", settings.vault, label, path, text, f"gui/{uid}", log)


def plan_install(svc: Service, current: str | None) -> tuple[Step, ...]:
    """Steps that leave the service written, enabled and running; ``current`` is the old file."""
    if svc.platform == "linux":
        reload = Run((*SYSTEMCTL, "daemon-reload"))
        start: tuple[Step, ...] = (Run((*SYSTEMCTL, "enable", "--now", svc.name)),)
        if current is not None and current != svc.text:  # it may be running the old unit
            start = (Run((*SYSTEMCTL, "enable", svc.name)), Run((*SYSTEMCTL, "restart", svc.name)))
        return (Write(svc.path, svc.text), reload, *start)
    assert svc.log_file is not None
    unload = () if current is None else (Run(_bootout(svc), may_fail=True),)
    bootstrap = Run(("launchctl", "bootstrap", svc.domain, str(svc.path)))
    return (*unload, MakeDir(svc.log_file.parent), Write(svc.path, svc.text), bootstrap)


def plan_uninstall(svc: Service, exists: bool) -> tuple[Step, ...]:
    """Steps that stop and disable the service and remove its file (if install wrote one)."""
    remove = (Remove(svc.path),) if exists else ()
    if svc.platform == "linux":
        disable = Run((*SYSTEMCTL, "disable", "--now", svc.name), may_fail=True)
        return (disable, *remove, Run((*SYSTEMCTL, "daemon-reload")))
    return (Run(_bootout(svc), may_fail=True), *remove)


def _bootout(svc: Service) -> tuple[str, ...]:
    return ("launchctl", "bootout", f"{svc.domain}/{svc.name}")


def step_text(step: Step) -> str:
    """A shell line saying what the step does, for ``--dry-run`` and reports."""
    match step:
        case Write(path=path):
            return f"write {shlex.quote(str(path))}"
        case MakeDir(path=path):
            return f"mkdir -p {shlex.quote(str(path))}"
        case Remove(path=path):
            return f"rm {shlex.quote(str(path))}"
        case Run(argv=argv):
            return shlex.join(argv)


def apply(steps: Sequence[Step], runner: Runner) -> None:
    for step in steps:
        match step:
            case Write(path=path, text=text):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, "utf-8")
            case MakeDir(path=path):
                path.mkdir(parents=True, exist_ok=True)
            case Remove(path=path):
                path.unlink(missing_ok=True)
            case Run(argv=argv, may_fail=may_fail):
                run_checked(runner, argv, may_fail)


def run_checked(runner: Runner, argv: Sequence[str], may_fail: bool = False) -> Completed:
    """Run one command; a missing service manager is an error with a way forward, always."""
    hint = " (`sidecar service install --dry-run` prints the file and commands to use by hand)"
    try:
        result = runner(argv)
    except FileNotFoundError as exc:
        raise SidecarError(f"{argv[0]} not found: no service manager to use{hint}") from exc
    except (OSError, subprocess.SubprocessError) as exc:
        raise SidecarError(f"{shlex.join(argv)} could not run: {exc}") from exc
    if _NO_MANAGER.search(result.stderr):
        raise SidecarError(
            f"the systemd user manager is not reachable ({result.stderr.strip()}): log in to "
            f"a session that starts it or run `loginctl enable-linger`{hint}"
        )
    if result.returncode and not may_fail:
        detail = (result.stderr or result.stdout).strip()
        raise SidecarError(f"{shlex.join(argv)} failed (exit {result.returncode}): {detail}")
    return result


def status(svc: Service, runner: Runner) -> dict[str, Any]:
    """Whether the service file is there, enabled and running, as the service manager says."""
    out: dict[str, Any] = {"platform": svc.platform, "name": svc.name, "file": str(svc.path),
                           "installed": svc.path.exists()}  # fmt: skip
    if svc.platform == "linux":
        keys = "LoadState,ActiveState,SubState,UnitFileState,MainPID"
        shown = run_checked(runner, (*SYSTEMCTL, "show", f"--property={keys}", svc.name)).stdout
        props = dict(line.split("=", 1) for line in shown.splitlines() if "=" in line)
        pid = int(props.get("MainPID") or 0)
        state = f"{props.get('ActiveState', 'unknown')} ({props.get('SubState', 'unknown')})"
        running = props.get("ActiveState") == "active"
        enabled = props.get("UnitFileState") == "enabled"
        return {**out, "enabled": enabled, "running": running, "state": state, "pid": pid or None}
    result = run_checked(runner, ("launchctl", "print", f"{svc.domain}/{svc.name}"), may_fail=True)
    loaded = result.returncode == 0
    found = re.search(r"^\s*state = (.+)$", result.stdout, re.M)
    state = found.group(1).strip() if loaded and found else "loaded" if loaded else "not loaded"
    found_pid = re.search(r"^\s*pid = (\d+)$", result.stdout, re.M)
    return {**out, "enabled": loaded, "running": state == "running", "state": state,
            "pid": int(found_pid.group(1)) if loaded and found_pid else None}  # fmt: skip
