"""Each vault's daemon, brought up for the editor: used as it is when its socket answers, else
started (``sidecar serve``, detached, so it outlives the editor) unless autostart is off.

The start runs in a worker thread, so the editor's requests keep their answers (empty until the
daemon serves). The editor sees work-done progress (``$/progress``) while the daemon starts or
builds its first index, and one ``window/showMessage`` per vault when there is no daemon and
none could be started, naming the command to run. When the daemon is ready, the open notes of
that vault get their diagnostics.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types as t

from sidecar.errors import DaemonUnreachable, SidecarError
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
        self._tasks: set[asyncio.Future[None]] = set()

    def ensure(self, vault: Vault) -> None:
        """Check the vault's daemon once, in the background."""
        if vault.root.real in self._seen:
            return
        self._seen.add(vault.root.real)
        task = asyncio.ensure_future(self._bring_up(vault))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def forget(self, vault: Vault) -> None:
        self._seen.discard(vault.root.real)

    async def _bring_up(self, vault: Vault) -> None:
        loop = asyncio.get_running_loop()
        state = await loop.run_in_executor(None, vault.probe)
        if state == "ready":
            return
        if state == "down" and (not self.autostart or vault.start is None):
            self._tell(vault, "no daemon serves it", t.MessageType.Warning)
            return
        title = "Starting the sidecar daemon" if state == "down" else "Indexing the vault"
        token = await self._begin(vault, title)
        try:
            if state == "down":
                assert vault.start is not None
                await loop.run_in_executor(None, vault.start, self._reporter(loop, token))
            else:
                await loop.run_in_executor(None, _wait_ready, vault)
        except (DaemonUnreachable, SidecarError) as exc:
            self._tell(vault, f"starting its daemon failed: {exc}", t.MessageType.Error)
            return
        finally:
            self._end(token)
        vault.close()  # connect afresh to the daemon now serving
        for uri in self.ls.open_uris():
            found = self.ls.doc(uri)
            if found is not None and found[0].vault is vault:
                self.ls.schedule_check(uri, 0)

    def _tell(self, vault: Vault, what: str, kind: t.MessageType) -> None:
        command = f"sidecar serve --vault {shlex.quote(vault.root.named)}"
        text = f"Vault Sidecar: {vault.root.named}: {what}. Start it with: {command}"
        log.warning("%s", text)
        self.ls.window_show_message(t.ShowMessageParams(kind, text))

    async def _begin(self, vault: Vault, title: str) -> str | None:
        caps = self.ls.client_capabilities.window
        if caps is None or not caps.work_done_progress:
            return None
        token = f"sidecar-{uuid.uuid4().hex[:8]}"
        try:
            await self.ls.work_done_progress.create_async(token)
        except Exception as exc:  # a client may refuse; the start goes on without a bar
            log.warning("no progress bar: %s", exc)
            return None
        self.ls.work_done_progress.begin(token, t.WorkDoneProgressBegin(
            title, message=vault.root.named, cancellable=False))  # fmt: skip
        return token

    def _reporter(self, loop: asyncio.AbstractEventLoop, token: str | None) -> Reporter:
        def report(message: str) -> None:
            if token is not None:
                loop.call_soon_threadsafe(
                    self.ls.work_done_progress.report, token,
                    t.WorkDoneProgressReport(message=message),
                )  # fmt: skip

        return report

    def _end(self, token: str | None) -> None:
        if token is not None:
            self.ls.work_done_progress.end(token, t.WorkDoneProgressEnd(message="ready"))


def _wait_ready(vault: Vault) -> None:
    deadline = time.monotonic() + READY_WAIT_S
    while vault.probe() != "ready":
        if time.monotonic() > deadline:
            raise DaemonUnreachable(f"the daemon did not finish indexing in {READY_WAIT_S} s")
        time.sleep(0.2)
