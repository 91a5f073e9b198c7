"""The memory folder on disk: one ``<id>.md`` per entry, ``archive/`` for archived ones and
``.history/<id>/`` for the last revisions.

Every write is atomic (temp file, fsync, rename, fsync the folder), so a crash leaves the old file
or the new one and an acknowledged entry is on disk. Archiving writes the archived copy first and
removes the active one second: a crash in between leaves two copies, and the reader keeps the one
updated last, so nothing is lost either way. Nothing here ever deletes an entry's last copy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sidecar.core.memory import valid_id
from sidecar.errors import StoreError
from sidecar.store.files import atomic_write

ARCHIVE = "archive"
HISTORY = ".history"
KEEP_REVISIONS = 3


@dataclass(frozen=True, slots=True)
class EntryFile:
    id: str
    path: Path
    archived: bool
    mtime_ns: int
    size: int


class MemoryFolder:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, entry_id: str, archived: bool = False) -> Path:
        return (self.root / ARCHIVE if archived else self.root) / f"{_checked(entry_id)}.md"

    def scan(self) -> list[EntryFile]:
        """Every entry file, active and archived (the same id may appear in both)."""
        out: list[EntryFile] = []
        for folder, archived in ((self.root, False), (self.root / ARCHIVE, True)):
            try:
                entries = list(os.scandir(folder))
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StoreError(f"cannot list the memory folder {folder}: {exc}") from exc
            for e in entries:
                if e.name.startswith(".") or not e.name.endswith(".md"):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue  # vanished between the listing and the stat; the next scan sees it
                if e.is_file(follow_symlinks=False):
                    out.append(EntryFile(e.name[:-3], Path(e.path), archived, st.st_mtime_ns,
                                         st.st_size))  # fmt: skip
        return out

    def read(self, path: Path) -> str | None:
        """The file's text, or None when it vanished (an editor's delete or rename)."""
        try:
            return path.read_bytes().decode("utf-8-sig", "replace")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read memory entry {path}: {exc}") from exc

    def write(self, entry_id: str, text: str, archived: bool = False) -> EntryFile:
        """Write the entry where its status puts it, then remove a copy left in the other place."""
        target = self.path(entry_id, archived)
        try:
            atomic_write(target, text.encode("utf-8"), mode=0o644)
            self.path(entry_id, not archived).unlink(missing_ok=True)
            st = target.stat()
        except OSError as exc:
            raise StoreError(f"cannot write memory entry {target}: {exc}") from exc
        return EntryFile(entry_id, target, archived, st.st_mtime_ns, st.st_size)

    # -- revisions ------------------------------------------------------------------------------

    def save_revision(self, entry_id: str, text: str, stamp: str) -> None:
        """Keep ``text`` as a revision named by ``stamp`` (sortable), then only the newest few."""
        folder = self.root / HISTORY / _checked(entry_id)
        target, n = folder / f"{stamp}.md", 0
        while target.exists():  # two revisions within one clock tick
            n += 1
            target = folder / f"{stamp}_{n:03d}.md"  # sorts after the first
        try:
            atomic_write(target, text.encode("utf-8"), mode=0o644)
            for old in sorted(folder.glob("*.md"))[:-KEEP_REVISIONS]:
                old.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot keep a revision of {entry_id}: {exc}") from exc

    def revisions(self, entry_id: str) -> list[tuple[str, str]]:
        """``(stamp, text)`` of the kept revisions, newest first."""
        folder = self.root / HISTORY / _checked(entry_id)
        out = []
        for path in sorted(folder.glob("*.md"), reverse=True):
            text = self.read(path)
            if text is not None:
                out.append((path.stem, text))
        return out


def _checked(entry_id: str) -> str:
    """An id becomes a file name: the last guard, after the params' ``EntryId`` check, against
    an id that would step out of the memory folder."""
    if not valid_id(entry_id):
        raise StoreError(f"refusing a memory id that is not a plain file name: {entry_id!r}")
    return entry_id
