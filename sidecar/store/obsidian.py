"""Obsidian's own settings that change what the index should see: ``.obsidian/app.json``.

``userIgnoreFilters`` ("Excluded files" in Obsidian's settings) are path prefixes
(``Templates/``) or, written between slashes, regular expressions (``/\\.excalidraw/``), tested
against the vault-relative path as Obsidian tests them. ``attachmentFolderPath`` is where new
attachments go (``./`` is the note's own folder). Excluded notes are not indexed, exactly like
``.sidecarignore``; a missing or unreadable ``app.json`` applies nothing and says why.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

APP_JSON = ".obsidian/app.json"


@dataclass(frozen=True, slots=True)
class ObsidianSettings:
    ignore_filters: tuple[str, ...] = ()
    attachment_folder: str | None = None
    error: str | None = None
    found: bool = False
    _prefixes: tuple[str, ...] = field(default=(), repr=False)
    _patterns: tuple[re.Pattern[str], ...] = field(default=(), repr=False)

    @classmethod
    def load(cls, root: Path) -> ObsidianSettings:
        path = root / APP_JSON
        try:
            raw = _read_regular(path)
        except FileNotFoundError:
            return cls()
        except (OSError, UnicodeDecodeError) as exc:
            return cls(error=f"{APP_JSON} unreadable: {exc}", found=True)
        try:
            data: Any = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            return cls(error=f"{APP_JSON} is not valid JSON: {exc}", found=True)
        if not isinstance(data, dict):
            return cls(error=f"{APP_JSON} is not a JSON object", found=True)
        filters = data.get("userIgnoreFilters") or []
        filters = tuple(f for f in filters if isinstance(f, str) and f) if isinstance(
            filters, list) else ()  # fmt: skip
        prefixes: list[str] = []
        patterns: list[re.Pattern[str]] = []
        bad: list[str] = []
        for f in filters:
            if len(f) > 2 and f.startswith("/") and f.endswith("/"):
                try:
                    patterns.append(re.compile(f[1:-1]))
                except re.error:
                    bad.append(f)
            else:
                prefixes.append(f)
        folder = data.get("attachmentFolderPath")
        error = f"{APP_JSON}: not a valid regular expression: {', '.join(bad)}" if bad else None
        return cls(filters, folder if isinstance(folder, str) and folder else None, error, True,
                   tuple(prefixes), tuple(patterns))  # fmt: skip

    def excludes(self, rel: str) -> bool:
        return any(rel.startswith(p) for p in self._prefixes) or any(
            p.search(rel) for p in self._patterns)  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {"app_json": APP_JSON if self.found else None,
                "userIgnoreFilters": list(self.ignore_filters),
                "attachmentFolderPath": self.attachment_folder, "error": self.error}  # fmt: skip


def _read_regular(path: Path) -> str:
    """A regular file's text; a FIFO or device where app.json should be is an OSError, never
    a read that blocks the daemon's start. A symlinked .obsidian/ (shared settings) is fine."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name} is not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8")
