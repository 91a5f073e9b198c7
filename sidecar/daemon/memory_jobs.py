"""The daemon's memory housekeeping: announce due reminders (``reminder.due``) when they come
due, and every few seconds pick up entry files edited in the editor, archive expired entries and
compact the table when idle.

Every check runs read-only first and touches the writer only when there is something to write,
so an idle daemon never queues a job (the writer's idle time is what compaction waits for). The
memory folder is rescanned by stat every few seconds rather than watched: it is hidden by default
(``.sidecar/memory``), and a few hundred stats cost about a millisecond.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sidecar.core.memory import is_expired
from sidecar.daemon.alarm import Alarm
from sidecar.daemon.writer import Health, Writer
from sidecar.services.context import Services
from sidecar.services.reminders import mark_announced, next_announcement, pending_announcements

_log = logging.getLogger("sidecar.daemon.memory")
Notify = Callable[[str, dict[str, Any]], Awaitable[None]]
RESCAN_SECONDS = 5  # the interval of ``tick``


class MemoryJobs:
    def __init__(self, services: Services, writer: Writer, notify: Notify,
                 health: Health | None = None, compact_idle: float = 60.0) -> None:  # fmt: skip
        self.services = services
        self.health = health
        self.writer = writer
        self.notify = notify
        self.compact_idle = compact_idle
        self._writes = 0
        self._task: asyncio.Task[None] | None = None
        self._alarm = Alarm(self._due)
        services.memory.index.persist_on_read = False  # from now on only the writer writes

    async def tick(self) -> None:
        """Every ``RESCAN_SECONDS``: a whole pass."""
        self._start(rescan=True)

    async def _due(self) -> None:
        self._start(rescan=False)

    def arm(self) -> None:
        """Wake up when the next reminder comes due; call after anything that may have written
        one (a reminder's time is known, so nothing polls for it)."""
        due = next_announcement(self.services.memory)
        if due is not None:
            wait = (due - self.services.memory.clock()).total_seconds()
            self._alarm.at(asyncio.get_running_loop().time() + max(0.0, wait))

    def stop(self) -> None:
        self._alarm.cancel()

    def _start(self, rescan: bool) -> None:
        """Start one pass and return at once (the scheduler warns about ticks that overlap);
        while a pass still waits for a busy writer, further ticks do nothing: two passes at
        once could announce a reminder twice."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._pass(rescan), name="sidecar-memory"
            )

    async def _pass(self, rescan: bool) -> None:
        try:
            await self._announce()
            if rescan:
                await self._rescan()
                await self._compact()
            self.arm()
        except Exception as exc:  # the daemon keeps serving; the next tick retries
            if self.health is None:
                _log.exception("memory housekeeping failed")
            else:
                self.health.fail("memory", exc)
        else:
            if self.health is not None:
                self.health.ok("memory")

    async def _announce(self) -> None:
        memory = self.services.memory
        due = pending_announcements(memory)
        if not due:
            return
        payloads = await self.writer.submit(lambda: mark_announced(memory, due))
        self._writes += 1
        for payload in payloads:
            _log.info("reminder due: %s", payload["id"])
            await self.notify("reminder.due", payload)

    async def _rescan(self) -> None:
        memory = self.services.memory
        index = memory.index
        now = memory.clock()
        stale = await asyncio.to_thread(index.stale)
        if not stale and not any(is_expired(r.entry, now) for r in index.snapshot()):
            return

        def job() -> list[str]:
            return [*index.sync(), *memory.expire()]

        changed = await self.writer.submit(job)
        self._writes += 1
        if changed:
            _log.info("memory: %d entries changed on disk or expired", len(changed))

    async def _compact(self) -> None:
        idle = time.monotonic() - self.writer.last_write
        if self._writes and idle >= self.compact_idle and not self.writer.busy:
            self._writes = 0
            await self.writer.submit(self.services.memory.index.table.optimize,
                                     counts_as_write=False)  # fmt: skip
