"""The single writer: every change to the index runs here, one job at a time, in order.

Watcher batches, reconciles, ``index.reindex`` from a client, compaction: all are jobs on one
queue, run on a worker thread so the event loop keeps answering queries meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
_Job = tuple[Callable[[], Any], asyncio.Future[Any]] | None


class Writer:
    def __init__(self) -> None:
        self._queue: asyncio.Queue[_Job] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.busy = False
        self.last_write = time.monotonic()
        self.writes_since_compact = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="sidecar-writer")

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    async def submit(self, fn: Callable[[], T], *, counts_as_write: bool = True) -> T:
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        await self._queue.put((fn, future))
        result = await future
        if counts_as_write:
            self.writes_since_compact += 1
        return result

    async def _run(self) -> None:
        while True:
            job = await self._queue.get()
            if job is None:
                return
            fn, future = job
            self.busy = True
            try:
                result = await asyncio.to_thread(fn)
            except Exception as exc:  # delivered to the submitter, who reports it
                if not future.done():
                    future.set_exception(exc)
            else:
                if not future.done():
                    future.set_result(result)
            finally:
                self.busy = False
                self.last_write = time.monotonic()

    async def drain_and_stop(self) -> None:
        """Finish every queued job, then stop (SIGTERM must not lose an acknowledged write)."""
        if self._task is None:
            return
        await self._queue.put(None)
        await self._task
        self._task = None
