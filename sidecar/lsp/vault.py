"""The language server's view of one vault: the daemon (over its socket), the cached names, and
the text of notes (the editor's buffer when open, else the file).

The server never opens the index: every question about the graph goes to the daemon. Files are
only read, to place a reference on its line or show a preview.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from sidecar.errors import DaemonUnreachable
from sidecar.lsp.names import Names
from sidecar.lsp.uris import Root
from sidecar.transports.client import Client, Reconnecting

log = logging.getLogger(__name__)


class Vault:
    """One connection to the daemon, reopened once per call when it drops (a restart)."""

    def __init__(
        self,
        root: Root,
        connect: Callable[[], Client],
        start: Callable[[Callable[[str], None]], None] | None = None,
    ) -> None:
        self.root = root
        self._connect = connect
        self.start = start  # starts its daemon and waits until it serves (progress lines)
        self._conn = Reconnecting(connect)
        self._names = Names()

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self._conn.call(method, params)

    def probe(self) -> str:
        """``ready``, ``indexing`` (serving, first index pass not done) or ``down``; on a
        connection of its own, so a worker thread may ask while requests use the main one."""
        try:
            client = self._connect()
        except DaemonUnreachable:
            return "down"
        try:
            ready = client.call("index.status")["daemon"]["ready"]
        except DaemonUnreachable:
            return "down"
        finally:
            client.close()
        return "ready" if ready else "indexing"

    def close(self) -> None:
        self._conn.close()

    def names(self) -> Names:
        """The names, refreshed when the index changed (one small call when it did not)."""
        data = self.call("vault.catalog", {"since": self._names.version})
        if not data.get("unchanged"):
            self._names = Names.from_catalog(data)
        return self._names

    # -- paths --------------------------------------------------------------------------------

    def rel(self, fs_path: str) -> str | None:
        """The vault path of a file, or None outside the vault."""
        return self.root.rel(fs_path)

    def uri(self, rel: str) -> str:
        return self.root.uri(rel)

    def read(self, rel: str) -> str | None:
        try:
            with open(os.path.join(self.root.real, rel), encoding="utf-8") as f:
                return f.read()
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("cannot read %s: %s", rel, exc)
            return None
