"""The LanceDB index: ``notes``, ``chunks`` and ``vectors`` tables, written by one process.

A note's row holds its record, its resolved edges and the content hashes of its chunks; the
``chunks`` rows are what full-text search reads. A note is written chunks first and its row
last, so its row says what it was indexed from: a crash in between leaves the row naming
other chunk hashes than the chunk rows hold, and that note is read again (``drifted``).

``vectors`` holds one row per (model, content hash) as float16, half the disk of float32 for
the same ranking: only appended to, never FTS-indexed, and read whole at start. A chunk's
vector is found by the hash of the text the model saw, so a renamed or copied note, and an
edit that restores earlier text, reuse vectors, and embedding never rewrites the chunk rows
the full-text index covers. Idle compaction drops the vectors
no chunk uses.

Each write adds a fragment and a table version, so the owner compacts when idle. A ``notes``
or ``chunks`` table of another layout version (in its schema metadata) is rebuilt from the
vault, which is the source of truth; stored vectors of an older layout are copied first.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime as dt
import json
import logging
import shutil
import threading
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lancedb.background_loop import LOOP
from lancedb.index import BTree
from numpy.typing import NDArray

from sidecar.core.model import Chunk, ChunkKey, Edge, Heading, LinkRef, NoteRecord, ParsedNote
from sidecar.errors import StoreError

_log = logging.getLogger("sidecar.store")

# Each table's layout version. notes, chunks 3: vectors in a table of their own, edges and chunk
# hashes in the note rows. vectors 4: float16 (3 was float32, converted in place).
SCHEMA_VERSION = {"notes": "3", "chunks": "3", "vectors": "4"}
TABLES = ("notes", "chunks")  # rebuilt together from the vault when their schema is stale

# LanceDB's caches (manifests and file metadata; index pages) are unbounded in practice
# (defaults: 1 GiB and 6 GiB) and keep entries for every table version a long-running writer
# makes. Bounded, the least recently used entries go; ``index.status`` shows what they hold
# (``store_cache_mib``).
METADATA_CACHE_BYTES = 64 << 20
INDEX_CACHE_BYTES = 128 << 20
GIVE_WAY_POLL_S = 0.005  # how often a compaction of the chunks table asks whether to stop
# A notes row of a single note is rewritten by ``update`` (one table version, not a delete
# and an add) unless it is this big: the values travel as SQL literals.
UPDATE_ROW_BYTES = 256 << 10

NOTES_SCHEMA = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("mtime_ns", pa.int64()),
        pa.field("size", pa.int64()),
        pa.field("note_id", pa.string()),
        pa.field("aliases", pa.list_(pa.string())),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("frontmatter", pa.string()),
        pa.field("frontmatter_error", pa.string()),
        pa.field("headings", pa.string()),
        pa.field("block_ids", pa.list_(pa.string())),
        pa.field("links", pa.string()),
        pa.field("edges", pa.string()),
        pa.field("chunk_hashes", pa.list_(pa.string())),
        pa.field("chunk_count", pa.int32()),
        pa.field("line_count", pa.int32()),
        pa.field("warning", pa.string()),
    ]
)

CHUNKS_SCHEMA = pa.schema(
    [
        pa.field("chunk_id", pa.string(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
        pa.field("seq", pa.int32()),
        pa.field("heading", pa.string()),
        pa.field("start_line", pa.int32()),
        pa.field("end_line", pa.int32()),
        pa.field("text", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("search_text", pa.string()),
    ]
)


KEPT = ("chunk_id", "content_hash", "start_line", "end_line", "seq")  # a ``ChunkKey``


def vectors_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("model", pa.string(), nullable=False),
            pa.field("content_hash", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float16(), dim), nullable=False),
        ]
    )


def sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _in_list(column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"


Vectors = NDArray[np.float32]
T = TypeVar("T")
S = TypeVar("S", bound=str)  # a shared string keeps its type (a link's state)


def native(table: Any) -> Any:
    """The async table a LanceDB table wraps: the same open dataset (the same version, the
    same caches), queried without the sync wrapper, which per query fetches the schema three
    times and stats the disk for a legacy index, each a trip to LanceDB's event loop."""
    return table._table


