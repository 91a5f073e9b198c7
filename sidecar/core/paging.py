"""Pages of a listing for callers that cannot take all of it at once (an agent's context).

A page holds at most ``limit`` items and at most ``budget`` characters of them as JSON (an item
larger than the budget still comes alone, so paging always moves on). ``next_cursor`` is where
the next page starts, absent on the last page; a cursor is opaque to callers (``c<offset>``), so
the encoding can change without breaking them. Pages of an unchanged listing neither repeat nor
skip an item.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sidecar.errors import UsageError

PAGE_CHARS = 12_000  # a default page: ~3k tokens of JSON
MAX_PAGE_CHARS = 60_000  # never more: ~15k tokens, under Claude Code's 25k-token tool limit


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Any]
    next_cursor: str | None
    total: int

    def fields(self, key: str) -> dict[str, Any]:
        """The page as result fields: ``key`` (the items), ``total``, and ``next_cursor`` with a
        note saying so when there is more."""
        out: dict[str, Any] = {key: self.items, "total": self.total}
        if self.next_cursor is not None:
            out["next_cursor"] = self.next_cursor
            out["more"] = (f"{self.total - offset(self.next_cursor)} more {key}: call again "
                           f"with cursor {self.next_cursor!r}")  # fmt: skip
        return out


def offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    if not (cursor.startswith("c") and cursor[1:].isdigit()):
        raise UsageError(f"not a cursor from this listing: {cursor!r}")
    return int(cursor[1:])


def cursor_at(n: int) -> str:
    return f"c{n}"


def page(items: Sequence[Any], limit: int, cursor: str | None = None,
         budget: int = PAGE_CHARS) -> Page:  # fmt: skip
    start = offset(cursor)
    budget = min(budget, MAX_PAGE_CHARS)
    out: list[Any] = []
    used = 0
    for item in items[start : start + max(limit, 1)]:
        size = len(json.dumps(item, ensure_ascii=False, default=str))
        if out and used + size > budget:
            break
        out.append(item)
        used += size
    end = start + len(out)
    return Page(out, cursor_at(end) if end < len(items) else None, len(items))
