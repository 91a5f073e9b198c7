"""The single writer: every change to the index runs here, one job at a time, in order.

Watcher batches, reconciles, ``index.reindex`` from a client, compaction: all are jobs on one
queue, run on a worker thread so the event loop keeps answering queries meanwhile. A job's
failure goes back to whoever submitted it; a resource failure (a full disk, no descriptors) also
marks the store degraded until a later write succeeds. The loop runs under the daemon's
supervisor: if it ever dies, the job it held is failed rather than left waiting, and a
restarted loop carries on with the queue.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from sidecar.errors import StoreError
from sidecar.store.faults import storage_error

T = TypeVar("T")
_Job = tuple[Callable[[], Any], asyncio.Future[Any], bool] | None
STORE = "store"  # the name status gives a storage fault


class Health(Protocol):
    def fail(self, name: str, error: BaseException | str) -> None: ...

    def ok(self, name: str) -> None: ...


class Writer:
    def __init__(self, health: Health | None = None) -> None:
        self._queue: asyncio.Queue[_Job] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._current: asyncio.Future[Any] | None = None
        self.health = health
        self.busy = False
        self.last_write = time.monotonic()
        self.writes_since_compact = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self.run(), name="sidecar-writer")

    def attach(self, task: asyncio.Task[None]) -> None:
        """The task running ``run`` (under a supervisor), for ``drain_and_stop``."""
        self._task = task

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    async def submit(self, fn: Callable[[], T], *, counts_as_write: bool = True) -> T:
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        await self._queue.put((fn, future, counts_as_write))
        result = await future
        if counts_as_write:
            self.writes_since_compact += 1
        return result

    async def run(self) -> None:
        """Run jobs until the stop marker."""
        if self._current is not None and not self._current.done():  # a previous loop died
            self._current.set_exception(StoreError("the index writer failed; try again"))
        while True:
            job = await self._queue.get()
            if job is None:
                return
            fn, future, writes = job
            if future.cancelled():
                continue  # its client went away before its turn: nobody waits for it
            self._current = future
            self.busy = True
            try:
                result = await asyncio.to_thread(fn)
            except asyncio.CancelledError:  # a stop that could not wait: the job may still end
                if not future.done():
                    future.set_exception(StoreError("the daemon stopped before this write ended"))
                raise
            except Exception as exc:  # delivered to the submitter, who reports it
                fault = storage_error(exc)
                if fault is not None and self.health is not None:
                    self.health.fail(STORE, fault.message)
                if not future.done():
                    future.set_exception(fault or exc)
            else:
                if writes and self.health is not None:
                    self.health.ok(STORE)
                if not future.done():
                    future.set_result(result)
            finally:
                self.busy = False
                self._current = None
                self.last_write = time.monotonic()

    async def drain_and_stop(self, timeout: float | None = None) -> bool:
        """Finish every queued job, then stop (SIGTERM must not lose an acknowledged write);
        after ``timeout`` seconds, fail what is still queued and stop. False if cut short."""
        task = self._task
        if task is None or task.done():
            self._fail_queued("the daemon is stopping")
            return True
        await self._queue.put(None)
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout)
            return True
        except TimeoutError:
            self._fail_queued("the daemon stopped before this write ran")
            task.cancel()
            return False
        finally:
            self._task = None

    def _fail_queued(self, why: str) -> None:
        while not self._queue.empty():
            job = self._queue.get_nowait()
            if job is not None and not job[1].done():
                job[1].set_exception(StoreError(why))
