"""``sidecar lsp``: the language server over stdio, talking to the daemon serving each vault."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sidecar.config import find_vault, load_settings
from sidecar.errors import DaemonUnreachable, SidecarError
from sidecar.transports.unix_path import find_daemon, socket_path_for

if TYPE_CHECKING:
    from sidecar.lsp.uris import Root
    from sidecar.lsp.vault import Vault
    from sidecar.transports.client import Client


@click.command()
@click.option("--vault", "vault", metavar="PATH", help="Serve this vault only (else the "
              "editor's workspace folders, else the vault around each document).")  # fmt: skip
@click.option("--stdio", is_flag=True, help="Accepted for editors that pass it; stdio is the "
              "only transport.")  # fmt: skip
@click.option("--no-autostart", is_flag=True, help="Never start a daemon (else `sidecar serve` "
              "is started, detached, for a vault no daemon serves; also initializationOptions "
              "{autostart: false}).")  # fmt: skip
def lsp(vault: str | None, stdio: bool, no_autostart: bool) -> None:
    """Serve the Language Server Protocol over stdio (links, backlinks, lint)."""
    from sidecar.lsp.features import build
    from sidecar.lsp.protocol import Connection
    from sidecar.lsp.vaults import Vaults
    from sidecar.transports.stdio import claim_stdout

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    conn = Connection(sys.stdin.buffer, claim_stdout())
    vaults = Vaults(open_vault, fallback(), pinned=vault)
    try:
        status = conn.run(build(vaults, conn, autostart=not no_autostart))
    except KeyboardInterrupt:
        status = 1
    finally:
        vaults.close()
    sys.exit(status)


def fallback() -> list[str]:
    """Where a document goes when the editor names no folder: SIDECAR_VAULT, else the vault
    around the working directory."""
    try:
        return [str(find_vault(None, os.environ, Path.cwd()))]
    except SidecarError:
        return []


def open_vault(root: Root) -> Vault:
    from sidecar.lsp.vault import Vault
    from sidecar.transports.autostart import start_daemon
    from sidecar.transports.unix_client import RpcClient

    try:
        settings = load_settings(Path(root.real), os.environ)
        socket_path_for(settings, os.environ)  # a vault whose socket cannot exist fails here
    except SidecarError as exc:  # an unreadable config: the features stay quiet, the log says why
        logging.getLogger(__name__).warning("%s: %s", root.named, exc)
        return Vault(root, _unreachable(str(exc)))

    def connect() -> Client:  # looked up at each connect: a daemon may have started since
        path = find_daemon(settings, os.environ) or socket_path_for(settings, os.environ)
        return RpcClient(path, timeout=10.0)

    def start(progress: Callable[[str], None]) -> None:
        start_daemon(settings, os.environ, timeout=600, wait_ready=True, progress=progress)

    return Vault(root, connect, start)


def _unreachable(why: str) -> Callable[[], Client]:
    def connect() -> Client:
        raise DaemonUnreachable(why)

    return connect
