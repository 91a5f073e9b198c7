"""The memory folder on disk: one ``<id>.md`` per entry, ``archive/`` for archived ones and
``.history/<id>/`` for the last revisions.

The folder usually lies inside the vault, which a clone or a sync can fill with symlinks, so
every read, write and unlink goes through ``Beneath`` (``store/files.py``): a symlink anywhere
in the folder is refused, never followed. Every write is atomic, so a crash leaves the old file
or the new one and an acknowledged entry is on disk. Archiving writes the archived copy first
and removes the active one second: a crash in between leaves two copies, and the reader keeps
the one updated last, so nothing is lost either way. Nothing here deletes an entry's last copy.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from sidecar.core.memory import valid_id
from sidecar.errors import StoreError
from sidecar.store.files import Beneath, UnsafePath, is_temp_name

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
    """``files`` is the folder; ``file_mode`` the mode of entry files (the vault's own)."""

    def __init__(self, files: Beneath, file_mode: int = 0o600) -> None:
        self.files = files
        self.root = files.root
        self.file_mode = file_mode
        self.problems: dict[str, str] = {}  # a folder the last scan refused -> why

    def rel(self, entry_id: str, archived: bool = False) -> str:
        name = f"{_checked(entry_id)}.md"
        return f"{ARCHIVE}/{name}" if archived else name

    def path(self, entry_id: str, archived: bool = False) -> Path:
        return self.files.path(self.rel(entry_id, archived))

    def exists(self) -> bool:
        return self.files.is_dir()

    def scan(self) -> list[EntryFile]:
        """Every entry file, active and archived (the same id may appear in both). A folder
        that is a symlink is left out and named in ``problems``."""
        out: list[EntryFile] = []
        self.problems = {}
        for folder, archived in (("", False), (ARCHIVE, True)):
            try:
                listed = self.files.files(folder)
            except UnsafePath as exc:
                self.problems[exc.path] = f"{exc}; memory entries are never read through one"
                continue
            except OSError as exc:
                raise StoreError(f"cannot list the memory folder {self.root}: {exc}") from exc
            for name, st in listed:
                if name.startswith(".") or not name.endswith(".md"):
                    continue
                path = self.files.path(f"{ARCHIVE}/{name}" if archived else name)
                out.append(EntryFile(name[:-3], path, archived,
                                     st.st_mtime_ns, st.st_size))  # fmt: skip
        return out

    def remove_stray_temps(self) -> int:
        """Remove the temp files a kill -9 mid-write left (only our own names). Called at open,
        under the writer lock, when no write of ours can be in flight."""
        folders = ["", ARCHIVE]
        try:
            folders += [f"{HISTORY}/{n}" for n, st in self.files.entries(HISTORY)
                        if stat.S_ISDIR(st.st_mode)]  # fmt: skip
            removed = 0
            for folder in folders:
                for name, _ in self.files.files(folder):
                    if is_temp_name(name):
                        removed += self.files.unlink(f"{folder}/{name}" if folder else name)
        except OSError:  # a symlinked folder or a missing vault: scan() says so
            return 0
        return removed

    def read(self, f: EntryFile) -> str | None:
        """The file's text, or None when it vanished (an editor's delete or rename)."""
        try:
            name = f.path.name  # from the scan: maybe not a valid id, which parse reports
            return self.files.read_text(f"{ARCHIVE}/{name}" if f.archived else name)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read memory entry {f.path}: {exc}") from exc

    def write(self, entry_id: str, text: str, archived: bool = False) -> EntryFile:
        """Write the entry where its status puts it, then remove a copy left in the other place.
        Both places are checked before anything is written, so a refusal writes nothing."""
        target, other = self.rel(entry_id, archived), self.rel(entry_id, not archived)
        try:
            self._writable(target)
            copy = self.files.stat(other)
            st = self.files.write(target, text.encode("utf-8"), self.file_mode)
            if copy is not None:
                self.files.unlink(other)
        except OSError as exc:
            raise StoreError(f"cannot write memory entry {self.files.path(target)}: "
                             f"{_why(exc, self.files)}") from exc  # fmt: skip
        return EntryFile(entry_id, self.path(entry_id, archived), archived, st.st_mtime_ns,
                         st.st_size)  # fmt: skip

    def remove(self, f: EntryFile) -> None:
        """Remove an entry file this process just wrote (a write taken back)."""
        try:
            self.files.unlink(self.rel(f.id, f.archived))
        except OSError as exc:
            raise StoreError(
                f"cannot remove memory entry {f.path}: {_why(exc, self.files)}"
            ) from exc

    def _writable(self, rel: str) -> None:
        """Refuse before writing: a missing vault or a symlink on the way."""
        if not self.files.anchor.is_dir() and not self.files.create_anchor:
            raise FileNotFoundError(os.strerror(2), str(self.files.anchor))
        self.files.stat(rel)  # walks the folders: a symlinked one raises UnsafePath

    # -- revisions ------------------------------------------------------------------------------

    def save_revision(self, entry_id: str, text: str, stamp: str) -> None:
        """Keep ``text`` as a revision named by ``stamp`` (sortable), then only the newest few."""
        folder = f"{HISTORY}/{_checked(entry_id)}"
        try:
            names = {name for name, _ in self.files.entries(folder)}
            target, n = f"{stamp}.md", 0
            while target in names:  # two revisions within one clock tick
                n += 1
                target = f"{stamp}_{n:03d}.md"  # sorts after the first
            self.files.write(f"{folder}/{target}", text.encode("utf-8"), self.file_mode)
            kept = sorted(name for name, st in self.files.files(folder) if name.endswith(".md"))
            for old in kept[:-KEEP_REVISIONS]:
                self.files.unlink(f"{folder}/{old}")
        except OSError as exc:
            raise StoreError(f"cannot keep a revision of {entry_id}: "
                             f"{_why(exc, self.files)}") from exc  # fmt: skip

    def revisions(self, entry_id: str) -> list[tuple[str, str]]:
        """``(stamp, text)`` of the kept revisions, newest first."""
        folder = f"{HISTORY}/{_checked(entry_id)}"
        out = []
        try:
            names = sorted((n for n, _ in self.files.files(folder) if n.endswith(".md")),
                           reverse=True)  # fmt: skip
            for name in names:
                try:
                    out.append((name[:-3], self.files.read_text(f"{folder}/{name}")))
                except FileNotFoundError:
                    continue
        except OSError as exc:
            raise StoreError(f"cannot read the revisions of {entry_id}: "
                             f"{_why(exc, self.files)}") from exc  # fmt: skip
        return out


def vault_modes(vault: Path) -> tuple[int, int]:
    """(file mode, folder mode) following the vault's own permissions: a private vault gets
    private entries, a group-readable one group-readable entries."""
    try:
        mode = stat.S_IMODE(os.stat(vault).st_mode)
    except OSError:
        return 0o600, 0o700
    return (mode & 0o666) | 0o600, mode | 0o700


def _why(exc: OSError, files: Beneath) -> str:
    if isinstance(exc, UnsafePath):
        return f"{exc} (remove it; memory entries are never written through one)"
    if isinstance(exc, FileNotFoundError) and not files.anchor.is_dir():
        return f"the vault folder is missing: {files.anchor}"
    return exc.strerror or str(exc)


def _checked(entry_id: str) -> str:
    """An id becomes a file name: the last guard, after the params' ``EntryId`` check, against
    an id that would step out of the memory folder."""
    if not valid_id(entry_id):
        raise StoreError(f"refusing a memory id that is not a plain file name: {entry_id!r}")
    return entry_id
