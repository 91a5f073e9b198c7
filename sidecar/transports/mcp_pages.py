"""The last line of defence on answer size: a tool result too big for an agent comes in pages.

The agents' tools page their own listings (``core/paging.py``); a method offered only with
``--all`` (``graph_export``, ``vault_catalog``) or an answer that is big for another reason would
otherwise reach the model whole: 470k characters for ``vault_catalog`` on dendron-site, against
Claude Code's 25k-token limit. So the server cuts the result's largest list (or text) to fit,
keeps the whole result for a while, and says so: ``next_cursor`` (``t<token>:<offset>``) fetches
the next page from what it kept, without running the method again.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections import OrderedDict
from typing import Any

from sidecar.errors import UsageError

MAX_REPLY_CHARS = 76_000  # text and structured content together: ~19k tokens
PAGE_CHARS = 14_000  # the part of the data in one page (said twice: text and structured)
KEPT_RESULTS = 8


def size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


class Pages:
    def __init__(self) -> None:
        self._kept: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def is_ours(self, cursor: Any) -> bool:
        return isinstance(cursor, str) and cursor.startswith("t") and ":" in cursor

    def first(self, result: Any) -> dict[str, Any]:
        token = secrets.token_hex(4)
        with self._lock:
            self._kept[token] = result
            while len(self._kept) > KEPT_RESULTS:
                self._kept.popitem(last=False)
        return self._page(token, result, 0)

    def next(self, cursor: str) -> dict[str, Any]:
        token, _, start = cursor[1:].partition(":")
        with self._lock:
            result = self._kept.get(token)
        if result is None or not start.isdigit():
            raise UsageError("that cursor has expired: call the tool again without it")
        return self._page(token, result, int(start))

    def _page(self, token: str, result: Any, start: int) -> dict[str, Any]:
        """``result`` with its largest list (or string) cut to one page from ``start``."""
        if not isinstance(result, dict):
            result = {"result": result}
        key = max(result, key=lambda k: size(result[k]) if isinstance(result[k], list | str)
                  else -1, default=None)  # fmt: skip
        whole = result.get(key) if key is not None else None
        if not isinstance(whole, list | str):
            raise UsageError("this answer is too big to send and cannot be paged")
        if isinstance(whole, str):
            part: list[Any] | str = whole[start : start + PAGE_CHARS]
            end = start + len(part)
        else:
            items: list[Any] = []
            used = 0
            for item in whole[start:]:
                used += size(item) + 1
                if items and used > PAGE_CHARS:
                    break
                items.append(item)
            part, end = items, start + len(items)
        out = {**{k: v for k, v in result.items() if size(v) <= PAGE_CHARS // 4}, key: part}
        if end < len(whole):
            out["next_cursor"] = f"t{token}:{end}"
            out["more"] = (f"{key}: items {start}-{end - 1} of {len(whole)} shown (the answer "
                           f"is too big for one reply); call again with cursor "
                           f"{out['next_cursor']!r} for more")  # fmt: skip
        return out
