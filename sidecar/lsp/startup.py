"""Each vault's daemon, brought up for the editor: used as it is when its socket answers, else
started (``sidecar serve``, detached, so it outlives the editor) unless autostart is off.

The start runs in a thread of its own, so the editor's requests keep their answers (empty until
the daemon serves). The editor sees work-done progress (``$/progress``) while the daemon starts
or builds its first index, and one ``window/showMessage`` per vault when there is no daemon and
none could be started, naming the command to run. When the daemon is ready, the open notes of
that vault get their diagnostics.
"""

from __future__ import annotations

import logging
import os
import shlex
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sidecar.errors import DaemonUnreachable, SidecarError
from sidecar.lsp.types import MESSAGE_ERROR, MESSAGE_WARNING, compact
from sidecar.lsp.vault import Vault

if TYPE_CHECKING:
    from sidecar.lsp.server import SidecarServer

log = logging.getLogger(__name__)
READY_WAIT_S = 600
Reporter = Callable[
    [str], None
]  # a daemon that serves already but indexes still (a big vault, cold)


class Startup:
    def __init__(self, ls: SidecarServer, autostart: bool = True) -> None:
        self.ls = ls
        self.autostart = autostart
        self._seen: set[str] = set()  # vaults already checked (or being started)

    def ensure(self, vault: Vault) -> None:
        """Check the vault's daemon once, in the background."""
        if vault.root.real in self._seen:
            return
        self._seen.add(vault.root.real)
        threading.Thread(target=self._bring_up, args=(vault,), name="lsp-startup",
                         daemon=True).start()  # fmt: skip

    def forget(self, vault: Vault) -> None:
        self._seen.discard(vault.root.real)

    def _bring_up(self, vault: Vault) -> None:
        state = vault.probe()
        if state == "ready":
            return
        if state == "down" and (not self.autostart or vault.start is None):
            self._tell(vault, "no daemon serves it", MESSAGE_WARNING)
            return
        title = "Starting the sidecar daemon" if state == "down" else "Indexing the vault"
        token = self._begin(vault, title)
        try:
            if state == "down":
                assert vault.start is not None
                vault.start(self._reporter(token))
            else:
                _wait_ready(vault)
        except (DaemonUnreachable, SidecarError) as exc:
            self._tell(vault, f"starting its daemon failed: {exc}", MESSAGE_ERROR)
            return
        finally:
            self._end(token)
        self.ls.conn.submit(lambda: self._serving(vault))

    def _serving(self, vault: Vault) -> None:
        vault.close()  # connect afresh to the daemon now serving
        for uri in self.ls.open_uris():
            found = self.ls.doc(uri)
            if found is not None and found[0].vault is vault:
                self.ls.schedule_check(uri, 0)

    def _tell(self, vault: Vault, what: str, kind: int) -> None:
        command = f"sidecar serve --vault {shlex.quote(vault.root.named)}"
        text = f"Vault Sidecar: {vault.root.named}: {what}. Start it with: {command}"
        log.warning("%s", text)
        self.ls.conn.notify("window/showMessage", {"type": kind, "message": text})

    def _begin(self, vault: Vault, title: str) -> str | None:
        window = self.ls.capabilities.get("window")
        if not isinstance(window, dict) or not window.get("workDoneProgress"):
            return None
        token = f"sidecar-{os.urandom(4).hex()}"
        try:
            self.ls.conn.request("window/workDoneProgress/create", {"token": token})
        except SidecarError as exc:  # a client may refuse; the start goes on without a bar
            log.warning("no progress bar: %s", exc)
            return None
        self._progress(token, {"kind": "begin", "title": title, "message": vault.root.named,
                               "cancellable": False})  # fmt: skip
        return token

    def _reporter(self, token: str | None) -> Reporter:
        def report(message: str) -> None:
            if token is not None:
                self._progress(token, {"kind": "report", "message": message})

        return report

    def _end(self, token: str | None) -> None:
        if token is not None:
            self._progress(token, compact(kind="end", message="ready"))

    def _progress(self, token: str, value: dict[str, object]) -> None:
        self.ls.conn.notify("$/progress", {"token": token, "value": value})


def _wait_ready(vault: Vault) -> None:
    deadline = time.monotonic() + READY_WAIT_S
    while vault.probe() != "ready":
        if time.monotonic() > deadline:
            raise DaemonUnreachable(f"the daemon did not finish indexing in {READY_WAIT_S} s")
        time.sleep(0.2)
