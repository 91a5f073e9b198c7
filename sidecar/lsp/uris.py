"""The one way between the URIs editors send and the vault's paths.

Clients write the same file differently: Neovim leaves ``()`` bare and encodes spaces, VS Code
encodes ``:`` of a drive letter (``file:///c%3A/...``), macOS editors may send names composed
(NFC) for files stored decomposed (NFD), and a vault opened through a symlink has two spellings.
Every LSP path goes through here, so document lookup, diagnostics, edits, rename and references
all agree on which note a URI names. A vault path is the note's path as the daemon indexes it:
relative to the root, ``/``-separated, its name as stored on disk.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

_DRIVE = re.compile(r"^/?([A-Za-z])(:|%3[Aa])(?=/|$)")


def to_path(uri: str) -> str | None:
    """The file path a ``file:`` URI names (``/``-separated; ``c:/x`` for a drive letter,
    ``//host/x`` for a share), or None for another scheme."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        return None
    path = unquote(parts.path, errors="surrogateescape")
    drive = _DRIVE.match(path)
    if drive:
        path = drive.group(1).lower() + ":" + path[drive.end() :]
    host = unquote(parts.netloc)
    if host and host.lower() != "localhost":
        return f"//{host}{path}"
    return path or "/"


def from_path(path: str) -> str:
    """A ``file:`` URI for ``path``, everything but letters, digits, ``-._~/`` encoded (as VS
    Code writes them; any client decodes them)."""
    path = path.replace(os.sep, "/") if os.sep != "/" else path
    drive = _DRIVE.match(path) if not path.startswith("/") else None
    if drive:
        return f"file:///{drive.group(1).lower()}%3A" + _quote(path[drive.end() :])
    if path.startswith("//"):
        host, _, rest = path[2:].partition("/")
        return f"file://{quote(host)}/" + _quote(rest)
    return "file://" + _quote(path)


def _quote(path: str) -> str:
    return quote(path, safe="/", errors="surrogateescape")


def is_drive_path(path: str) -> bool:
    return _DRIVE.match(path) is not None and not path.startswith("/")


def nfc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


@dataclass(frozen=True, slots=True)
class Root:
    """A vault's folder as the editor named it and as the file system resolves it."""

    named: str  # as the client wrote it (a symlink stays a symlink), no trailing slash
    real: str  # symlinks resolved

    @classmethod
    def of(cls, path: str | Path) -> Root:
        named = str(path).replace("\\", "/") if is_drive_path(str(path)) else str(path)
        if is_drive_path(named):
            named = named[0].lower() + named[1:]
            return cls(named.rstrip("/") or named, named.rstrip("/") or named)
        named = os.path.normpath(os.path.abspath(os.path.expanduser(named)))
        return cls(named, os.path.realpath(named))

    def rel(self, path: str) -> str | None:
        """The vault path of the file at ``path``, or None when it lies outside the vault."""
        if is_drive_path(path):
            tail = _under(path.rstrip("/"), self.named, fold=True)
            return _on_disk(self.real, tail) if tail else None
        absolute = os.path.normpath(os.path.abspath(path))
        for base in dict.fromkeys((self.named, self.real)):
            tail = _under(absolute, base)
            if tail:
                return _on_disk(self.real, tail)
        tail = _under(os.path.realpath(absolute), self.real)
        return _on_disk(self.real, tail) if tail else None

    def contains(self, path: str) -> bool:
        return self.rel(path) is not None or _same(path, self.named) or _same(path, self.real)

    def path(self, rel: str) -> str:
        """The file of a vault path, under the root as the editor named it."""
        return (
            posixpath.join(self.named, rel)
            if is_drive_path(self.named)
            else os.path.join(self.named, rel)
        )

    def uri(self, rel: str) -> str:
        return from_path(self.path(rel))


def _same(a: str, b: str) -> bool:
    return os.path.normpath(a).rstrip("/") == b.rstrip("/")


def _under(path: str, base: str, fold: bool = False) -> str | None:
    """``path`` relative to ``base`` (``/``-separated), None when not strictly inside."""
    head = base.rstrip("/") + "/"
    if path.startswith(head) or (fold and path.lower().startswith(head.lower())):
        tail = path[len(head) :].replace(os.sep, "/")
        return tail.strip("/") or None
    return None


def _on_disk(real_root: str, tail: str) -> str:
    """``tail`` spelled as it is stored: a name written in the other Unicode form (NFC for an
    NFD file, or the reverse) is matched to the stored one, folder by folder."""
    if tail.isascii() or os.path.lexists(os.path.join(real_root, tail)):
        return tail
    out: list[str] = []
    folder = real_root
    for part in tail.split("/"):
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        stored = part if part in names else next((n for n in names if nfc(n) == nfc(part)), part)
        out.append(stored)
        folder = os.path.join(folder, stored)
    return "/".join(out)
