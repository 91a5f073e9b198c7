"""The embedding stage: fill in vectors for chunks that have none, after parsing.

A note is searchable lexically the moment it is parsed; vectors follow. ``compute`` only reads
and runs the model (slow, outside the writer), ``commit`` writes the vectors (fast, in the
writer), and a vector lands only if its chunk still holds the text it was computed from, so an
edit racing the model never gets a stale vector.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from sidecar.embed.base import Embedder
from sidecar.profiling import profile_as
from sidecar.store.chunk_search import UPDATE_ROWS, commit_vectors, load_vectors, pending_chunks
from sidecar.store.lance import IndexStore
from sidecar.store.vectors import VectorIndex

Progress = Callable[[int, int], None]
_log = logging.getLogger("sidecar.embed")
T = TypeVar("T")


class BulkWriter(Protocol):
    """Does a backlog's big reads and writes of the chunks table elsewhere (the daemon's
    child process, ``sidecar/daemon/backlog.py``), as ``pending_chunks`` and ``commit_vectors``
    would here, leaving this process's tables at their newest versions; raises
    ``RuntimeError`` when it cannot. ``pending`` answers None unless a write has started it."""

    def pending(self, limit: int) -> list[dict[str, Any]] | None: ...

    def write(
        self, rows: Sequence[tuple[str, str, NDArray[np.float32]]]
    ) -> tuple[int, dict[str, str]]: ...


@dataclass(frozen=True, slots=True)
class Batch:
    chunk_ids: list[str]
    hashes: list[str]
    vectors: NDArray[np.float32]


HINT_PATHS = 500  # notes asked about at once by a hinted search for pending chunks
# Batches a LanceDB merge would write go to the ``bulk`` writer, if any: one merge in this
# process pages in ~12 MiB of LanceDB's code for good (probe on the 10k-note store).
BULK_ROWS = UPDATE_ROWS + 1


class EmbedStage:
    """Where pending chunks may be: anywhere (``_scan_all``: at first, after a model change or
    a big sync) or in the notes re-parsed since (``_hinted``). A save so costs a look at its
    own note's chunks, not a scan of the whole vector column; with nothing hinted, asking
    for work costs nothing."""

    def __init__(self, store: IndexStore, vectors: VectorIndex, embedder: Embedder) -> None:
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self._lock = threading.Lock()  # refresh runs in the writer, compute beside it
        self._scan_all = True
        self._hinted: dict[str, int] = {}  # note -> the count of refreshes when last hinted
        self._refreshes = 0
        self.bulk: BulkWriter | None = None  # set by the daemon

    def prepare(self) -> bool:
        """Record the model; if it changed, every old vector is cleared. True if cleared."""
        if self.store.set_model(self.embedder.model_id):
            self.vectors.clear()
            with self._lock:
                self._scan_all = True
            return True
        return False

    def pending(self) -> int:
        """Chunks waiting for a vector: counted in the hinted notes only, unless they may be
        anywhere. (Editors ask ``index.status`` after every change: a count over all notes
        scanned the vector column each time: 157-217 ms at 100k notes, 4 ms in one note.)"""
        with self._lock:
            scan_all, hinted = self._scan_all, list(self._hinted)
        if scan_all or len(hinted) > HINT_PATHS:
            return self.store.count_pending()
        return self.store.count_pending(hinted)

    @profile_as("embed")
    def compute(self, limit: int) -> Batch | None:
        rows = self._pending_rows(limit)
        if not rows:
            return None
        vectors = self.embedder.embed([r["search_text"] or "" for r in rows])
        return Batch([r["chunk_id"] for r in rows], [r["content_hash"] for r in rows], vectors)

    @profile_as("embed-commit")
    def commit(self, batch: Batch) -> int:
        rows = list(zip(batch.chunk_ids, batch.hashes, batch.vectors, strict=True))
        elsewhere = self._through_bulk(lambda b: b.write(rows)) if len(rows) >= BULK_ROWS else None
        written, now = elsewhere or commit_vectors(self.store, rows)
        keep = [
            i
            for i, (cid, h) in enumerate(zip(batch.chunk_ids, batch.hashes, strict=True))
            if now.get(cid) == h
        ]
        if keep:
            ids = [batch.chunk_ids[i] for i in keep]
            self.vectors.upsert(ids, [cid.rsplit("#", 1)[0] for cid in ids], batch.vectors[keep])
        return written

    def _through_bulk(self, ask: Callable[[BulkWriter], T]) -> T | None:
        """``ask`` the bulk writer; None if there is none, or it failed (then none from now on,
        and the caller does the work here)."""
        if self.bulk is None:
            return None
        try:
            return ask(self.bulk)
        except RuntimeError as exc:
            _log.warning(
                "%s; doing the backlog's reads and writes in this process from now on", exc
            )
            self.bulk = None
            return None

    def _pending_rows(self, limit: int) -> list[dict[str, Any]]:
        with self._lock:
            scan_all = self._scan_all
        if scan_all:
            rows = self._pending_anywhere(limit)
            if not rows:
                with self._lock:
                    self._scan_all = False  # hints that came meanwhile are still looked at
            return rows
        while True:
            with self._lock:
                looked = dict(sorted(self._hinted.items())[:HINT_PATHS])
            if not looked:
                return []
            rows = pending_chunks(self.store, limit, list(looked))
            if rows:
                return rows  # asked again next time: a note's hint goes once a look finds none
            with self._lock:
                for path, seen in looked.items():
                    # hinted again since the snapshot (re-parsed, maybe after this look): kept
                    if self._hinted.get(path) == seen:
                        del self._hinted[path]

    def _pending_anywhere(self, limit: int) -> list[dict[str, Any]]:
        """Through a backlog the scan is the bulk writer's too (once a write has started it)."""
        rows = self._through_bulk(lambda b: b.pending(limit))
        return rows if rows is not None else pending_chunks(self.store, limit)

    def rescan(self) -> None:
        """Look at every chunk again next time (a safety net: hints cover every write)."""
        with self._lock:
            self._scan_all = True

    def refresh(self, paths: list[str]) -> None:
        """Make the in-RAM matrix match the store for these notes, and note that their chunks
        may want vectors."""
        big = len(paths) > 2000  # a cold index or a big sync: one read beats a huge IN list
        with self._lock:
            self._refreshes += 1
            if big:
                self._scan_all = True
            else:
                self._hinted.update(dict.fromkeys(paths, self._refreshes))
        if big:
            self.vectors.clear()
            self.vectors.load(load_vectors(self.store))
            return
        self.vectors.remove_paths(paths)
        self.vectors.load(load_vectors(self.store, paths))

    def run(self, batch_size: int = 256, progress: Progress | None = None) -> int:
        """Embed everything pending, in one go (the CLI's path; the daemon interleaves)."""
        self.prepare()
        total = self.pending()
        done = 0
        if progress is not None and total:
            progress(0, total)  # the bar shows at once: the first batch may first load the model
        while True:
            batch = self.compute(batch_size)
            if batch is None:
                if done:
                    # every vector written rewrote its row: fold them back into the full-text
                    # index now, or the next searches scan them unindexed
                    self.store.optimize()
                return done
            self.commit(batch)
            done += len(batch.chunk_ids)
            if progress is not None:
                progress(min(done, total), total)
