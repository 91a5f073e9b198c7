"""watchdog events -> vault-relative note paths, handed to the event loop.

Measured (DESIGN §9): an atomic save arrives only as ``moved`` onto the note, a folder renamed
inside the vault as one move per child, a folder moved out as one ``dir deleted``. So every
file event contributes both its paths, and any folder event asks for a rescan, which the
indexer's planner turns into exact adds, deletes and renames.

Each path comes with what the event says of its writer (``debounce.Kind``): a close after
writing or a rename onto the path means it is done; anything else may be followed by more.
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

from sidecar.daemon.debounce import CHANGED, DONE, Kind

_log = logging.getLogger(__name__)

# What a change to a note looks like. Opens and reads are left out of the inotify mask: the
# daemon's own reads (a cold index reads every note, `mentions` scans the vault) made two events
# a file, and 100k notes overflowed the kernel's queue.
EVENTS = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileDeletedEvent, FileClosedEvent,
          DirCreatedEvent, DirMovedEvent, DirDeletedEvent]  # fmt: skip


OnPath = Callable[[str, Kind], None]


class _Handler(FileSystemEventHandler):
    def __init__(self, root: Path, on_path: OnPath, on_dir: Callable[[], None]):
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
        src, dest = self._rel(event.src_path), self._rel(getattr(event, "dest_path", ""))
        if event.event_type == "moved":
            if dest is not None:
                self.on_path(dest, DONE)
            if src is not None:
                # A note renamed to a note is done too (both paths in one batch: a rename); vim
                # renaming the note to its backup is not: the new note is being written.
                same = dest is not None and Path(src).suffix == Path(dest).suffix
                self.on_path(src, DONE if same else CHANGED)
        elif src is not None:
            self.on_path(src, DONE if event.event_type == "closed" else CHANGED)

    def _rel(self, raw: bytes | str) -> str | None:
        if not raw:
            return None
        path = raw.decode() if isinstance(raw, bytes) else str(raw)
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None  # moved out of the vault: the source path covers it


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

    def __init__(self, root: Path, on_path: OnPath, on_dir: Callable[[], None]):
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

    @staticmethod
    def reports_closes() -> bool:
        """Whether this platform's observer says when a writer closes a file (inotify does;
        FSEvents, kqueue, Windows and polling do not)."""
        name: str = getattr(Observer, "__name__", "")  # watchdog picks the platform's class
        return name == "InotifyObserver"

    @property
    def alive(self) -> bool:
        return self._observer is not None and self._observer.is_alive()
