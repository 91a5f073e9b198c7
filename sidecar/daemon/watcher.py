"""watchdog events -> vault-relative note paths, handed to the event loop.

Measured (DESIGN §9): an atomic save arrives only as ``moved`` onto the note, a folder renamed
inside the vault as one move per child, a folder moved out as one ``dir deleted``. So every
file event contributes both its paths, and any folder event asks for a rescan, which the
indexer's planner turns into exact adds, deletes and renames.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

_log = logging.getLogger(__name__)

# What a change to a note looks like. Opens and reads are left out of the inotify mask: the
# daemon's own reads (a cold index reads every note, `mentions` scans the vault) made two events
# a file, and 100k notes overflowed the kernel's queue, which watchdog answers with a rescan.
EVENTS = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileDeletedEvent, FileClosedEvent,
          DirCreatedEvent, DirMovedEvent, DirDeletedEvent]  # fmt: skip


class _Handler(FileSystemEventHandler):
    def __init__(self, root: Path, on_path: Callable[[str], None], on_dir: Callable[[], None]):
        self.root = root
        self.on_path = on_path
        self.on_dir = on_dir

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.is_directory:
            if event.event_type in ("moved", "deleted", "created"):
                self.on_dir()
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if not raw:
                continue
            path = raw.decode() if isinstance(raw, bytes) else str(raw)
            try:
                rel = Path(path).relative_to(self.root).as_posix()
            except ValueError:
                continue  # moved out of the vault: the source path above covers it
            self.on_path(rel)


class VaultWatcher:
    """A recursive observer on the vault; callbacks run on watchdog's thread."""

    def __init__(self, root: Path, on_path: Callable[[str], None], on_dir: Callable[[], None]):
        self.root = root
        self._handler = _Handler(root, on_path, on_dir)
        self._observer: Observer | None = None  # type: ignore[valid-type]

    def start(self) -> None:
        observer = Observer()
        observer.daemon = True
        observer.schedule(self._handler, str(self.root), recursive=True, event_filter=EVENTS)
        observer.start()
        self._observer = observer

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None

    @property
    def alive(self) -> bool:
        return self._observer is not None and self._observer.is_alive()
