"""Queries in flight, so that the writer can let the query that follows a save go first.

A client told of a save (``index.changed``) usually searches at once: an editor's pane
refreshes, an agent looks. The writer's turn still has work left then that nothing reads (the
note's row, the vector index's bookkeeping, ``meta.json``), and on two cores it slowed that
query down. So the writer waits, after the announcement, for a told client's query to start
and for the queries running to end, within a bound.
"""

from __future__ import annotations

import threading
import time


class Queries:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._running = 0
        self._started = 0

    def begin(self) -> None:
        with self._changed:
            self._running += 1
            self._started += 1
            self._changed.notify_all()

    def end(self) -> None:
        with self._changed:
            self._running -= 1
            self._changed.notify_all()

    @property
    def running(self) -> int:
        return self._running

    def go_first(self, grace: float, cap: float) -> None:
        """Wait up to ``grace`` seconds for a query to start (unless one runs already), then
        until none runs; ``cap`` seconds in all."""
        deadline = time.monotonic() + cap
        with self._changed:
            seen = self._started
            self._changed.wait_for(lambda: self._running or self._started != seen, grace)
            self._changed.wait_for(lambda: not self._running, max(0.0, deadline - time.monotonic()))
