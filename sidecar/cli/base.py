"""What every command shares: ``--vault``/``--json``, calling a method, failing cleanly."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from sidecar.cli import output
from sidecar.cli.client import connect
from sidecar.config import find_vault, load_settings
from sidecar.errors import SidecarError

F = Callable[..., Any]


def common(fn: F) -> F:
    """``--vault`` and ``--json`` on every command."""
    fn = click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")(fn)
    fn = click.option("--vault", "vault", metavar="PATH", help="The vault (else SIDECAR_VAULT, "
                      "else the nearest parent holding .obsidian/ or .sidecar/).")(fn)  # fmt: skip
    return fn


def run_method(
    vault: str | None, as_json: bool, method: str, params: dict[str, Any],
    formatter: output.Formatter | None = None,
) -> None:  # fmt: skip
    try:
        settings = load_settings(find_vault(vault, os.environ, Path.cwd()), os.environ)
        params = vault_relative(params, settings.vault, Path.cwd())
        client = connect(settings)
        try:
            result = client.call(method, params)
        finally:
            client.close()
    except SidecarError as exc:
        fail(exc, as_json)
    output.emit(result, as_json, formatter)


NOTE_PARAMS = ("note", "source", "target")


def vault_relative(params: dict[str, Any], vault: Path, cwd: Path) -> dict[str, Any]:
    """A NOTE argument may be a file path as the shell sees it (absolute, or relative to the
    current folder). Requests carry vault-relative paths only (the daemon refuses anything
    else and does not know our cwd), so the translation happens here; a path outside the vault
    is passed on unchanged for the daemon to refuse."""
    out = dict(params)
    for key in NOTE_PARAMS:
        value = out.get(key)
        if not isinstance(value, str) or not value:
            continue
        path = Path(value)
        if not (path.is_absolute() or (cwd / path).exists()):
            continue
        try:
            out[key] = (cwd / path).resolve().relative_to(vault.resolve()).as_posix()
        except (ValueError, OSError):
            continue
    return out


def fail(exc: SidecarError, as_json: bool) -> NoReturn:
    if as_json:
        click.echo(json.dumps({"error": exc.to_dict()}, ensure_ascii=False))
    click.echo(f"sidecar: {in_flags(exc)}", err=True)
    sys.exit(exc.exit_status)


def in_flags(exc: SidecarError) -> str:
    """The message with the parameters it tells to pass (``data.retry_with``, as the RPC
    spells them: ``on_duplicate=contradicts``) spelt as this command's flags."""
    message = exc.message
    retry = exc.data.get("retry_with")
    ctx = click.get_current_context(silent=True)
    if not isinstance(retry, dict) or ctx is None:
        return message
    flags = {p.name: p.opts[0] for p in ctx.command.params if isinstance(p, click.Option)}
    for name, value in retry.items():
        if name in flags:
            message = message.replace(f"{name}={value}", f"{flags[name]} {value}")
    return message
