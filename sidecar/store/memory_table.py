"""The LanceDB ``memory`` table: one row per entry file, plus the machine-local counters.

The row keeps the file's exact text (so an edit made in the editor can still keep the previous
version as a revision), its stat (so a rescan re-reads only changed files), the text's vector
and the counters that are deliberately not synced with the vault (confirmations, refutations,
the reminder last announced). The files are the truth; this table can be rebuilt from them,
losing only those counters. It lives in the index's database beside ``notes`` and ``chunks``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from lancedb.index import FTS

from sidecar.errors import StoreError
from sidecar.store.lance import native, read, sql_str

SCHEMA_VERSION = "m1"
COUNTERS = ("confirmations", "refutations", "last_confirmed_at", "notified_for")


def memory_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("path", pa.string()),
            pa.field("archived", pa.bool_()),
            pa.field("mtime_ns", pa.int64()),
            pa.field("size", pa.int64()),
            pa.field("text", pa.string()),
            pa.field("search_text", pa.string()),
            pa.field("model", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim), nullable=True),
            pa.field("confirmations", pa.int32()),
            pa.field("refutations", pa.int32()),
            pa.field("last_confirmed_at", pa.string()),
            pa.field("notified_for", pa.string()),
        ]
    ).with_metadata({b"schema_version": SCHEMA_VERSION.encode()})


@dataclass(frozen=True, slots=True)
class MemoryHit:
    id: str
    score: float


class MemoryTable:
    """Narrow access to the table; one writer calls the write methods (the daemon's, or the
    command holding the writer lock)."""

    def __init__(self, db: Any, dim: int) -> None:
        self.dim = dim
        self.fts_ready = False
        self.schema = memory_schema(dim)
        try:
            existing = set(db.list_tables().tables)
            if "memory" not in existing:
                self.table = db.create_table("memory", schema=self.schema)
            elif self._stale(db.open_table("memory")):
                # another version or model size: rebuilt from the files, losing only counters
                self.table = db.create_table("memory", schema=self.schema, mode="overwrite")
            else:
                self.table = db.open_table("memory")
        except (OSError, ValueError, RuntimeError) as exc:
            raise StoreError(f"cannot open the memory table: {exc}") from exc

    def reopen(self, db: Any) -> None:
        """The table through another connection (``IndexStore.reconnect``'s)."""
        self.table = db.open_table("memory")

    def _stale(self, table: Any) -> bool:
        meta = table.schema.metadata or {}
        same = table.schema.remove_metadata().equals(self.schema.remove_metadata())
        return meta.get(b"schema_version") != SCHEMA_VERSION.encode() or not same

    def rows(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.table.to_arrow().to_pylist()
        return rows

    def put(self, rows: Sequence[dict[str, Any]]) -> None:
        """Replace these entries' rows (delete + add: cheaper than merge_insert, DESIGN 9)."""
        if not rows:
            return
        self.delete([r["id"] for r in rows])
        full = [{**{c: None for c in self.schema.names}, **r} for r in rows]
        self._guard(lambda: self.table.add(pa.Table.from_pylist(full, self.schema)))

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            where = f"id IN ({', '.join(sql_str(i) for i in ids)})"
            self._guard(lambda: self.table.delete(where))

    def update(self, entry_id: str, values: dict[str, Any]) -> None:
        self._guard(lambda: self.table.update(where=f"id = {sql_str(entry_id)}", values=values))

    def set_vectors(self, items: Sequence[tuple[str, str, np.ndarray]]) -> None:
        for entry_id, model, vec in items:
            self.update(entry_id, {"model": model, "vector": [float(x) for x in vec]})

    def search(self, query: str, limit: int) -> list[MemoryHit]:
        """BM25 over title, tags and body; empty when nothing matches or the table is empty.
        Once the index is known to exist (it lives as long as the table) a search is one
        query: recall runs one for every prompt."""
        if not query.strip():
            return []
        if not self.fts_ready:
            if self.table.count_rows() == 0:
                return []
            self._ensure_fts()
            self.fts_ready = True
        text = query if query.count('"') % 2 == 0 else query.replace('"', " ")
        try:
            rows = read(_fts(native(self.table), text, limit))
        except (ValueError, RuntimeError, OSError) as exc:
            raise StoreError(f"memory search failed: {exc}") from exc
        return [MemoryHit(r["id"], float(r["_score"])) for r in rows]

    def _ensure_fts(self) -> None:
        if any(ix.name == "search_text_idx" for ix in self.table.list_indices()):
            return
        self._guard(lambda: self.table.create_index(
            "search_text",
            config=FTS(with_position=True, base_tokenizer="simple", lower_case=True, stem=True,
                       remove_stop_words=False, ascii_folding=True),
        ))  # fmt: skip

    def optimize(self, keep: dt.timedelta = dt.timedelta(minutes=10)) -> None:
        self._guard(lambda: self.table.optimize(cleanup_older_than=keep))

    @staticmethod
    def _guard(fn: Any) -> None:
        try:
            fn()
        except (OSError, ValueError, RuntimeError) as exc:
            raise StoreError(f"memory table write failed: {exc}") from exc


async def _fts(table: Any, text: str, limit: int) -> list[dict[str, Any]]:
    q = table.query().nearest_to_text(text, columns="search_text").select(["id", "_score"])
    rows: list[dict[str, Any]] = (await q.limit(limit).to_arrow()).to_pylist()
    return rows
