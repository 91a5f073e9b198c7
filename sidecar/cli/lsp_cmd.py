"""``sidecar lsp``: the language server over stdio, talking to the daemon serving the vault."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import click

from sidecar.cli.base import fail
from sidecar.config import find_vault, load_settings
from sidecar.daemon.app import socket_path_for
from sidecar.errors import SidecarError


@click.command()
@click.option("--vault", "vault", metavar="PATH", help="The vault (else SIDECAR_VAULT, else the "
              "nearest parent holding .obsidian/ or .sidecar/).")  # fmt: skip
@click.option("--stdio", is_flag=True, help="Accepted for editors that pass it; stdio is the "
              "only transport.")  # fmt: skip
def lsp(vault: str | None, stdio: bool) -> None:
    """Serve the Language Server Protocol over stdio (links, backlinks, lint; needs the daemon)."""
    from sidecar.lsp.features import build
    from sidecar.lsp.vault import Vault
    from sidecar.transports.unix import RpcClient

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        settings = load_settings(find_vault(vault, os.environ, Path.cwd()), os.environ)
    except SidecarError as exc:
        fail(exc, False)
    socket = socket_path_for(settings)
    server = build(Vault(settings.vault, lambda: RpcClient(socket, timeout=10.0)))
    try:
        server.start_io()
    finally:
        server.vault.close()
