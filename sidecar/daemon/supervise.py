"""Supervision of the daemon's long-lived work, and the truth about it in ``index.status``.

Every long-lived task (the writer, the embedding loop, the flush loop, the start-up reconcile)
is started by ``Supervisor.spawn``: a task that fails is logged in one line (the traceback at
debug level), restarted with backoff, and named in ``degraded`` until the same work succeeds
again (``ok``). Scheduled jobs (the watcher's health check, compaction, memory housekeeping,
lint) run through ``guard``, which does the same per run. Before this, a full disk ended the
embedding task unlogged, ``index.status`` said ready, and writes waited forever.

``stop`` cancels whatever is still running after its deadline; ``exit_deadline`` is the last
resort for a worker thread stuck in a library call (asyncio cannot cancel a thread, and the
interpreter waits for them at exit): the process exits anyway, which loses nothing acknowledged,
as the kill -9 tests show, and with status 0, since the stop was asked for.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from sidecar.errors import SidecarError
from sidecar.store.faults import one_line

_log = logging.getLogger("sidecar.daemon")
BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0)


@dataclass
class Fault:
    error: str
    since: str
    count: int = 1

    def to_dict(self, name: str) -> dict[str, Any]:
        return {"part": name, "error": self.error, "since": self.since, "failures": self.count}


class Supervisor:
    def __init__(self, backoff: Sequence[float] = BACKOFF,
                 on_change: Callable[[list[dict[str, Any]]], None] | None = None) -> None:  # fmt: skip
        """``on_change`` receives ``degraded`` whenever it changes."""
        self.backoff = tuple(backoff)
        self.on_change = on_change
        self.faults: dict[str, Fault] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._stopping = False

    # -- what status shows ------------------------------------------------------------------

    def fail(self, name: str, error: BaseException | str) -> None:
        """Record that ``name`` failed; logged once per new reason, not at every retry."""
        text = error if isinstance(error, str) else _one_line(error)
        fault = self.faults.get(name)
        if fault is not None and fault.error == text:
            fault.count += 1
            return
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        self.faults[name] = Fault(text, now, fault.count + 1 if fault else 1)
        _log.error("%s failed: %s", name, text)
        self._changed()
        if isinstance(error, BaseException):
            _log.debug("%s failed", name, exc_info=error)

    def ok(self, name: str) -> None:
        """``name`` worked again: no longer degraded."""
        if self.faults.pop(name, None) is not None:
            _log.info("%s works again", name)
            self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.degraded)

    @property
    def degraded(self) -> list[dict[str, Any]]:
        return [f.to_dict(n) for n, f in sorted(self.faults.items())]

    # -- tasks ------------------------------------------------------------------------------

    def spawn(self, name: str, work: Callable[[], Coroutine[Any, Any, None]]) -> asyncio.Task[None]:
        """Run ``work()`` until it returns; each failure is recorded and ``work`` is called
        again after a backoff, so a new coroutine runs each time."""
        task = asyncio.get_running_loop().create_task(self._keep(name, work), name=name)
        self._tasks[name] = task
        return task

    async def _keep(self, name: str, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        attempt = 0
        while not self._stopping:
            try:
                await work()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._stopping:
                    return
                delay = self.backoff[min(attempt, len(self.backoff) - 1)]
                self.fail(name, exc)
                _log.warning("restarting %s in %.0f s", name, delay)
                attempt += 1
                await asyncio.sleep(delay)

    def guard(self, name: str, job: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
        """A scheduled job whose failure is recorded (and whose success clears it)."""

        async def run() -> None:
            try:
                await job()
            except Exception as exc:
                self.fail(name, exc)
            else:
                self.ok(name)

        return run

    async def stop(self, timeout: float, keep: Sequence[str] = ()) -> None:
        """Let the tasks (but those named in ``keep``) end by themselves for ``timeout``
        seconds, then cancel them. No task is restarted from now on."""
        self._stopping = True
        tasks = [t for n, t in self._tasks.items() if not t.done() and n not in keep]
        if not tasks:
            return
        _done, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            _log.warning("%s did not stop within %.0f s; cancelled", task.get_name(), timeout)
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def exit_deadline(seconds: float, what: Callable[[], str]) -> threading.Timer:
    """Exit the process after ``seconds`` unless it ended by itself (``cancel`` the timer
    once it has). ``what`` names what was still running, for the log."""

    def fire() -> None:
        _log.warning("stop took over %.0f s (%s); exiting now, what was running resumes at "
                     "the next start", seconds, what())  # fmt: skip
        logging.shutdown()
        os._exit(0)  # a stop that was asked for, as kill -9 would be: nothing acknowledged lost

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    return timer


def _one_line(exc: BaseException) -> str:
    text = one_line(exc.message if isinstance(exc, SidecarError) else str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