def read(query: Coroutine[Any, Any, T]) -> T:
    """A read of ``native`` tables, run in one trip to LanceDB's event loop (a recall prompt
    made ~30 trips through the sync API: ~25 ms of its time on a loaded machine)."""
    return cast(T, LOOP.run(query))  # type: ignore[no-untyped-call]


class IndexStore:
    """Narrow, synchronous access to the tables. Not thread-safe: one writer owns it."""

    def __init__(self, directory: Path, dim: int = 384) -> None:
        self.index_lock = threading.Lock()  # serialises on-demand index creation
        self.fts_ready = False  # the chunks table's FTS index exists (tables live as long as we)
        # the vectors table was seen empty (no vector of any model) and nothing was added since
        self._no_vectors: bool | None = None
        self.directory = directory
        self.dim = dim
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.session, self.db = self._connect()
            self._open_tables()
        except (OSError, ValueError, RuntimeError) as exc:
            raise StoreError(f"cannot open the index at {directory}: {exc}") from exc

    def _connect(self) -> tuple[Any, Any]:
        session = lancedb.Session(
            index_cache_size_bytes=INDEX_CACHE_BYTES,
            metadata_cache_size_bytes=METADATA_CACHE_BYTES,
        )
        return session, lancedb.connect(str(self.directory / "lance"), session=session)

    def _open_tables(self) -> None:
        existing = set(self.db.list_tables().tables)
        wanted = vectors_schema(self.dim)
        usable = "vectors" not in existing or self._usable("vectors", wanted)
        if not usable and not self._convert_float32_vectors():
            # another vector size (another model's), or a copy a crash cut short
            self._drop("vectors")
            existing.discard("vectors")
        if "chunks" in existing and "vectors" not in existing:
            self._copy_old_vectors(self.db.open_table("chunks"))
            existing.add("vectors")
        schemas = {"notes": NOTES_SCHEMA, "chunks": CHUNKS_SCHEMA}
        # One table in an old shape means the index as a whole is from another version:
        # rebuild both from the vault (the vectors stay: they are keyed by content).
        stale = "edges" in existing or any(
            _stale(self.db.open_table(n), schemas[n], n) for n in TABLES if n in existing
        )
        if stale:
            _log.info("the index is from another version: rebuilding it from the vault")
        for name in TABLES:
            if name not in existing or stale:
                mode = "overwrite" if name in existing else "create"
                self.db.create_table(name, schema=_tagged(schemas[name], name), mode=mode)
        if "edges" in existing:
            self._drop("edges")  # version 2 kept them in a table of their own
        if "vectors" not in existing:
            self.db.create_table("vectors", schema=_tagged(wanted, "vectors"))
        self._open_three()

    def _open_three(self) -> None:
        self.notes, self.chunks, self.vectors = (
            self.db.open_table(n) for n in ("notes", "chunks", "vectors")
        )

    def reconnect(self) -> None:
        """Go on in a fresh session, at the tables' latest versions: after a compaction (the
        caches still held the files it replaced), and after another process (the daemon's
        bulk-index child) committed."""
        self.session, self.db = self._connect()
        self._open_three()
        self.fts_ready = False  # look again: the child may have built it
        self._no_vectors = None  # and it may have embedded

    def _usable(self, name: str, schema: pa.Schema) -> bool:
        try:
            return not _stale(self.db.open_table(name), schema, name)
        except (OSError, ValueError, RuntimeError):
            return False

    def _drop(self, name: str) -> None:
        try:
            self.db.drop_table(name)
        except (OSError, ValueError, RuntimeError):
            shutil.rmtree(self.directory / "lance" / f"{name}.lance", ignore_errors=True)

    def _copy_old_vectors(self, chunks: Any) -> None:
        """A version 2 store kept vectors in a column of ``chunks``: copied, one row per
        content hash, into ``vectors`` (one commit), before anything rebuilds ``chunks``. A
        crash before that commit leaves the old column to copy from at the next start."""
        field = chunks.schema.field("vector") if "vector" in chunks.schema.names else None
        model = ((field.metadata if field else None) or {}).get(b"model", b"none").decode()
        schema = _tagged(vectors_schema(self.dim), "vectors")
        if field is None or model == "none" or field.type.list_size != self.dim:
            self.db.create_table("vectors", schema=schema)  # nothing usable to copy
            return
        seen: set[str] = set()

        def batches() -> Iterator[pa.RecordBatch]:
            q = chunks.search().where("vector IS NOT NULL").select(["content_hash", "vector"])
            for batch in q.limit(None).to_batches(8192):
                keep = []
                for i, h in enumerate(batch["content_hash"].to_pylist()):
                    if h not in seen:
                        seen.add(h)
                        keep.append(i)
                if keep:
                    picked = batch.take(pa.array(keep))
                    yield pa.RecordBatch.from_arrays(
                        [pa.array([model] * len(keep)), picked["content_hash"],
                         picked["vector"].cast(schema.field("vector").type)], schema=schema,
                    )  # fmt: skip

        reader = pa.RecordBatchReader.from_batches(schema, batches())
        table = self.db.create_table("vectors", data=reader, schema=schema)
        if len(seen):
            table.create_index("content_hash", config=BTree())
        _log.info("copied %d vectors of %s into the vectors table", len(seen), model)

    def _convert_float32_vectors(self) -> bool:
        """A version 3 ``vectors`` table (float32) of this size is rewritten as float16 by one
        overwrite: a crash before its commit leaves the old version to convert at the next
        start. False if the table is not one."""
        try:
            old = self.db.open_table("vectors")
        except (OSError, ValueError, RuntimeError):
            return False  # a copy from version 2 a crash cut short
        if old.schema.field("vector").type != pa.list_(pa.float32(), self.dim):
            return False
        schema = _tagged(vectors_schema(self.dim), "vectors")
        batches = (
            pa.RecordBatch.from_arrays(
                [b["model"], b["content_hash"], b["vector"].cast(schema.field("vector").type)],
                schema=schema,
            )
            for b in old.search().limit(None).to_batches(8192)
        )
        _log.info("converting %d vectors to float16", old.count_rows())
        reader = pa.RecordBatchReader.from_batches(schema, batches)
        table = self.db.create_table("vectors", data=reader, schema=schema, mode="overwrite")
        if table.count_rows():
            table.create_index("content_hash", config=BTree())
        _log.info("converted the vectors to float16")
        return True

    # -- reads ------------------------------------------------------------------------------

    def load_notes(self, share: _Share | None = None) -> dict[str, NoteRecord]:
        return self.load_state(share)[0]

    def load_state(self, share: _Share | None = None) -> tuple[dict[str, NoteRecord], list[Edge]]:
        """Every note record and edge, for the in-memory state, without the links' contexts
        (``stored_links`` reads them). Equal strings are stored once: a path is every edge's
        source or target."""
        share = share if share is not None else _Share()
        notes: dict[str, NoteRecord] = {}
        edges: list[Edge] = []
        for row in _rows(self.notes, skip=["chunk_hashes"]):
            note = _note_from_row(row, share)
            notes[note.path] = note
            edges += (
                _edge_from_list(note.path, e, share) for e in json.loads(row["edges"] or "[]")
            )
        return notes, edges

    def stored_links(self, paths: Iterable[str]) -> dict[str, list[LinkRef]]:
        """These notes' links as their rows hold them, contexts included (a few rows found by
        path, or for many the whole column, filtered before it becomes Python objects)."""
        wanted = sorted(set(paths))
        if not wanted:
            return {}
        q = native(self.notes).query().select(["path", "links"])
        if len(wanted) <= 500:
            q = q.where(_in_list("path", wanted))
        got = read(q.to_arrow())
        if len(wanted) > 500:
            got = got.filter(pc.is_in(got["path"], value_set=pa.array(wanted)))
        share = _Share()
        return {
            p: [_link_from_list(x, share) for x in json.loads(links or "[]")]
            for p, links in zip(got["path"].to_pylist(), got["links"].to_pylist(), strict=True)
        }

    def chunk_keys(self) -> pa.Table:
        """``chunk_id``, ``path``, ``seq``, ``content_hash`` and the lines of every chunk."""
        q = self.chunks.search().select(["chunk_id", "path", "seq", "content_hash", "start_line",
                                         "end_line"])  # fmt: skip
        return q.limit(None).to_arrow()

    def drifted(self, keys: pa.Table | None = None) -> list[str]:
        """Notes whose chunk rows are not the chunks their row lists (a crash between writing
        the one and the other), and chunk rows of no note. ``keys``: ``chunk_keys()``, if
        the caller has read them."""
        listed = self.notes.search().select(["path", "chunk_hashes"]).limit(None).to_arrow()
        want = dict(zip(listed["path"].to_pylist(), listed["chunk_hashes"].to_pylist(),
                        strict=True))  # fmt: skip
        keys = (self.chunk_keys() if keys is None else keys).sort_by(
            [("path", "ascending"), ("seq", "ascending")]
        )
        have: dict[str, list[str]] = {}
        for path, h in zip(keys["path"].to_pylist(), keys["content_hash"].to_pylist(), strict=True):
            have.setdefault(path, []).append(h)
        return sorted(
            p
            for p in want.keys() | have.keys()
            if (want.get(p) or []) != have.get(p, []) or p not in want
        )

    def cache_bytes(self) -> int:
        """What LanceDB's caches hold now."""
        return int(self.session.size_bytes)

    def count(self, table: str) -> int:
        return int(getattr(self, table).count_rows())

    # -- vectors ----------------------------------------------------------------------------

    def vector_batches(self, model: str, rows: int = 8192) -> Iterator[tuple[pa.Array, Vectors]]:
        """Every stored vector of this model, a batch at a time: (hashes, matrix)."""
        q = self.vectors.search().where(f"model = {sql_str(model)}")
        for batch in q.select(["content_hash", "vector"]).limit(None).to_batches(rows):
            yield batch["content_hash"], _matrix(batch["vector"], self.dim)

    def find_vectors(self, model: str, hashes: Sequence[str]) -> tuple[list[str], Vectors]:
        """The stored vectors of these hashes (those there are), through the hash B-tree;
        an empty table (an index without embeddings) is not searched."""
        found: list[str] = []
        parts: list[Vectors] = []
        if self._no_vectors is None:
            self._no_vectors = self.vectors.count_rows() == 0
        for batch in _batches(hashes if not self._no_vectors else (), 1000):
            where = f"model = {sql_str(model)} AND {_in_list('content_hash', batch)}"
            q = native(self.vectors).query().where(where).select(["content_hash", "vector"])
            got = read(q.to_arrow())
            found += got["content_hash"].to_pylist()
            parts.append(_matrix(got["vector"], self.dim))
        return found, np.concatenate(parts) if parts else np.zeros((0, self.dim), np.float32)

    def add_vectors(self, model: str, hashes: Sequence[str], vectors: Vectors) -> None:
        """One append: nothing else in the store is rewritten."""
        if not hashes:
            return
        column = pa.FixedSizeListArray.from_arrays(
            pa.array(np.ascontiguousarray(vectors, np.float16).ravel()), self.dim
        )
        batch = pa.table({"model": [model] * len(hashes), "content_hash": list(hashes),
                          "vector": column}, schema=vectors_schema(self.dim))  # fmt: skip
        self._no_vectors = False
        self.vectors.add(batch)

    def drop_unused_vectors(self) -> int:
        """Delete the vectors of hashes no chunk has any more (of every model); how many."""
        used = self.chunks.search().select(["content_hash"]).limit(None).to_arrow()["content_hash"]
        stored = self.vectors.search().select(["content_hash"]).limit(None).to_arrow()
        unused = pc.filter(stored["content_hash"], pc.invert(pc.is_in(stored["content_hash"],
                                                                        value_set=used)))  # fmt: skip
        gone = sorted(set(unused.to_pylist()))
        for batch in _batches(gone, 500):
            self.vectors.delete(_in_list("content_hash", batch))
        return len(gone)

    # -- writes -----------------------------------------------------------------------------

    def put_chunks(
        self,
        chunks: Sequence[Chunk],
        replacing: Sequence[str],
        gone: Sequence[str],
        known: Mapping[str, Sequence[ChunkKey]] | None = None,
    ) -> None:
        """``chunks`` become the chunk rows of their notes: rows of the ``replacing`` notes
        that stay as they were (text, lines and place) are not rewritten, the others are
        deleted; ``gone`` notes lose all of theirs. Then one delete and one add.

        ``known``: the keys (``ChunkKey``) of each replacing note's rows, when the caller holds
        them (the vector index does): a save then reads nothing. Otherwise the old rows are
        read, 500 notes at a time. Not a ``merge_insert`` on the chunk id: LanceDB joins the
        whole table on the key, slower than the delete and the add (docs/benchmarks.md)."""
        old: dict[str, ChunkKey] = {}
        if known is not None and known.keys() >= set(replacing):
            old = {k[0]: k for p in replacing for k in known[p]}
        else:
            for batch in _batches(replacing, 500):
                q = native(self.chunks).query().where(_in_list("path", batch)).select(list(KEPT))
                got = read(q.to_arrow()).to_pydict()
                old.update(zip(got["chunk_id"], zip(*(got[c] for c in KEPT), strict=True),
                               strict=True))  # fmt: skip
        same = {c.chunk_id for c in chunks if old.get(c.chunk_id) == c.key}
        self._delete_chunks([cid for cid in old if cid not in same], gone)
        rows = [_chunk_row(c) for c in chunks if c.chunk_id not in same]
        if rows:
            self.chunks.add(pa.Table.from_pylist(rows, CHUNKS_SCHEMA))

    def _delete_chunks(self, ids: list[str], notes: Sequence[str]) -> None:
        for some, paths in _pairs(ids, list(notes)):
            self.chunks.delete(" OR ".join(x for x in (some and _in_list("chunk_id", some),
                                                       paths and _in_list("path", paths)) if x))  # fmt: skip

    def put_notes(
        self,
        records: Sequence[NoteRecord],
        edges: Mapping[str, Sequence[Edge]],
        parsed: Mapping[str, ParsedNote],
        replacing: Sequence[str],
        gone: Sequence[str] = (),
    ) -> None:
        """Write these notes' rows, with their edges, their links with contexts and their
        chunk hashes, from ``parsed`` or else read back from their old rows (a note rewired or
        touched keeps its text, and the records keep no contexts); ``replacing`` are the
        notes that have a row already; ``gone`` notes lose theirs."""
        kept = self._kept([r.path for r in records if r.path not in parsed])
        rows = []
        for r in records:
            note = parsed.get(r.path)
            hashes, links = (
                ([c.content_hash for c in note.chunks], _links_json(note.links))
                if note is not None
                else kept.get(r.path, ([], _links_json(r.links)))
            )
            rows.append(_note_row(r, edges.get(r.path, ()), hashes, links))
        old = set(replacing)
        if not gone and len(rows) == 1 and rows[0]["path"] in old and _small(rows[0]):
            where = f"path = {sql_str(rows[0]['path'])}"
            # an empty list cannot be written as an SQL literal: NULL, read back as empty
            values = {k: None if v == [] else v for k, v in rows[0].items()}
            if self.notes.update(where=where, values=values).rows_updated:
                return
        for batch in _batches([*gone, *(r["path"] for r in rows if r["path"] in old)], 500):
            self.notes.delete(_in_list("path", batch))
        if rows:
            self.notes.add(pa.Table.from_pylist(rows, NOTES_SCHEMA))

    def _kept(self, paths: Sequence[str]) -> dict[str, tuple[list[str], str]]:
        """The chunk hashes and the links (as stored) of these notes' rows."""
        out: dict[str, tuple[list[str], str]] = {}
        for batch in _batches(paths, 500):
            q = self.notes.search().where(_in_list("path", batch))
            for r in q.select(["path", "chunk_hashes", "links"]).limit(None).to_list():
                out[r["path"]] = (r["chunk_hashes"] or [], r["links"] or "[]")
        return out

    def delete_notes(self, paths: Sequence[str]) -> None:
        for batch in _batches(paths, 500):
            self.chunks.delete(_in_list("path", batch))
            self.notes.delete(_in_list("path", batch))

    def optimize(self, keep: dt.timedelta) -> None:
        """Compact every table, fold new rows into its indexes and delete the files of
        versions older than ``keep`` (a query reads the version it started on). Under the
        index lock: a first search building the FTS index on a query thread while this
        rewrote the table failed with a commit conflict (the full-disk test)."""
        with self.index_lock:
            if self.vectors.count_rows() and not self.vectors.list_indices():
                self.vectors.create_index("content_hash", config=BTree())  # for ``find_vectors``
            if self.notes.count_rows() and not self.notes.list_indices():
                self.notes.create_index("path", config=BTree())  # rows read by path, per query
            for table in (self.notes, self.chunks, self.vectors):
                table.optimize(cleanup_older_than=keep)

    def compact_chunks(self, keep: dt.timedelta, give_way: Callable[[], bool]) -> bool:
        """Compact the chunks table (each save adds a fragment, and every search, read by id
        and delete pays for each one), but stop as soon as ``give_way()`` says something else
        wants the writer or the cores: LanceDB's optimize rewrites the whole table (0.3-1 s
        at 1k-10k notes) and cannot be told to take only the small fragments. Stopped, it
        commits nothing more; the next quiet moment starts again. True if it ran to the end."""
        with self.index_lock:
            done: concurrent.futures.Future[bool] = concurrent.futures.Future()

            async def start() -> asyncio.Future[Any]:
                job: asyncio.Future[Any] = asyncio.ensure_future(
                    native(self.chunks).optimize(cleanup_older_than=keep)
                )
                job.add_done_callback(lambda j: _settle(done, j))
                return job

            job = asyncio.run_coroutine_threadsafe(start(), LOOP.loop).result()
            while True:
                if give_way():
                    LOOP.loop.call_soon_threadsafe(job.cancel)
                with contextlib.suppress(concurrent.futures.TimeoutError):
                    ran = done.result(timeout=GIVE_WAY_POLL_S)
                    self.chunks.checkout_latest()  # what a stopped one committed, if anything
                    return ran


