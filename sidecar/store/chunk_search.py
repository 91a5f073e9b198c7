"""Full-text search over chunks, and reads of chunk rows by id.

BM25 runs on LanceDB's native FTS index over ``search_text`` (title > breadcrumb + text), with
positions so phrase queries work. Rows added after the index was built are searched too
(unindexed rows are scanned); compaction folds them into the index.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lancedb.index import FTS, BTree

from sidecar.store.lance import IndexStore, native, read, sql_str

FTS_COLUMN = "search_text"


ROW_COLUMNS = ["chunk_id", "path", "heading", "start_line", "end_line", "text"]


@dataclass(frozen=True, slots=True)
class Hit:
    chunk_id: str
    path: str
    score: float
    row: dict[str, Any] | None = None  # the ROW_COLUMNS, when asked for


def ensure_fts_index(store: IndexStore) -> None:
    """The FTS index, and B-trees on chunk_id (result rows are fetched by id) and on path
    (re-indexing a note reads, deletes and reloads its chunks by path; without the index each
    of those scans the whole table). An index a store made by an older version lacks is added.

    Built by the first search, which in the daemon runs on a worker thread: concurrent first
    searches would each create it and all but one fail with a LanceDB commit conflict, so
    creation is serialised and re-checked under a lock.

    Once the index exists the store remembers it (``fts_ready``): listing indices and counting
    rows on every search cost 2-3 ms of a 10k-note lexical query (``--profile``)."""
    if store.fts_ready:
        return
    with store.index_lock:
        names = {ix.name for ix in store.chunks.list_indices()}
        missing = [column for column in INDEXES if f"{column}_idx" not in names]
        if missing:
            if store.chunks.count_rows() == 0:
                return  # nothing to index yet
            for column in missing:
                store.chunks.create_index(column, config=INDEXES[column])
        store.fts_ready = True


INDEXES = {
    "chunk_id": BTree(),
    "path": BTree(),
    "content_hash": BTree(),
    FTS_COLUMN: FTS(with_position=True, base_tokenizer="simple", lower_case=True, stem=True,
                    remove_stop_words=False, ascii_folding=True),
}  # fmt: skip


def fts_search(
    store: IndexStore, query: str, limit: int, where: str | None = None, *, rows: bool = False
) -> list[Hit]:
    """BM25 hits; ``rows=True`` also reads each hit's row, saving a second query by id (about
    a third of a 10k-note lexical search, ``--profile``)."""
    if not query.strip():
        return []
    ensure_fts_index(store)
    if not store.fts_ready:  # an empty table
        return []
    columns = [*ROW_COLUMNS, "_score"] if rows else ["chunk_id", "path", "_score"]
    found = read(_fts(store, _fts_query(query), columns, limit, where))
    return [Hit(r["chunk_id"], r["path"], float(r["_score"]), r if rows else None) for r in found]


def term_chunks(
    store: IndexStore, terms: Sequence[str], cap: int
) -> dict[str, list[tuple[str, str]]]:
    """Per term, (chunk_id, path) of up to ``cap`` chunks holding it (stemmed as the index
    stems): how common a word is in this vault, and where. Fewer than ``cap`` rows is the exact
    count. The terms' queries run at once, in one trip to LanceDB (one at a time they were
    ~3 ms each on dendron-site)."""
    ensure_fts_index(store)
    wanted = [t for t in dict.fromkeys(terms) if t.strip()]
    if not store.fts_ready or not wanted:
        return {t: [] for t in terms}

    async def each() -> list[list[dict[str, Any]]]:
        columns = ["chunk_id", "path", "_score"]
        return list(await asyncio.gather(*(_fts(store, t, columns, cap) for t in wanted)))

    found = dict(zip(wanted, read(each()), strict=True))
    return {t: [(r["chunk_id"], r["path"]) for r in found.get(t, [])] for t in terms}


async def _fts(
    store: IndexStore, query: str, columns: list[str], limit: int, where: str | None = None
) -> list[dict[str, Any]]:
    q = native(store.chunks).query().nearest_to_text(query, columns=FTS_COLUMN)
    if where:
        q = q.where(where)  # a filter on a full-text query applies before the ranking
    rows: list[dict[str, Any]] = (await q.select(columns).limit(limit).to_arrow()).to_pylist()
    return rows


def prefix_paths(store: IndexStore, prefix: str) -> set[str]:
    """Notes with a word starting with ``prefix`` (``term*``): the FTS index has no prefix
    query, so a LIKE scan in LanceDB narrows the chunks and a word-boundary test decides."""
    stem = prefix.lower()
    if not stem or store.chunks.count_rows() == 0:
        return set()
    like = stem.replace("'", "''").replace("%", "").replace("_", "\\_")
    rows = (store.chunks.search().where(f"lower(search_text) LIKE '%{like}%'")
            .select(["path", "search_text"]).limit(store.chunks.count_rows()).to_list())  # fmt: skip
    word = re.compile(rf"(?<!\w){re.escape(stem)}", re.IGNORECASE)
    return {r["path"] for r in rows if word.search(r["search_text"] or "")}


def _fts_query(query: str) -> str:
    """Identifier-like queries (``dendron.yml``, ``OPENAI_API_KEY``) are tokenised by the index
    the same way as the text, so a plain query already finds them; quotes pass through."""
    return query.strip()


def texts_by_hash(store: IndexStore, hashes: Sequence[str]) -> dict[str, str]:
    """content hash -> the text the model sees, for the hashes some chunk row has (through
    the content_hash B-tree)."""
    if not hashes:
        return {}
    where = f"content_hash IN ({', '.join(sql_str(h) for h in hashes)})"
    q = store.chunks.search().where(where).select(["content_hash", "search_text"])
    return {r["content_hash"]: r["search_text"] or "" for r in q.limit(None).to_list()}


def chunk_rows(store: IndexStore, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    if not chunk_ids:
        return {}
    where = f"chunk_id IN ({', '.join(sql_str(c) for c in chunk_ids)})"
    q = native(store.chunks).query().where(where).select(ROW_COLUMNS)
    return {r["chunk_id"]: r for r in read(_listed(q))}


async def _listed(q: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = (await q.to_arrow()).to_pylist()
    return rows
