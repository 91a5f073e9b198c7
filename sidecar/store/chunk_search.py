"""Full-text search over chunks and the vector column's reads and writes.

BM25 runs on LanceDB's native FTS index over ``search_text`` (title > breadcrumb + text), with
positions so phrase queries work. Rows added after the index was built are searched too
(unindexed rows are scanned); compaction folds them into the index.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from lancedb.index import FTS, BTree

from sidecar.store.lance import IndexStore, pending_filter, sql_str

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
    (re-indexing a note reads, deletes and reloads its chunks by path: without the index each
    of those scanned the whole table; one-note re-index at 100k notes took 317 ms at p50, 71
    ms with it, bench/scale.py). An index a store made by an older version lacks is added
    here.

    Built by the first search, which in the daemon runs on a worker thread: concurrent first
    searches used to create it at once and all but one failed with a LanceDB commit conflict
    (found by the load test), so creation is serialised and re-checked under a lock.

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
    q = store.chunks.search(_fts_query(query), query_type="fts", fts_columns=FTS_COLUMN)
    if where:
        q = q.where(where, prefilter=True)
    columns = [*ROW_COLUMNS, "_score"] if rows else ["chunk_id", "path", "_score"]
    found = q.select(columns).limit(limit).to_list()
    return [Hit(r["chunk_id"], r["path"], float(r["_score"]), r if rows else None) for r in found]


def term_chunks(store: IndexStore, term: str, cap: int) -> list[tuple[str, str]]:
    """(chunk_id, path) of up to ``cap`` chunks holding ``term`` (stemmed as the index stems):
    how common a word is in this vault, and where. Fewer than ``cap`` rows is the exact count."""
    ensure_fts_index(store)
    if not store.fts_ready or not term.strip():
        return []
    q = store.chunks.search(term, query_type="fts", fts_columns=FTS_COLUMN)
    rows = q.select(["chunk_id", "path", "_score"]).limit(cap).to_list()
    return [(r["chunk_id"], r["path"]) for r in rows]


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


def pending_chunks(
    store: IndexStore, limit: int, paths: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Chunks without a vector: what the embedding stage still has to do (in all notes, or in
    some). Across all notes this scans the vector column: at 100k notes 150 ms and ~300 MiB
    of buffers (``bench/probe_commit.py``); a few notes' chunks are found through the path
    B-tree first."""
    if paths is not None and not paths:
        return []
    rows: list[dict[str, Any]] = (
        store.chunks.search()
        .where(pending_filter(paths))
        .select(["chunk_id", "content_hash", "search_text"])
        .limit(limit)
        .to_list()
    )
    return rows


UPDATE_ROWS = 8  # batches up to this size are written row by row (see write_vectors)


def write_vectors(store: IndexStore, rows: Sequence[tuple[str, str, np.ndarray]]) -> int:
    """Set vectors where the chunk still holds the text they were computed from.

    A save's few chunks go in one ``update`` each, found through the chunk_id B-tree; a batch
    from a backlog goes in one ``merge_insert``, which joins against every row of the table
    (it cannot use the B-tree, see below). On the 100k-note store (223k chunks) a one-row
    merge took 395-536 ms and a one-row update 7 ms (``bench/probe_commit.py``): the merge
    held the writer, and the next save's re-index waited behind it."""
    if not rows:
        return 0
    if len(rows) <= UPDATE_ROWS:
        return sum(_update_vector(store, *row) for row in rows)
    table = pa.table(
        {
            "chunk_id": [r[0] for r in rows],
            "content_hash": [r[1] for r in rows],
            "vector": pa.array([r[2].tolist() for r in rows], pa.list_(pa.float32(), store.dim)),
        }
    )
    result = (
        store.chunks.merge_insert("chunk_id")
        .when_matched_update_all(where="target.content_hash = source.content_hash")
        .use_index(False)  # lancedb 0.40 panics joining through the chunk_id B-tree
        .execute(table)
    )
    return int(result.num_updated_rows)


def commit_vectors(
    store: IndexStore, rows: Sequence[tuple[str, str, np.ndarray]]
) -> tuple[int, dict[str, str]]:
    """``write_vectors``, then the content hash each chunk holds now: a vector belongs in the
    RAM matrix only if its chunk still holds the text it came from. Asked by chunk id (B-tree),
    not by reloading the notes' vectors: that read grew with the store and halved the
    embedding stage's rate at 100k notes (bench/scale.py)."""
    return write_vectors(store, rows), chunk_hashes(store, [r[0] for r in rows])


def _update_vector(store: IndexStore, chunk_id: str, content_hash: str, vector: np.ndarray) -> int:
    where = f"chunk_id = {sql_str(chunk_id)} AND content_hash = {sql_str(content_hash)}"
    result = store.chunks.update(where=where, values={"vector": vector.tolist()})
    return int(result.rows_updated)


def load_vectors(store: IndexStore, paths: Sequence[str] | None = None) -> pa.Table:
    """chunk_id, path and vector of every embedded chunk (or of some notes)."""
    q = store.chunks.search().where("vector IS NOT NULL")
    if paths is not None:
        if not paths:
            return pa.table({"chunk_id": [], "path": [], "vector": []})
        q = store.chunks.search().where(
            f"vector IS NOT NULL AND path IN ({', '.join(sql_str(p) for p in paths)})"
        )
    return q.select(["chunk_id", "path", "vector"]).limit(None).to_arrow()


def chunk_hashes(store: IndexStore, chunk_ids: Sequence[str]) -> dict[str, str]:
    """chunk_id -> content hash of the chunks that exist now."""
    if not chunk_ids:
        return {}
    rows = (
        store.chunks.search()
        .where(f"chunk_id IN ({', '.join(sql_str(c) for c in chunk_ids)})")
        .select(["chunk_id", "content_hash"])
        .limit(None)
        .to_list()
    )
    return {r["chunk_id"]: r["content_hash"] for r in rows}


def chunk_rows(store: IndexStore, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    if not chunk_ids:
        return {}
    where = f"chunk_id IN ({', '.join(sql_str(c) for c in chunk_ids)})"
    rows = store.chunks.search().where(where).select(ROW_COLUMNS).limit(None).to_list()
    return {r["chunk_id"]: r for r in rows}
