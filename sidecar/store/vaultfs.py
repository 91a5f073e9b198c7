"""Access to the vault's Markdown files: scan, ignore rules, safe reads, and the one write path
for the explicit commands that change a note (``lint --fix``, the lint report note, agents'
write tools), which goes through ``Beneath``: never through a symlink, always atomic.

The scan never follows symlinked folders (no loops, nothing outside the vault), skips hidden
folders, ``.obsidian/``, ``.trash/``, ``.git/`` and whatever a gitignore-style ``.sidecarignore``
names, and the files Obsidian's "Excluded files" setting names (``obsidian.py``). Reads refuse binary files and files over a size cap with a clear reason instead of an
exception, so one bad file never stops an index run. The same walk lists the attachment files
(images, PDFs, canvases: ``ATTACHMENT_EXTENSIONS``) by path only, so links to them can be checked;
their bytes are never read.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from sidecar.core.resolve import ATTACHMENT_EXTENSIONS
from sidecar.errors import PathOutsideVault
from sidecar.store.files import Beneath, is_our_temp_name
from sidecar.store.obsidian import APP_JSON, ObsidianSettings

NOTE_SUFFIXES = (".md", ".markdown")
ALWAYS_IGNORED = (".obsidian/", ".trash/", ".git/", ".sidecar/", "node_modules/")
IGNORE_FILE = ".sidecarignore"
RULE_FILES = (IGNORE_FILE, APP_JSON)  # a change to one of these changes which files are notes


@dataclass(frozen=True, slots=True)
class FileStat:
    mtime_ns: int
    size: int


@dataclass(frozen=True, slots=True)
class NoteFile:
    """A note's bytes, or the reason it cannot be indexed."""

    path: str
    data: bytes | None
    text: str | None
    error: str | None
    stat: FileStat | None


