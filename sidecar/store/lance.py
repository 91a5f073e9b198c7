"""The LanceDB index: ``notes``, ``chunks`` and ``edges`` tables, written by one process.

Each write replaces whole notes (delete their rows, add the new ones): measured at 15-23 ms for
~10 rows at 50k rows, far cheaper than ``merge_insert``. Every write adds a fragment, so the
owner calls ``optimize()`` when idle. Schema version and embedding model live in the tables'
schema metadata; a different schema version drops and rebuilds the index (the vault is the
source of truth, so nothing is lost).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa

from sidecar.core.markdown import slugify
from sidecar.core.model import Chunk, Edge, Heading, LinkRef, NoteRecord
from sidecar.errors import StoreError

SCHEMA_VERSION = "2"

# LanceDB's caches (manifests and file metadata; index pages) are unbounded in practice
# (defaults: 1 GiB and 6 GiB) and keep entries for every table version a long-running writer
# makes: on a 10k-note vault they held 19 MiB after one cold index, 2 MiB after a restart, and
# grew ~3 MiB with each compaction and a few searches after it. Bounded, the least recently
# used entries go; ``index.status`` shows what they hold (``store_cache_mib``).
METADATA_CACHE_BYTES = 64 << 20
INDEX_CACHE_BYTES = 128 << 20

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
        pa.field("chunk_count", pa.int32()),
        pa.field("line_count", pa.int32()),
        pa.field("warning", pa.string()),
    ]
)

EDGES_SCHEMA = pa.schema(
    [
        pa.field("source", pa.string(), nullable=False),
        pa.field("target", pa.string()),
        pa.field("raw", pa.string()),
        pa.field("relation", pa.string()),
        pa.field("text", pa.string()),
        pa.field("wikilink", pa.bool_()),
        pa.field("embed", pa.bool_()),
        pa.field("line", pa.int32()),
        pa.field("anchor", pa.string()),
        pa.field("context", pa.string()),
        pa.field("state", pa.string()),
        pa.field("candidates", pa.list_(pa.string())),
    ]
)


def chunks_schema(dim: int) -> pa.Schema:
    return pa.schema(
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
            pa.field("vector", pa.list_(pa.float32(), dim), nullable=True),
        ]
    )


def sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _in_list(column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"


def pending_filter(paths: Sequence[str] | None = None) -> str:
    """Chunks without a vector, in every note or in these (found through the path B-tree
    first: across all notes the filter scans the whole vector column)."""
    return "vector IS NULL" if paths is None else _in_list("path", paths) + " AND vector IS NULL"


class IndexStore:
    """Narrow, synchronous access to the three tables. Not thread-safe: one writer owns it."""

    def __init__(self, directory: Path, dim: int = 384) -> None:
        self.index_lock = threading.Lock()  # serialises on-demand index creation
        self.fts_ready = False  # the chunks table's FTS index exists (tables live as long as we)
        self.directory = directory
        self.dim = dim
        self.rebuilt = False
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.session, self.db = self._connect()
            schemas = {"notes": NOTES_SCHEMA, "edges": EDGES_SCHEMA, "chunks": chunks_schema(dim)}
            existing = set(self.db.list_tables().tables)
            # One table in an old shape means the index as a whole is from another version or
            # model size: rebuild all three together (the vault is the source of truth).
            stale = any(self._stale(n, sc) for n, sc in schemas.items() if n in existing)
            self.rebuilt = stale
            tables = {
                name: self._open(name, schema, stale, existing) for name, schema in schemas.items()
            }
        except (OSError, ValueError, RuntimeError) as exc:
            raise StoreError(f"cannot open the index at {directory}: {exc}") from exc
        self.notes, self.edges, self.chunks = tables["notes"], tables["edges"], tables["chunks"]

    def _connect(self) -> tuple[Any, Any]:
        session = lancedb.Session(
            index_cache_size_bytes=INDEX_CACHE_BYTES,
            metadata_cache_size_bytes=METADATA_CACHE_BYTES,
        )
        return session, lancedb.connect(str(self.directory / "lance"), session=session)

    def reopen(self) -> None:
        """Open the three tables again in a new session, leaving LanceDB's caches behind.

        A long burst of commits (a cold embedding) fills them with entries for versions no
        query will read again. At 100k notes they held 229 MiB after the cold start and 35 MiB
        after a restart. The old session is freed once no running query holds its tables;
        anything else opened through ``db`` (the memory table) must be reopened too.
        """
        try:
            session, db = self._connect()
            notes, edges, chunks = (db.open_table(n) for n in ("notes", "edges", "chunks"))
        except (OSError, ValueError, RuntimeError) as exc:
            raise StoreError(f"cannot reopen the index at {self.directory}: {exc}") from exc
        self.session, self.db = session, db
        self.notes, self.edges, self.chunks = notes, edges, chunks

    def _open(self, name: str, schema: pa.Schema, stale: bool, existing: set[str]) -> Any:
        if name not in existing:
            return self.db.create_table(name, schema=self._tagged(schema))
        if stale:
            return self.db.create_table(name, schema=self._tagged(schema), mode="overwrite")
        return self.db.open_table(name)

    @staticmethod
    def _tagged(schema: pa.Schema) -> pa.Schema:
        return schema.with_metadata({b"schema_version": SCHEMA_VERSION.encode()})

    def _stale(self, name: str, schema: pa.Schema) -> bool:
        table = self.db.open_table(name)
        meta = table.schema.metadata or {}
        same = table.schema.remove_metadata().equals(schema.remove_metadata())
        return meta.get(b"schema_version") != SCHEMA_VERSION.encode() or not same

    # -- reads ------------------------------------------------------------------------------

    def load_notes(self, share: _Share | None = None) -> dict[str, NoteRecord]:
        share = share if share is not None else _Share()
        notes: dict[str, NoteRecord] = {}
        for row in _rows(self.notes):
            note = _note_from_row(row, share)
            notes[note.path] = note
        return notes

    def load_state(self) -> tuple[dict[str, NoteRecord], list[Edge]]:
        """Every note record and edge, for the in-memory state.

        Equal strings are stored once: a path is every edge's source or target, a line's text
        is both a link's and its edge's context. On a generated 10k-note vault this took the
        state from 100 MB of Python objects to 57 MB (tracemalloc).
        """
        share = _Share()
        notes = self.load_notes(share)
        edges = [_edge_from_row(row, share) for row in _rows(self.edges)]
        return notes, edges

    def chunk_vectors(self, paths: Sequence[str]) -> dict[str, list[float]]:
        """Existing vectors of these notes' chunks, by content hash, to carry over unchanged."""
        if not paths:
            return {}
        out: dict[str, list[float]] = {}
        for batch in _batches(paths, 500):
            table = (
                self.chunks.search()
                .where(_in_list("path", batch) + " AND vector IS NOT NULL")
                .select(["content_hash", "vector"])
                .limit(None)
                .to_arrow()
            )
            for h, v in zip(
                table["content_hash"].to_pylist(), table["vector"].to_pylist(), strict=True
            ):
                out[h] = v
        return out

    def cache_bytes(self) -> int:
        """What LanceDB's caches hold now."""
        return int(self.session.size_bytes)

    def count(self, table: str) -> int:
        return int(getattr(self, table).count_rows())

    @property
    def model_id(self) -> str:
        """The model whose vectors the chunks table holds ("none" before any embedding)."""
        meta = self.chunks.schema.field("vector").metadata or {}
        return str(meta.get(b"model", b"none").decode())

    def set_model(self, model_id: str) -> bool:
        """Record the embedding model; a different one than before clears every vector."""
        if model_id == self.model_id:
            return False
        self.chunks.update(where="vector IS NOT NULL", values={"vector": None})
        self.chunks.update_field_metadata({"path": "vector", "metadata": {"model": model_id}})
        return True

    def count_pending(self, paths: Sequence[str] | None = None) -> int:
        """Chunks still waiting for a vector (in every note, or in these)."""
        if paths is not None and not paths:
            return 0
        return int(self.chunks.count_rows(pending_filter(paths)))

    # -- writes -----------------------------------------------------------------------------

    def delete_notes(self, paths: Sequence[str]) -> None:
        for batch in _batches(paths, 500):
            self.notes.delete(_in_list("path", batch))
            self.chunks.delete(_in_list("path", batch))
            self.edges.delete(_in_list("source", batch))

    def drop_note_rows(self, paths: Sequence[str]) -> None:
        """Remove only the notes rows: the first step of rewriting a note (see ``Indexer``)."""
        for batch in _batches(paths, 500):
            self.notes.delete(_in_list("path", batch))

    def row_paths(self) -> tuple[Counter[str], Counter[str]]:
        """Rows per note path in the chunks table and per source in the edges table."""
        chunks = self.chunks.search().select(["path"]).limit(None).to_arrow()
        edges = self.edges.search().select(["source"]).limit(None).to_arrow()
        return Counter(chunks["path"].to_pylist()), Counter(edges["source"].to_pylist())

    def drop_orphans(self) -> list[str]:
        """Delete chunk and edge rows of notes that have no notes row (left by a crash between
        dropping a note's row and rewriting its other rows); returns their paths."""
        known = set(self.notes.search().select(["path"]).limit(None).to_arrow()["path"].to_pylist())
        chunks, edges = self.row_paths()
        orphans = sorted((set(chunks) | set(edges)) - known)
        for batch in _batches(orphans, 500):
            self.chunks.delete(_in_list("path", batch))
            self.edges.delete(_in_list("source", batch))
        return orphans

    def put_notes(self, notes: Sequence[NoteRecord]) -> None:
        if not notes:
            return
        for batch in _batches([n.path for n in notes], 500):
            self.notes.delete(_in_list("path", batch))
        self.notes.add(pa.Table.from_pylist([_note_row(n) for n in notes], NOTES_SCHEMA))

    def put_chunks(
        self, paths: Sequence[str], chunks: Iterable[Chunk], vectors: dict[str, list[float]]
    ) -> None:
        for batch in _batches(paths, 500):
            self.chunks.delete(_in_list("path", batch))
        rows = [_chunk_row(c, vectors.get(c.content_hash)) for c in chunks]
        if rows:
            self.chunks.add(pa.Table.from_pylist(rows, chunks_schema(self.dim)))

    def put_edges(self, sources: Sequence[str], edges: Iterable[Edge]) -> None:
        for batch in _batches(sources, 500):
            self.edges.delete(_in_list("source", batch))
        rows = [_edge_row(e) for e in edges]
        if rows:
            self.edges.add(pa.Table.from_pylist(rows, EDGES_SCHEMA))

    def refresh(self) -> None:
        """See what another process (the daemon's bulk-index child) committed meanwhile."""
        self.see_latest()
        self.fts_ready = False  # look again: the child may have built it

    def see_latest(self) -> None:
        """Read the tables' newest versions (another process wrote: the backlog child)."""
        for table in (self.notes, self.chunks, self.edges):
            table.checkout_latest()

    def optimize(self, keep: dt.timedelta = dt.timedelta(minutes=10)) -> None:
        # Under the index lock: a first search building the FTS index on a query thread
        # while this rewrote the table failed with a commit conflict (the full-disk test).
        with self.index_lock:
            for table in (self.notes, self.chunks, self.edges):
                table.optimize(cleanup_older_than=keep)


