"""How a command reaches the methods: the daemon's socket when one serves the vault, else the
index in-process (or a daemon started for the purpose, when ``daemon.autostart`` says so).

The socket side imports only the socket client and the codec: a command answered by the
daemon must start in milliseconds, so the store, the model and the services are imported (by
``inprocess``) only when the command runs without a daemon.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidecar.config import Settings
from sidecar.errors import DaemonUnreachable
from sidecar.transports.client import Client

if TYPE_CHECKING:
    from sidecar.transports.unix_client import RpcClient

Notice = Callable[[str], None]
AUTOSTART_SECONDS = 600  # a first index of a big vault; the daemon's progress is in its log


class SocketClient:
    """The daemon serves this vault: every call goes over its socket, nothing opens the store."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._client: RpcClient | None = None

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        if self._client is None:
            from sidecar.transports.unix_client import RpcClient

            self._client = RpcClient(self.path, timeout=None)
        return self._client.call(method, params)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def stderr_line(message: str) -> None:
    sys.stderr.write(f"sidecar: {message}\n")
    sys.stderr.flush()


def connect(
    settings: Settings, *, require_daemon: bool = False, autostart: bool | None = None,
    notice: Notice | None = stderr_line,
) -> Client:  # fmt: skip
    """The socket when a daemon answers there; else, with ``autostart`` (default: the
    ``daemon.autostart`` setting), a daemon started now; else in-process, said in one line to
    ``notice``; or ``DaemonUnreachable`` when ``require_daemon``."""
    from sidecar.transports.unix_path import find_daemon

    path = find_daemon(settings, os.environ)
    if path is not None:
        return SocketClient(path)
    if require_daemon:
        raise DaemonUnreachable(f"no sidecar daemon is serving {settings.vault}")
    if settings["daemon.autostart"] if autostart is None else autostart:
        from sidecar.transports.autostart import start_daemon

        # waits for the first index pass: a fresh daemon's empty index would answer wrongly
        socket = start_daemon(settings, os.environ, timeout=AUTOSTART_SECONDS, wait_ready=True,
                              progress=notice)  # fmt: skip
        return SocketClient(socket)
    if notice is not None:
        notice("no daemon serves this vault; running in-process (`sidecar serve` starts one)")
    from sidecar.cli.inprocess import InProcessClient

    return InProcessClient(settings)
