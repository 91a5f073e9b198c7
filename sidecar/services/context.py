"""The open index of one vault: store, state, indexer and queries, wired from plain values.

Whoever holds a ``Services`` holds the writer lock: the daemon for its lifetime, or a CLI command
when no daemon runs. It is built once, by ``open`` (or ``from_settings``, the one place that
reads configuration for it), with everything it needs.
"""

from __future__ import annotations

import datetime as dt
import errno
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidecar.config import Settings, model_cache_dir
from sidecar.core.chunks import ChunkOptions
from sidecar.core.model import Edge, NoteRecord
from sidecar.core.note import parsed_by
from sidecar.embed import Embedder, load_embedder
from sidecar.errors import StorageUnavailable, StoreError, VaultNotFound, unwritable_folder
from sidecar.services.embedding import EmbedStage
from sidecar.services.graphq import GraphQueries
from sidecar.services.indexer import Indexer, IndexReport, Progress, Searchable
from sidecar.services.memory import MemoryService, memory_dir, memory_ignores
from sidecar.services.relevance import Relevance
from sidecar.services.search import SearchService
from sidecar.services.state import IndexState
from sidecar.store.chunk_search import ensure_fts_index
from sidecar.store.files import Beneath, private_data_dir, read_json, write_json
from sidecar.store.lance import IndexStore
from sidecar.store.lock import WriterLock
from sidecar.store.vaultfs import Vault
from sidecar.store.vectors import VectorIndex

Clock = Callable[[], dt.datetime]
_log = logging.getLogger("sidecar.index")

# Compaction deletes the files of table versions older than this. A query reads the version
# that was newest when it started, and the daemon compacts only after its idle time without
# writes (``daemon.compact_idle_seconds``), so keep must exceed that by what a query can take.
RETAIN_BEYOND_IDLE = dt.timedelta(minutes=1)

DATA_DIR_SETTING = (
    "set SIDECAR_DATA_DIR, or index.data_dir in the vault's .sidecar/config.toml, to a folder "
    "you can write"
)
UNWRITABLE = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT}
# what ``open`` reads back from meta.json (``last_indexed`` is only shown)
READ_AT_START = ("failures", "parsed_by", "vault")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _read_index(
    store: IndexStore, vectors: VectorIndex, model: str
) -> tuple[dict[str, NoteRecord], list[Edge]]:
    """What a start reads: every note's record and edges, and the vector index from the
    stored vectors. A note a crash left half-written (its row and its chunk rows disagree) is
    dropped first, to be read again. One read of the chunk keys serves both."""
    keys = store.chunk_keys()
    drifted = store.drifted(keys)
    if drifted:
        _log.info("%d notes to index again (left half-written)", len(drifted))
        store.delete_notes(drifted)
        keys = store.chunk_keys()
    notes, edges = store.load_state()

    def same(path: str) -> str:  # the note's own path string: one per note for the whole index
        note = notes.get(path)
        return path if note is None else note.path

    vectors.load(keys, store.vector_batches(model), same)
    return notes, edges


