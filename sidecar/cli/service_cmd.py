"""``sidecar service``: install, remove and inspect the daemon as a per-user service.

The composition root for ``sidecar.daemon.service``: only here are the settings, the platform,
the environment and the running ``sidecar`` looked up; the module plans, this applies or prints.
Tests pass a fake command runner with ``CliRunner.invoke(service, ..., obj={"runner": fake})``,
and the hidden ``--platform`` renders the other system's file on this one.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from sidecar.cli import output
from sidecar.cli.base import F, common, fail
from sidecar.config import find_vault, load_settings
from sidecar.errors import SidecarError, UsageError

if TYPE_CHECKING:  # imported where used: rendering and running a service is not start-up work
    from sidecar.daemon.service import Platform, Runner, Service, Step


def _options(fn: F) -> F:
    fn = click.option("--platform", type=click.Choice(["linux", "macos"]), hidden=True,
                      help="Render for this system instead of the running one.")(fn)  # fmt: skip
    return common(fn)


def _dry_run(fn: F) -> F:
    return click.option("--dry-run", is_flag=True,
                        help="Print the file and the commands; change nothing.")(fn)  # fmt: skip


@click.group()
def service() -> None:
    """Run the daemon as a user service, one per vault (systemd on Linux, launchd on macOS)."""


@service.command()
@_options
@_dry_run
@click.pass_context
def install(
    ctx: click.Context, vault: str | None, as_json: bool, platform: str | None, dry_run: bool
) -> None:
    """Write the vault's unit (or LaunchAgent), enable it and start it."""
    from sidecar.daemon.service import apply, plan_install

    try:
        svc = _service(vault, platform, must_exist=True)
        path = svc.path
        steps = plan_install(svc, path.read_text("utf-8") if path.is_file() else None)
        if not dry_run:
            apply(steps, _runner(ctx))
    except (SidecarError, OSError) as exc:
        fail(_error(exc), as_json)
    result = {**_report(svc, steps, dry_run), "text": svc.text}
    output.emit(result, as_json, _fmt_plan if dry_run else _fmt_done("installed and started"))


@service.command()
@_options
@_dry_run
@click.pass_context
def uninstall(
    ctx: click.Context, vault: str | None, as_json: bool, platform: str | None, dry_run: bool
) -> None:
    """Stop and disable the vault's service and remove its file."""
    from sidecar.daemon.service import apply, plan_uninstall

    try:
        svc = _service(vault, platform, must_exist=False)
        steps = plan_uninstall(svc, svc.path.exists())
        if not dry_run:
            apply(steps, _runner(ctx))
    except (SidecarError, OSError) as exc:
        fail(_error(exc), as_json)
    output.emit(_report(svc, steps, dry_run), as_json,
                _fmt_plan if dry_run else _fmt_done("stopped, disabled and removed"))  # fmt: skip


@service.command(name="status")
@_options
@click.pass_context
def status_(ctx: click.Context, vault: str | None, as_json: bool, platform: str | None) -> None:
    """Whether the vault's service is installed, enabled and running."""
    from sidecar.daemon.service import status

    try:
        svc = _service(vault, platform, must_exist=False)
        result = {**status(svc, _runner(ctx)), "vault": str(svc.vault), "logs": _logs(svc)}
    except (SidecarError, OSError) as exc:
        fail(_error(exc), as_json)
    output.emit(result, as_json, _fmt_status)


def _service(vault: str | None, platform: str | None, must_exist: bool) -> Service:
    """The vault's service; uninstall and status also accept a vault folder that is gone."""
    from sidecar.daemon.service import describe
    from sidecar.daemon.service_render import find_command

    if vault and not must_exist and not Path(vault).expanduser().is_dir():
        root = Path(vault).expanduser().resolve()
    else:
        root = find_vault(vault, os.environ, Path.cwd())
    settings = load_settings(root, os.environ)
    command = find_command(sys.argv[0], sys.executable)
    return describe(settings, _platform(platform), command, os.environ, Path.home(), os.getuid())


def _platform(explicit: str | None) -> Platform:
    if explicit in ("linux", "macos"):
        return cast("Platform", explicit)
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "macos"
    raise UsageError("sidecar service knows systemd (Linux) and launchd (macOS); elsewhere, "
                     "run `sidecar serve --vault PATH` from your own service manager")  # fmt: skip


def _runner(ctx: click.Context) -> Runner:
    from sidecar.daemon.service import run_command

    obj = ctx.find_root().obj
    return (
        cast("Runner", obj["runner"]) if isinstance(obj, dict) and "runner" in obj else run_command
    )


def _error(exc: SidecarError | OSError) -> SidecarError:
    if isinstance(exc, SidecarError):
        return exc
    return SidecarError(f"{exc.filename or 'file'}: {exc.strerror or exc}")


def _logs(svc: Service) -> str:
    if svc.log_file is not None:
        return str(svc.log_file)
    return f"journalctl --user -u {shlex.quote(svc.name)}"


def _report(svc: Service, steps: Sequence[Step], dry_run: bool) -> dict[str, Any]:
    from sidecar.daemon.service import Write, step_text

    return {"platform": svc.platform, "vault": str(svc.vault), "name": svc.name,
            "file": str(svc.path), "dry_run": dry_run, "steps": [step_text(s) for s in steps],
            "warnings": list(svc.warnings) if any(isinstance(s, Write) for s in steps) else [],
            "logs": _logs(svc)}  # fmt: skip


def _fmt_plan(r: dict[str, Any]) -> str:
    lines = [f"# dry run, nothing was changed: the steps for {r['name']}"]
    for step in r["steps"]:
        lines.append(step)
        if step.startswith("write ") and "text" in r:
            lines += [f"# ---- {r['file']} ----", r["text"].rstrip("\n"), "# ----"]
    return "\n".join(lines + [f"# warning: {w}" for w in r["warnings"]])


def _fmt_done(what: str) -> output.Formatter:
    def fmt(r: dict[str, Any]) -> str:
        lines = [f"{r['name']}: {what}", f"file: {r['file']}", f"logs: {r['logs']}"]
        return "\n".join(lines + [f"warning: {w}" for w in r["warnings"]])

    return fmt


def _fmt_status(r: dict[str, Any]) -> str:
    pid = f", pid {r['pid']}" if r["pid"] else ""
    enabled = "enabled" if r["enabled"] else "not enabled"
    return "\n".join([f"{r['name']}: {r['state']}, {enabled}{pid}",
                      f"file: {r['file']} ({'present' if r['installed'] else 'absent'})",
                      f"logs: {r['logs']}"])  # fmt: skip
