"""Per-path debounce: a path is handed on once it has been quiet for ``delay`` seconds.

Editors save in bursts (write, rename, chmod; Obsidian saves while you type), so reacting to
each event would parse the same note many times. Whether a path was deleted is decided when it
is handed on, by looking at the disk then, not from the event type.
"""

from __future__ import annotations

from collections.abc import Callable


class Debouncer:
    def __init__(self, delay: float, clock: Callable[[], float]) -> None:
        self.delay = delay
        self.clock = clock
        self._last: dict[str, float] = {}
        self.rescan = False

    def add(self, path: str) -> None:
        self._last[path] = self.clock()

    def request_rescan(self) -> None:
        """A folder event: let the next batch reconcile the whole vault with the disk."""
        self.rescan = True
        self._last.setdefault("", self.clock())

    def next_due(self) -> float | None:
        """Seconds until the earliest path is due (0 if one is), None when nothing waits."""
        if not self._last:
            return None
        return max(0.0, min(self._last.values()) + self.delay - self.clock())

    def take_due(self) -> tuple[list[str], bool]:
        """Paths quiet for at least ``delay``, and whether a full rescan was asked for."""
        now = self.clock()
        due = sorted(p for p, t in self._last.items() if now - t >= self.delay)
        for p in due:
            del self._last[p]
        rescan = self.rescan and "" in due
        if rescan:
            self.rescan = False
        return [p for p in due if p], rescan