@dataclass
class Services:
    vault: Vault
    data_dir: Path
    store: IndexStore
    state: IndexState
    indexer: Indexer
    graph: GraphQueries
    lock: WriterLock
    embedder: Embedder
    vectors: VectorIndex
    embed_stage: EmbedStage
    search: SearchService
    memory: MemoryService  # memory entries and reminders (DESIGN 6)
    files: Beneath  # the data dir's own files (meta.json, lint-last.json)
    clock: Clock = utcnow
    meta: dict[str, Any] = field(default_factory=dict)
    settings: Settings | None = None  # the vault's settings, for methods that read rules
    # set by an interactive caller: a stage ("parse", "embed") -> the callable drawing its bar
    progress: Callable[[str], Progress] | None = None
    runtime: dict[str, Any] | None = None  # the daemon's own facts, shown by index.status
    retain: dt.timedelta = dt.timedelta(seconds=60) + RETAIN_BEYOND_IDLE
    relevance: Relevance = field(default_factory=Relevance)  # what recall's gate measured
    _meta_unsaved: bool = False  # ``meta`` holds a newer ``last_indexed`` than meta.json

    @classmethod
    def open(
        cls,
        vault_root: Path,
        data_dir: Path,
        *,
        ignore: list[str] | None = None,
        max_file_bytes: int = 5_000_000,
        chunk_options: ChunkOptions = ChunkOptions(),
        embedder: Embedder | None = None,
        clock: Clock = utcnow,
        memory_folder: Path | None = None,
        **wiring: Any,
    ) -> Services:
        """Open (or create) the index; ``embedder`` defaults to the local MiniLM model, which
        is only loaded when something is embedded. ``wiring``: ``settings``, ``progress``,
        ``runtime``, ``retain`` (see the fields)."""
        embedder = embedder or load_embedder("minilm")
        files = private_data_dir(data_dir)
        lock = WriterLock(data_dir / "writer.lock", files).acquire()
        memory_folder = memory_folder or memory_dir(vault_root)
        try:
            ignore = [*(ignore or []), *memory_ignores(vault_root, memory_folder)]
            vault = Vault(vault_root, ignore, max_file_bytes)
            if removed := vault.remove_stray_temps():
                _log.info("removed %d temp files a crash left among the notes", removed)
            store = IndexStore(data_dir, dim=embedder.dim)
            vectors = VectorIndex(embedder.dim)
            state = IndexState(*_read_index(store, vectors, embedder.model_id))
            memory = MemoryService.open(memory_folder, store.db, embedder, clock, state, vault_root)
        except BaseException:
            lock.release()
            raise
        indexer = Indexer(vault, store, state, chunk_options, vectors.chunk_keys)
        meta = read_json(files, "meta.json", {})
        indexer.failures = dict(meta.get("failures", {}))
        indexer.stale = meta.get("parsed_by") != parsed_by(chunk_options)
        graph = GraphQueries(state, store, vault.root)
        stage = EmbedStage(store, vectors, embedder)
        search = SearchService(store, state, vectors, lambda: embedder, clock)
        return cls(vault, data_dir, store, state, indexer, graph, lock, embedder, vectors,
                   stage, search, memory, files, clock, meta, **wiring)  # fmt: skip

    @classmethod
    def from_settings(
        cls,
        s: Settings,
        *,
        progress: Callable[[str], Progress] | None = None,
        runtime: dict[str, Any] | None = None,
    ) -> Services:
        """The vault's index as its settings describe it (the daemon's and the CLI's); a data
        dir we cannot write is one line naming it and the setting that moves it, not a
        traceback from deep in the store."""
        try:
            return cls._from_settings(s, progress, runtime)
        except (OSError, StoreError) as exc:
            cause = exc if isinstance(exc, OSError) else exc.__cause__
            if isinstance(exc, StorageUnavailable) or not isinstance(cause, OSError):
                raise
            if cause.errno not in UNWRITABLE:
                raise
            raise unwritable_folder(
                cause, "the index folder", s.data_dir, DATA_DIR_SETTING
            ) from exc

    @classmethod
    def _from_settings(
        cls,
        s: Settings,
        progress: Callable[[str], Progress] | None,
        runtime: dict[str, Any] | None,
    ) -> Services:
        embedder = load_embedder(
            str(s["embed.model"]),
            batch_size=int(s["embed.batch_size"]),
            threads=int(s["embed.threads"]),
            cache_dir=model_cache_dir(os.environ),
        )
        idle = dt.timedelta(seconds=int(s["daemon.compact_idle_seconds"]))
        return cls.open(
            s.vault,
            s.data_dir,
            ignore=list(s["index.ignore"]),
            memory_folder=memory_dir(s.vault, str(s["memory.folder"])),
            max_file_bytes=int(s["index.max_file_bytes"]),
            chunk_options=ChunkOptions(int(s["chunk.max_chars"]), int(s["chunk.overlap_chars"])),
            embedder=embedder,
            settings=s,
            progress=progress,
            runtime=runtime,
            retain=idle + RETAIN_BEYOND_IDLE,
        )

    def reconfigure(self, settings: Settings) -> None:
        """The settings methods read (lint rules, relations, recall), re-read on SIGHUP."""
        self.settings = settings

    def reindex(
        self,
        *,
        full: bool = False,
        paths: list[str] | None = None,
        progress: Progress | None = None,
        searchable: Searchable | None = None,
    ) -> IndexReport:
        """Bring the index up to date; the re-parsed notes' chunks go to the vector index,
        which keeps the vectors it has for their hashes and queues the rest (the embedding
        stage looks those up in the store first).
        ``searchable``: see ``Indexer.run``."""
        if not self.vault.root.is_dir():
            # An unmounted drive or a vault moved away must not read as "every note deleted".
            raise VaultNotFound(f"the vault folder is missing: {self.vault.root}")
        progress = progress or (self.progress("parse") if self.progress else None)
        report = self.indexer.run(full=full, scope=paths, progress=progress, searchable=searchable)
        self.embed_stage.look_up(
            self.vectors.replace(report.hashes, report.deleted_paths, report.named, report.lines)
        )
        if len(report.changed_paths) + len(report.deleted_paths) >= 200:
            ensure_fts_index(self.store)  # a cold index: built here, not by the first search
            self.store.optimize(self.retain)  # fold the many new rows into it
        read_at_start = {k: self.meta.get(k) for k in READ_AT_START}
        self.meta["last_indexed"] = self.clock().isoformat(timespec="seconds")
        self.meta["failures"] = self.indexer.failures
        if not self.indexer.stale:
            self.meta["parsed_by"] = parsed_by(self.indexer.chunk_options)
        self.meta["vault"] = str(self.vault.root)
        # meta.json costs two fsyncs, slow beside other writers: a watcher batch that changed
        # only the time keeps it in memory, written with the next write or at close
        if paths is None or read_at_start != {k: self.meta.get(k) for k in READ_AT_START}:
            self.save_meta()
        else:
            self._meta_unsaved = True
        return report

    def save_meta(self) -> None:
        write_json(self.files, "meta.json", self.meta)
        self._meta_unsaved = False

    def compact(self) -> int:
        """Drop the vectors no chunk uses, then compact every table; how many were dropped.
        When idle, in the writer's turn."""
        dropped = self.store.drop_unused_vectors()
        ensure_fts_index(self.store)
        self.store.optimize(self.retain)
        self._reconnect()
        return dropped

    def _reconnect(self) -> None:
        """The tables through a fresh LanceDB session (``IndexStore.reconnect``)."""
        self.store.reconnect()
        self.memory.index.table.reopen(self.store.db)

    def compact_chunks(self, give_way: Callable[[], bool]) -> bool:
        """Compact the chunks table unless ``give_way()`` turns true first (``IndexStore.
        compact_chunks``); True if it ran to the end. In the writer's turn."""
        return self.store.compact_chunks(self.retain, give_way)

    def reload(self) -> None:
        """Load the index as a restart would, after another process (the daemon's bulk-index
        child, holding the lent writer lock) rewrote the store."""
        self._reconnect()
        self.state.reload(*_read_index(self.store, self.vectors, self.embedder.model_id))
        self.meta = read_json(self.files, "meta.json", {})
        self._meta_unsaved = False  # the child's is newer
        self.indexer.failures = dict(self.meta.get("failures", {}))
        self.indexer.stale = self.meta.get("parsed_by") != parsed_by(self.indexer.chunk_options)

    def status(self) -> dict[str, Any]:
        with self.state.lock:
            return self._status(self.embed_stage.pending())

    def _status(self, pending: int) -> dict[str, Any]:
        """Only the few notes listed are sorted: sorting all of them (three times) took
        ~400 ms at 100k notes, with the state locked against queries and the writer."""
        notes = self.state.notes
        return {
            "vault": str(self.vault.root),
            "data_dir": str(self.data_dir),
            "notes": len(notes),
            "chunks": sum(n.chunk_count for n in notes.values()),
            "pending": pending,
            "last_indexed": self.meta.get("last_indexed"),
            "model": self.embedder.model_id,
            "embedder": self.embedder.model_id,
            "vectors": len(self.vectors),
            "store_cache_mib": round(self.store.cache_bytes() / 2**20, 1),
            "links": self.state.link_stats(),
            "failed": [{"path": p, "error": e} for p, e in sorted(self.indexer.failures.items())],
            "invalid_frontmatter": [
                {"path": p, "error": notes[p].frontmatter_error}
                for p in sorted(p for p, n in notes.items() if n.frontmatter_error)
            ],
            "warnings": [  # indexed, but not as written (not UTF-8: read with U+FFFD)
                {"path": p, "warning": notes[p].warning}
                for p in sorted(p for p, n in notes.items() if n.warning)
            ],
            "obsidian": self.vault.obsidian.to_dict(),  # the Obsidian settings applied
            "daemon": dict(self.runtime) if self.runtime is not None else None,
        }

    def close(self) -> None:
        try:
            if self._meta_unsaved:
                self.save_meta()
        except StoreError as exc:  # only the time of the last watcher batch is lost
            _log.warning("%s", exc)
        finally:
            self.lock.release()
