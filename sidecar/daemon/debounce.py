"""When a changed path is handed on to be re-indexed.

The kernel says when a writer is done with a note: a close after writing (an in-place save) or
a rename onto it (an atomic save, vim's backup-and-rename). Such a path waits only ``settle``
seconds, for an editor that writes twice (``bench/save_gaps.py`` measures the gap between
its writes). Any other event (a write not closed yet, a create, a delete, a rename away)
waits until the path has been quiet for ``delay``: the fixed debounce, kept for a path still
being written and for observers that report no closes (FSEvents, polling; ``closes=False``),
where every event waits ``delay`` as before.

A burst (a git checkout, a sync tool writing a folder) would otherwise be many small
re-indexes: while more than ``BURST`` paths wait, none is due until no event has come for
``delay`` (or the oldest has waited ``BURST_CAP`` delays), and then all go as one batch.

Whether a path was deleted is decided when it is handed on, by looking at the disk then, not
from the event type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

Kind = Literal["done", "changed"]
DONE: Kind = "done"  # the writer is done with the path: closed after writing, or renamed onto
CHANGED: Kind = "changed"  # anything else: wait for quiet

BURST = 8  # more paths waiting at once than one save touches (vim: the note; a rename: two)
BURST_CAP = 10  # a sync tool that never pauses is still indexed every ten delays


class Debouncer:
    def __init__(
        self, delay: float, clock: Callable[[], float], settle: float = 0.02, closes: bool = True
    ) -> None:
        self.delay = delay
        self.settle = settle
        self.closes = closes
        self.clock = clock
        self._due: dict[str, float] = {}
        self._since: dict[str, float] = {}  # first event of each waiting path (the burst cap)
        self._latest = 0.0
        self.rescan = False

    def add(self, path: str, kind: Kind = CHANGED) -> None:
        """An event on ``path``; the latest one decides how long it waits."""
        now = self.clock()
        self._due[path] = now + (self.settle if kind == DONE and self.closes else self.delay)
        self._since.setdefault(path, now)
        self._latest = now

    def request_rescan(self) -> None:
        """A folder event: let the next batch reconcile the whole vault with the disk."""
        self.rescan = True
        if "" not in self._due:
            self.add("")

    @property
    def waiting(self) -> int:
        """Paths (or a rescan) waiting to be reindexed."""
        return len(self._due)

    @property
    def bursting(self) -> bool:
        return len(self._due) > BURST

    def _when(self) -> float:
        if self.bursting:
            return min(
                self._latest + self.delay, min(self._since.values()) + BURST_CAP * self.delay
            )
        return min(self._due.values())

    def next_due(self) -> float | None:
        """Seconds until the earliest path is due (0 if one is), None when nothing waits."""
        if not self._due:
            return None
        return max(0.0, self._when() - self.clock())

    def take_due(self) -> tuple[list[str], bool]:
        """The paths due now (in a burst, all of them once it is due), and whether a full
        rescan was asked for."""
        if not self._due:
            return [], False
        now = self.clock()
        if self.bursting:
            due = sorted(self._due) if now >= self._when() else []
        else:
            due = sorted(p for p, t in self._due.items() if t <= now)
        for p in due:
            del self._due[p]
            del self._since[p]
        rescan = self.rescan and "" in due
        if rescan:
            self.rescan = False
        return [p for p in due if p], rescan
