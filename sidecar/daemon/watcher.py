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
# a file, and 100k notes overflowed the kernel's queue.
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


class _Overflow(logging.Handler):
    """watchdog 7.1 answers IN_Q_OVERFLOW by rebuilding its watches and logging a warning, and
    tells no handler: the lost events would stay lost. Its warning is the only signal, so it
    asks for a reconcile scan, as Watchman recrawls (issue 24, major 7)."""

    def __init__(self, on_overflow: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self.on_overflow = on_overflow

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("Inotify queue overflowed"):
            _log.warning("inotify queue overflowed: reconciling the index with the disk")
            self.on_overflow()


_WATCHDOG_LOG = logging.getLogger("watchdog.observers")


class VaultWatcher:
    """A recursive observer on the vault; callbacks run on watchdog's thread."""

    def __init__(self, root: Path, on_path: Callable[[str], None], on_dir: Callable[[], None]):
        self.root = root
        self._handler = _Handler(root, on_path, on_dir)
        self._overflow = _Overflow(on_dir)  # another watcher's overflow: one spare scan
        self._observer: Observer | None = None  # type: ignore[valid-type]

    def start(self) -> None:
        _WATCHDOG_LOG.addHandler(self._overflow)
        if not _WATCHDOG_LOG.isEnabledFor(logging.WARNING):
            _WATCHDOG_LOG.setLevel(logging.WARNING)
        observer = Observer()
        observer.daemon = True
        observer.schedule(self._handler, str(self.root), recursive=True, event_filter=EVENTS)
        observer.start()
        self._observer = observer

    def stop(self) -> None:
        _WATCHDOG_LOG.removeHandler(self._overflow)
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None

    @property
    def alive(self) -> bool:
        return self._observer is not None and self._observer.is_alive()