class Vault:
    def __init__(self, root: Path, extra_ignores: Iterable[str] = (), max_bytes: int = 5_000_000):
        self.root = root.resolve()
        self.files = Beneath(self.root, dir_mode=_folder_mode(self.root))
        self.max_bytes = max_bytes
        self.extra_ignores = tuple(extra_ignores)
        self.ignore, self.obsidian = self._rules()

    def _rules(self) -> tuple[pathspec.GitIgnoreSpec, ObsidianSettings]:
        patterns = [*ALWAYS_IGNORED, *self.extra_ignores, *self._ignore_file_lines()]
        return pathspec.GitIgnoreSpec.from_lines(patterns), ObsidianSettings.load(self.root)

    def reload_rules(self) -> bool:
        """Re-read ``.sidecarignore`` and Obsidian's settings; True when they changed."""
        ignore, obsidian = self._rules()
        changed = ignore != self.ignore or obsidian != self.obsidian
        self.ignore, self.obsidian = ignore, obsidian  # readers see the old rules or the new
        return changed

    def _excluded(self, rel: str) -> bool:
        return bool(self.ignore.match_file(rel)) or self.obsidian.excludes(rel)

    def _ignore_file_lines(self) -> list[str]:
        try:
            # Through the vault's Beneath: a FIFO named .sidecarignore is refused, not waited on.
            return self.files.read_text(IGNORE_FILE).splitlines()
        except OSError:
            return []

    def is_note(self, rel: str) -> bool:
        if not rel.lower().endswith(NOTE_SUFFIXES):
            return False
        parts = rel.split("/")
        if any(p.startswith(".") for p in parts):
            return False
        return not self._excluded(rel)

    def is_attachment(self, rel: str) -> bool:
        """A file a link may name that is not a note, under the notes' ignore rules."""
        if posixpath.splitext(rel)[1].lower() not in ATTACHMENT_EXTENSIONS:
            return False
        return not any(p.startswith(".") for p in rel.split("/")) and not self._excluded(rel)

    def scan(self) -> dict[str, FileStat]:
        """Every indexable note, by vault-relative path, with its mtime and size."""
        return self.scan_all()[0]

    def scan_all(self) -> tuple[dict[str, FileStat], set[str]]:
        """One walk: the notes (as ``scan``) and the paths of the attachment files."""
        notes: dict[str, FileStat] = {}
        attachments: set[str] = set()
        for rel, entry in self._files():
            if entry.name.startswith("."):
                continue
            note = self.is_note(rel)
            if not note and not self.is_attachment(rel):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            if note:
                notes[rel] = FileStat(st.st_mtime_ns, st.st_size)
            else:
                attachments.add(rel)
        return notes, attachments

    def attachment_exists(self, rel: str) -> bool:
        """Whether a watcher event's path is an attachment file now (a regular file reached
        without a symlinked folder, as the scan would list it)."""
        if not self.is_attachment(rel) or not self.inside(rel):
            return False
        try:
            return stat.S_ISREG(os.lstat(self.root / rel).st_mode)
        except OSError:
            return False

    def remove_stray_temps(self) -> int:
        """Remove the temp files a kill -9 left mid-write of a note (only our own marked names).
        Called at open, under the writer lock, when no write of ours can be in flight."""
        removed = 0
        for rel, entry in self._files():
            if entry.name.startswith(".") and is_our_temp_name(entry.name):
                with contextlib.suppress(OSError):  # gone already, or not ours to remove
                    removed += self.files.unlink(rel)
        return removed

    def _files(self) -> Iterator[tuple[str, os.DirEntry[str]]]:
        """Every file (and symlink) in the folders a scan descends into: not hidden folders,
        not ignored ones, never through a symlinked folder."""
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                entries = list(os.scandir(self.root / rel_dir))
            except OSError:
                continue  # unreadable or vanished folder: skip, the next scan retries
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if not is_dir:
                    yield rel, entry
                elif not entry.name.startswith(".") and not self._excluded(rel + "/"):
                    stack.append(rel)

    def inside(self, rel: str) -> bool:
        """Whether ``rel`` lies in the vault without passing through a symlinked folder.

        The scan never descends into symlinked folders, so a path named by a request or a
        watcher event must not reach a file through one either (a link to ``~/.ssh`` would
        otherwise be one ``index.reindex`` away). A symlink as the file itself is refused by
        ``read``, which opens with ``O_NOFOLLOW``.
        """
        parts = rel.replace("\\", "/").split("/")
        if not rel or rel.startswith("/") or ".." in parts or "\x00" in rel:
            return False
        parent = os.path.normpath(os.path.join(self.root, rel, os.pardir))
        return os.path.realpath(parent) == parent

    def abspath(self, rel: str) -> Path:
        """The absolute path of a vault-relative path, refusing anything outside the vault."""
        candidate = (self.root / rel).resolve()
        if candidate != self.root and self.root not in candidate.parents:
            raise PathOutsideVault(f"path is outside the vault: {rel}")
        return candidate

    def relpath(self, path: Path | str) -> str:
        p = Path(path)
        p = p if p.is_absolute() else (Path.cwd() / p)
        try:
            return p.resolve().relative_to(self.root).as_posix()
        except ValueError as exc:
            raise PathOutsideVault(f"path is outside the vault: {path}") from exc

    def write(self, rel: str, data: bytes) -> None:
        """Replace a note atomically, keeping its mode (a new note gets the vault's). Raises
        ``UnsafePath`` (an OSError) for a symlink anywhere on the way or as the note."""
        st = self.files.stat(rel)
        mode = stat.S_IMODE(st.st_mode) if st is not None else _folder_mode(self.root) & 0o666
        self.files.write(rel, data, mode)

    def read(self, rel: str) -> NoteFile:
        path = self.root / rel
        try:
            # O_NOFOLLOW and fstat on the open file: a note swapped for a symlink (or a FIFO)
            # between the scan and this read is refused, not followed or blocked on.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return NoteFile(rel, None, None, "deleted before it could be read", None)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return NoteFile(rel, None, None, "not a regular file (a symlink)", None)
            return NoteFile(rel, None, None, f"unreadable: {exc.strerror or exc}", None)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # before fdopen, which refuses a folder with an OSError
            os.close(fd)
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            return NoteFile(rel, None, None, f"{kind}, not a note", None)
        with os.fdopen(fd, "rb") as fh:
            try:
                fst = FileStat(st.st_mtime_ns, st.st_size)
                if st.st_size > self.max_bytes:
                    reason = (
                        f"larger than {self.max_bytes} bytes (index.max_file_bytes); not indexed"
                    )
                    return NoteFile(rel, None, None, reason, fst)
                # A buffer of the file's size, not of the limit: read(n) allocates n bytes first.
                # With a fixed mmap threshold (tried, docs/benchmarks.md) each 5 MB buffer was a
                # mapping of its own, shrunk but kept; 100k notes held at once passed the
                # kernel's 65,530 mappings and allocations failed.
                data = fh.read(st.st_size + 1)
                if len(data) > st.st_size:  # it grew since fstat: read on, up to the limit
                    data += fh.read(self.max_bytes + 1 - len(data))
            except OSError as exc:
                return NoteFile(rel, None, None, f"unreadable: {exc.strerror or exc}", None)
        if len(data) > self.max_bytes:  # grew between fstat and read
            reason = f"larger than {self.max_bytes} bytes (index.max_file_bytes); not indexed"
            return NoteFile(rel, None, None, reason, fst)
        if b"\x00" in data[:8192]:
            return NoteFile(rel, data, None, "binary file (NUL bytes)", fst)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", "replace")
            return NoteFile(
                rel, data, text, f"not UTF-8 (byte {exc.start}); indexed with U+FFFD", fst
            )
        return NoteFile(rel, data, text, None, fst)


def _folder_mode(root: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(root).st_mode) | 0o700
    except OSError:
        return 0o700
