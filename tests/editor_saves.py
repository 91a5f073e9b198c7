"""How editors write a note when they save it, as the kernel sees it (issue 23).

The tests and ``bench/daemon_bench.py`` save with each of these, so a note is queued by the
events real editors cause: a close after writing, or a rename onto the note.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

DRAFT_MARK = "zzdraftmarker"  # in the first write of a two-write save only: never indexed


def in_place(path: Path, text: str) -> None:
    """Obsidian, VS Code, most editors: truncate and write (IN_MODIFY, then IN_CLOSE_WRITE)."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write(text)


def temp_rename(path: Path, text: str) -> None:
    """Atomic writers (JetBrains, sync tools): a temp file beside the note renamed onto it."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, "utf-8")
    os.replace(tmp, path)


def vim(path: Path, text: str) -> None:
    """vim's default (``writebackup``, ``backupcopy=auto``): the note renamed to a backup, a new
    file written and closed, then the backup deleted."""
    backup = path.with_name(path.name + "~")
    if path.exists():
        os.rename(path, backup)
    with path.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    backup.unlink(missing_ok=True)


def two_writes(path: Path, text: str) -> None:
    """A save followed at once by a second one (format-on-save, an editor writing the body and
    then its properties): only the second text is the note."""
    in_place(path, f"{text}\n{DRAFT_MARK}\n")
    in_place(path, text)


PATTERNS: dict[str, Callable[[Path, str], None]] = {
    "in-place write": in_place,
    "temp + rename": temp_rename,
    "vim backup + rename": vim,
    "two-write save": two_writes,
}