def _settle(done: concurrent.futures.Future[bool], job: asyncio.Future[Any]) -> None:
    """``done`` says how ``job`` ended: True, False when stopped, or its error."""
    if job.cancelled():
        done.set_result(False)
    elif (error := job.exception()) is not None:
        done.set_exception(error)
    else:
        done.set_result(True)


def _tagged(schema: pa.Schema, table: str) -> pa.Schema:
    return schema.with_metadata({b"schema_version": SCHEMA_VERSION[table].encode()})


def _stale(table: Any, schema: pa.Schema, name: str) -> bool:
    meta = table.schema.metadata or {}
    same = table.schema.remove_metadata().equals(schema.remove_metadata())
    return meta.get(b"schema_version") != SCHEMA_VERSION[name].encode() or not same


def _matrix(column: Any, dim: int) -> Vectors:
    if len(column) == 0:
        return np.zeros((0, dim), np.float32)
    flat = (
        column.combine_chunks().flatten()
        if isinstance(column, pa.ChunkedArray)
        else column.flatten()
    )
    return np.asarray(flat.to_numpy(zero_copy_only=False), np.float32).reshape(len(column), dim)


def _small(row: dict[str, Any]) -> bool:
    return sum(len(v) for v in row.values() if isinstance(v, str)) < UPDATE_ROW_BYTES


