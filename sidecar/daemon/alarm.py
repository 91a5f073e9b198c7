"""A one-shot wake-up for a job that has something to do at a known time.

An idle daemon should sleep until the next thing it has to do: a reminder's due time, the end of
a quiet spell after saves. Polling for those every second cost a wake-up a second for ever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class Alarm:
    """Runs ``job`` once at the earliest time it was armed for (loop time, i.e. monotonic).

    Arming for a later time than the one pending changes nothing; the job re-arms itself when it
    finds it is too early. An alarm that goes off while the job still runs runs it again after."""

    def __init__(self, job: Callable[[], Awaitable[None]]) -> None:
        self._job = job
        self._handle: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._again = False

    def at(self, when: float) -> None:
        if self._handle is not None and self._handle.when() <= when:
            return
        if self._handle is not None:
            self._handle.cancel()
        self._handle = asyncio.get_running_loop().call_at(when, self._fire)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.get_running_loop().create_task(self._run(), name="sidecar-alarm")

    async def _run(self) -> None:
        while True:
            self._again = False
            await self._job()
            if not self._again:
                return
