"""The documents the editor has open, as it holds them, and positions in the client's encoding.

The server advertises full sync, so a change is normally the whole text; a ranged change (sent
by a client that ignores the advertisement) is applied too. Columns inside the server count
code points; the client counts UTF-16 code units unless ``initialize`` chose UTF-8 or UTF-32.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sidecar.lsp.types import Position, position

ENCODINGS = ("utf-16", "utf-8", "utf-32")


@dataclass(slots=True)
class Document:
    text: str
    version: int | None = None


def choose_encoding(capabilities: Any) -> str:
    """The client's first offered encoding that the server knows, else UTF-16 (the default)."""
    general = capabilities.get("general") if isinstance(capabilities, dict) else None
    offered = general.get("positionEncodings") if isinstance(general, dict) else None
    for name in offered if isinstance(offered, list) else []:
        if name in ENCODINGS:
            return str(name)
    return "utf-16"


def units(text: str, encoding: str) -> int:
    """How many of the client's units ``text`` takes."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def column(line: str, count: int, encoding: str) -> int:
    """The code-point column of the client's ``count`` units into ``line`` (clamped to it)."""
    if encoding == "utf-32" or line.isascii():
        return max(0, min(count, len(line)))
    seen = 0
    for i, c in enumerate(line):
        if seen >= count:
            return i
        seen += units(c, encoding)
    return len(line)


class Positions:
    """Conversions between the client's positions and (line, code-point column)."""

    def __init__(self, encoding: str = "utf-16") -> None:
        self.encoding = encoding

    def from_client(self, lines: Sequence[str], pos: Any) -> tuple[int, int]:
        line, count = int(pos["line"]), int(pos["character"])
        if not 0 <= line < len(lines):
            return line, count
        return line, column(lines[line], count, self.encoding)

    def to_client(self, lines: Sequence[str], line: int, col: int) -> Position:
        try:
            before = lines[line][:col]
        except IndexError:
            return position(len(lines), 0)
        return position(line, units(before, self.encoding))


def apply_change(text: str, change: Any, positions: Positions) -> str:
    """``text`` after one ``TextDocumentContentChangeEvent``."""
    if "range" not in change or change["range"] is None:
        return str(change["text"])
    rows = text.splitlines(keepends=True) or [""]
    if rows[-1].endswith(("\n", "\r")):
        rows.append("")

    def offset(pos: Any) -> int:
        line = min(int(pos["line"]), len(rows) - 1)
        body = rows[line].rstrip("\r\n")
        return sum(len(r) for r in rows[:line]) + column(body, int(pos["character"]),
                                                          positions.encoding)  # fmt: skip

    start, end = offset(change["range"]["start"]), offset(change["range"]["end"])
    return text[:start] + str(change["text"]) + text[end:]