def _rows(table: Any, batch_rows: int = 2048) -> Iterator[dict[str, Any]]:
    """Every row of a table, streamed: reading a whole table first held all of it in Arrow
    buffers beside the Python objects made from it (the notes table is ~170 MB at 100k)."""
    for batch in table.search().limit(None).to_batches(batch_rows):
        yield from batch.to_pylist()


def _batches(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    items = list(items)
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _note_row(n: NoteRecord) -> dict[str, Any]:
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
        # the slug stays in the stored shape (older versions read it), not in memory
        "headings": json.dumps([[h.level, h.text, h.line, slugify(h.text)] for h in n.headings]),
        "block_ids": list(n.block_ids),
        "links": json.dumps([_link_list(link) for link in n.links], ensure_ascii=False),
        "chunk_count": n.chunk_count,
        "line_count": n.line_count,
        "warning": n.warning,
    }


def _link_list(link: LinkRef) -> list[Any]:
    return [link.target, link.anchor, link.relation, link.text, link.label, link.wikilink,
            link.embed, link.markdown, link.line, link.context]  # fmt: skip


class _Share(dict[str, str]):
    """``share(s)`` returns the first string equal to ``s`` seen by this table."""

    def __call__(self, s: str) -> str:
        return self.setdefault(s, s)

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
        headings=tuple(Heading(h[0], h[1], h[2]) for h in json.loads(row["headings"] or "[]")),
        block_ids=tuple(row["block_ids"] or ()),
        links=tuple(
            LinkRef(share(t), share(a), share(r), share(x), share(lb), w, e, m, line, share(ctx))
            for t, a, r, x, lb, w, e, m, line, ctx in json.loads(row["links"] or "[]")
        ),
        chunk_count=row["chunk_count"],
        line_count=row["line_count"],
        warning=row["warning"],
    )


def _chunk_row(c: Chunk, vector: list[float] | None) -> dict[str, Any]:
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
        "vector": vector,
    }


def _edge_row(e: Edge) -> dict[str, Any]:
    return {
        "source": e.source,
        "target": e.target,
        "raw": e.raw,
        "relation": e.relation,
        "text": e.text,
        "wikilink": e.wikilink,
        "embed": e.embed,
        "line": e.line,
        "anchor": e.anchor,
        "context": e.context,
        "state": e.state,
        "candidates": list(e.candidates),
    }


def _edge_from_row(row: dict[str, Any], share: _Share) -> Edge:
    return Edge(
        share(row["source"]), share.opt(row["target"]), share(row["raw"]), share(row["relation"]),
        share(row["text"]), row["wikilink"], row["embed"], row["line"], share(row["anchor"]),
        share(row["context"]), row["state"], tuple(map(share, row["candidates"] or ())),
    )  # fmt: skip
