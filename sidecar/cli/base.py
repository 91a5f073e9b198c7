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
        client = connect(settings)
        try:
            result = client.call(method, params)
        finally:
            client.close()
    except SidecarError as exc:
        fail(exc, as_json)
    output.emit(result, as_json, formatter)


def fail(exc: SidecarError, as_json: bool) -> NoReturn:
    if as_json:
        click.echo(json.dumps({"error": exc.to_dict()}, ensure_ascii=False))
    click.echo(f"sidecar: {exc.message}", err=True)
    sys.exit(exc.exit_status)