def _pairs(ids: list[str], paths: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """Up to 500 chunk ids and 500 paths at a time, for one delete each."""
    for i in range(0, max(len(ids), len(paths)), 500):
        yield ids[i : i + 500], paths[i : i + 500]


def _rows(table: Any, skip: Sequence[str] = (), batch_rows: int = 2048) -> Iterator[dict[str, Any]]:
    """Every row of a table, streamed: reading a whole table first held all of it in Arrow
    buffers beside the Python objects made from it (the notes table is ~170 MB at 100k)."""
    columns = [n for n in table.schema.names if n not in skip]
    for batch in table.search().select(columns).limit(None).to_batches(batch_rows):
        yield from batch.to_pylist()


def _batches(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    items = list(items)
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _note_row(
    n: NoteRecord, edges: Iterable[Edge], hashes: Iterable[str], links: str
) -> dict[str, Any]:
    return {
        "path": n.path,
        "title": n.title,
        "content_hash": n.content_hash,
        "mtime_ns": n.mtime_ns,
        "size": n.size,
        "note_id": n.note_id,
        "aliases": list(n.aliases),
        "tags": list(n.tags),
        "frontmatter": json.dumps(n.frontmatter, ensure_ascii=False),
        "frontmatter_error": n.frontmatter_error,
        "headings": json.dumps([[h.level, h.text, h.line] for h in n.headings], ensure_ascii=False),
        "block_ids": list(n.block_ids),
        "links": links,
        "edges": json.dumps([_edge_list(e) for e in edges], ensure_ascii=False),
        "chunk_hashes": list(hashes),
        "chunk_count": n.chunk_count,
        "line_count": n.line_count,
        "warning": n.warning,
    }


def _link_from_list(x: list[Any], share: _Share, context: bool = True) -> LinkRef:
    """A stored link (rows written before links had columns have ten fields); without its
    context for the in-memory records."""
    t, a, r, text, label, w, e, m, line, ctx, *c = x
    return LinkRef(share(t), share(a), share(r), share(text), share(label), w, e, m, line,
                   ctx if context else "", *c)  # fmt: skip


def _links_json(links: Iterable[LinkRef]) -> str:
    return json.dumps([[x.target, x.anchor, x.relation, x.text, x.label, x.wikilink, x.embed,
                        x.markdown, x.line, x.context, x.start, x.end] for x in links],
                      ensure_ascii=False)  # fmt: skip


class _Share(dict[str, str]):
    """``share(s)`` returns the first string equal to ``s`` seen by this table."""

    def __call__(self, s: S) -> S:
        return cast(S, self.setdefault(s, s))

    def opt(self, s: str | None) -> str | None:
        return None if s is None else self.setdefault(s, s)

    def deep(self, value: Any) -> Any:
        """A JSON value with its strings shared: frontmatter repeats its keys in every note and
        mostly the same values (at 10k generated notes 21k keys of 7 names and 16k string
        values, 974 distinct: ~2 MB as separate objects)."""
        if isinstance(value, str):
            return self.setdefault(value, value)
        if isinstance(value, list):
            return [self.deep(v) for v in value]
        if isinstance(value, dict):
            return {self.setdefault(k, k): self.deep(v) for k, v in value.items()}
        return value


def _note_from_row(row: dict[str, Any], share: _Share) -> NoteRecord:
    return NoteRecord(
        path=share(row["path"]),
        title=row["title"],
        content_hash=row["content_hash"],
        mtime_ns=row["mtime_ns"],
        size=row["size"],
        note_id=row["note_id"],
        aliases=tuple(map(share, row["aliases"] or ())),
        tags=tuple(map(share, row["tags"] or ())),
        frontmatter=share.deep(json.loads(row["frontmatter"] or "{}")),
        frontmatter_error=row["frontmatter_error"],
        headings=tuple(
            Heading(h[0], share(h[1]), h[2]) for h in json.loads(row["headings"] or "[]")
        ),
        block_ids=tuple(row["block_ids"] or ()),
        links=tuple(
            _link_from_list(x, share, context=False) for x in json.loads(row["links"] or "[]")
        ),
        chunk_count=row["chunk_count"],
        line_count=row["line_count"],
        warning=row["warning"],
    )


def _chunk_row(c: Chunk) -> dict[str, Any]:
    return {
        "chunk_id": c.chunk_id,
        "path": c.path,
        "seq": c.seq,
        "heading": c.heading,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "text": c.text,
        "content_hash": c.content_hash,
        "search_text": c.embed_text,
    }


def _edge_list(e: Edge) -> list[Any]:
    """An edge in its source's row (the source is the row's). The "" is where the edge's
    context was (its links hold it): an older version of the daemon still reads the row."""
    return [e.target, e.raw, e.relation, e.text, e.wikilink, e.embed, e.line, e.anchor, "",
            e.state, list(e.candidates)]  # fmt: skip


def _edge_from_list(source: str, e: list[Any], share: _Share) -> Edge:
    target, raw, relation, text, wikilink, embed, line, anchor, _, state, candidates = e
    return Edge(
        source, share.opt(target), share(raw), share(relation), share(text), wikilink, embed,
        line, share(anchor), share(state), tuple(map(share, candidates)),
    )  # fmt: skip
