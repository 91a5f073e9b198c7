"""The open index of one vault: store, state, indexer and queries, wired from plain values.

Whoever holds a ``Services`` holds the writer lock: the daemon for its lifetime, or a CLI command
when no daemon runs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidecar.config import Settings
from sidecar.core.chunks import ChunkOptions
from sidecar.core.note import parsed_by
from sidecar.embed import Embedder, load_embedder
from sidecar.errors import VaultNotFound
from sidecar.services.embedding import EmbedStage
from sidecar.services.graphq import GraphQueries
from sidecar.services.indexer import Indexer, IndexReport, Progress
from sidecar.services.memory import MemoryService, memory_dir, memory_ignores
from sidecar.services.relevance import Relevance
from sidecar.services.search import SearchService
from sidecar.services.state import IndexState
from sidecar.store.chunk_search import ensure_fts_index, fts_search, load_vectors
from sidecar.store.files import Beneath, private_data_dir, read_json, write_json
from sidecar.store.lance import IndexStore
from sidecar.store.lock import WriterLock
from sidecar.store.vaultfs import Vault
from sidecar.store.vectors import VectorIndex

Clock = Callable[[], dt.datetime]


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


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
    clock: Clock = utcnow
    meta: dict[str, Any] = field(default_factory=dict)
    # set by an interactive caller: a stage ("parse", "embed") -> the callable drawing its bar
    progress: Callable[[str], Progress] | None = None
    runtime: dict[str, Any] | None = None  # the daemon's own facts, shown by index.status
    settings: Settings | None = None  # the vault's settings, for methods that read rules
    memory: MemoryService = field(init=False)  # memory entries and reminders (DESIGN 6)
    relevance: Relevance = field(default_factory=Relevance)  # what recall's gate measured
    files: Beneath = field(init=False)  # the data dir's own files (meta.json, lint-last.json)

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
    ) -> Services:
        """Open (or create) the index; ``embedder`` defaults to the local MiniLM model, which
        is only loaded when something is embedded."""
        embedder = embedder or load_embedder("minilm")
        files = private_data_dir(data_dir)
        lock = WriterLock(data_dir / "writer.lock", files).acquire()
        memory_folder = memory_folder or memory_dir(vault_root)
        try:
            ignore = [*(ignore or []), *memory_ignores(vault_root, memory_folder)]
            vault = Vault(vault_root, ignore, max_file_bytes)
            store = IndexStore(data_dir, dim=embedder.dim)
            store.drop_orphans()  # rows a crash left behind a dropped notes row
            state = IndexState(*store.load_state())
            vectors = VectorIndex(embedder.dim)
            if store.model_id == embedder.model_id:
                vectors.load(load_vectors(store))
            memory = MemoryService.open(memory_folder, store.db, embedder, clock, state, vault_root)
        except BaseException:
            lock.release()
            raise
        indexer = Indexer(vault, store, state, chunk_options)
        meta = read_json(files, "meta.json", {})
        indexer.failures = dict(meta.get("failures", {}))
        indexer.stale = meta.get("parsed_by") != parsed_by(chunk_options)
        graph = GraphQueries(state, vault.root)
        stage = EmbedStage(store, vectors, embedder)
        search = SearchService(store, state, vectors, lambda: embedder, clock)
        services = cls(vault, data_dir, store, state, indexer, graph, lock, embedder, vectors,
                       stage, search, clock, meta)  # fmt: skip
        services.files = files
        services.memory = memory
        return services

    def reindex(
        self,
        *,
        full: bool = False,
        paths: list[str] | None = None,
        progress: Progress | None = None,
    ) -> IndexReport:
        if not self.vault.root.is_dir():
            # An unmounted drive or a vault moved away must not read as "every note deleted".
            raise VaultNotFound(f"the vault folder is missing: {self.vault.root}")
        progress = progress or (self.progress("parse") if self.progress else None)
        report = self.indexer.run(full=full, scope=paths, progress=progress)
        touched = report.changed_paths + report.deleted_paths
        if touched:  # carried-over vectors of re-parsed notes, none for deleted ones
            self.embed_stage.refresh(touched)
        if len(touched) >= 200:  # many rewritten rows: compact so searches stay indexed
            ensure_fts_index(self.store)  # a cold index: built here, not by the first search
            self.store.optimize()
        self.meta["last_indexed"] = self.clock().isoformat(timespec="seconds")
        self.meta["failures"] = self.indexer.failures
        if not self.indexer.stale:
            self.meta["parsed_by"] = parsed_by(self.indexer.chunk_options)
        self.meta["vault"] = str(self.vault.root)
        self.save_meta()
        return report

    def save_meta(self) -> None:
        write_json(self.files, "meta.json", self.meta)

    def reload(self) -> None:
        """Load the index as a restart would, after another process (the daemon's bulk-index
        child, holding the lent writer lock) rewrote the store."""
        self.store.refresh()
        self.state.reload(*self.store.load_state())
        self.vectors.clear()
        if self.store.model_id == self.embedder.model_id:
            self.vectors.load(load_vectors(self.store))
        self.embed_stage.rescan()  # its chunks came without hints
        self.meta = read_json(self.files, "meta.json", {})
        self.indexer.failures = dict(self.meta.get("failures", {}))
        self.indexer.stale = self.meta.get("parsed_by") != parsed_by(self.indexer.chunk_options)

    def drop_store_caches(self) -> None:
        """Every table opened afresh, leaving behind LanceDB's cache entries for versions no
        query will read again (``IndexStore.reopen``). Each compaction at 100k notes left
        ~28 MiB of them. One small search then loads the current FTS index, which the first
        user's query would otherwise wait for (~40 ms at 100k). In the writer's turn."""
        self.store.reopen()
        self.memory.index.table.reopen(self.store.db)
        fts_search(self.store, "index", 1)

    def settle(self) -> None:
        """After a long burst of commits (a cold embedding), let go of what it left that a
        restart would not hold: LanceDB's cache entries and the vector matrix's spare rows."""
        self.drop_store_caches()
        self.vectors.shrink()

    def status(self) -> dict[str, Any]:
        pending = self.embed_stage.pending()  # maybe a LanceDB scan: not holding the state
        with self.state.lock:
            return self._status(pending)

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
            "model": self.store.model_id,
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
        self.lock.release()
