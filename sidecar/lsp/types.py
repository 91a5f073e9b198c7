"""The few LSP shapes the server builds, as plain dicts: the wire format is JSON, and the typed
library (lsprotocol) cost more to import than the whole start-up budget.

Names and fields follow the specification (camelCase on the wire). Optional fields are left
out, never sent as null: clients validate some of them strictly.
"""

from __future__ import annotations

from typing import Any, TypedDict

Json = dict[str, Any]

# enumerations used here (LSP 3.17)
SYNC_FULL = 1
SEVERITY = {"error": 1, "warning": 2, "info": 3}
MESSAGE_ERROR, MESSAGE_WARNING = 1, 2
KIND_FILE, KIND_REFERENCE, KIND_PROPERTY = 17, 18, 10  # CompletionItemKind
SYMBOL_FILE, SYMBOL_STRING = 1, 15  # SymbolKind
REQUEST_CANCELLED = -32800
SERVER_NOT_INITIALIZED = -32002


class Position(TypedDict):
    line: int
    character: int


class Range(TypedDict):
    start: Position
    end: Position


class Location(TypedDict):
    uri: str
    range: Range


class TextEdit(TypedDict):
    range: Range
    newText: str


def position(line: int, character: int) -> Position:
    return {"line": line, "character": character}


def span(start: Position, end: Position) -> Range:
    return {"start": start, "end": end}


def location(uri: str, where: Range) -> Location:
    return {"uri": uri, "range": where}


def compact(**fields: Any) -> Json:
    """An object of the fields that are set (None leaves a field out)."""
    return {k: v for k, v in fields.items() if v is not None}
