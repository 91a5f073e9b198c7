"""The memory entries in RAM, mirrored to their files and to the ``memory`` table.

``sync`` is the one reconcile path: at open, on the daemon's periodic rescan and before a command
answers without a daemon. It re-reads only files whose stat changed, keeps the previous text as a
revision when a file was edited (or deleted) in the editor, and reports files it cannot read as
entries instead of failing. ``save`` is the one write path for the services' own changes.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sidecar.core.memory import Counters, Entry
from sidecar.core.memory_format import EntryError, parse, render
from sidecar.embed.base import Embedder
from sidecar.errors import SidecarError, StoreError
from sidecar.store.faults import storage_error
from sidecar.store.memory_files import EntryFile, MemoryFolder
from sidecar.store.memory_table import COUNTERS, MemoryTable

_log = logging.getLogger(__name__)
Clock = Callable[[], dt.datetime]


@dataclass
class Record:
    entry: Entry
    file: EntryFile
    text: str
    counters: Counters = field(default_factory=Counters)
    vector: NDArray[np.float32] | None = None


def embed_text(entry: Entry) -> str:
    return f"{entry.title}\n{entry.body}".strip()


def search_text(entry: Entry) -> str:
    return f"{entry.title}\n{' '.join(entry.tags)}\n{entry.body}"


class MemoryIndex:
    def __init__(self, folder: MemoryFolder, table: MemoryTable, embedder: Embedder,
                 clock: Clock) -> None:  # fmt: skip
        self.folder = folder
        self.table = table
        self.embedder = embedder
        self.clock = clock
        self.lock = threading.RLock()
        self.records: dict[str, Record] = {}
        self.problems: dict[str, str] = {}  # file path -> why it is not an entry
        self.persist_on_read = True  # False in the daemon: only its writer touches the table
        self._unsaved_vectors: set[str] = set()
        self._bad: dict[str, tuple[int, int]] = {}  # unreadable file -> its stat when read
        self._load()

    def _load(self) -> None:
        for row in self.table.rows():
            f = EntryFile(row["id"], Path(row["path"]), bool(row["archived"]), row["mtime_ns"],
                          row["size"])  # fmt: skip
            try:
                entry = parse(row["text"], row["id"], self.clock())
            except EntryError:
                continue
            counters = Counters(int(row["confirmations"] or 0), int(row["refutations"] or 0),
                                row["last_confirmed_at"] or "", row["notified_for"] or "")  # fmt: skip
            vec = row["vector"]
            ok = vec is not None and row["model"] == self.embedder.model_id
            self.records[row["id"]] = Record(
                entry, f, row["text"], counters, np.asarray(vec, np.float32) if ok else None
            )

    def snapshot(self) -> list[Record]:
        with self.lock:
            return list(self.records.values())

    def get(self, entry_id: str) -> Record | None:
        with self.lock:
            return self.records.get(entry_id)

    # -- reconcile with the files -----------------------------------------------------------

    def sync(self) -> list[str]:
        """Bring RAM and table up to the files; the ids that changed. A missing folder (an
        unmounted drive) changes nothing: it must not read as "every entry deleted"."""
        if not self.folder.exists():
            return []
        chosen = self._chosen()
        changed = [i for i, f in chosen.items() if self._refreshed(f)]
        gone = [i for i in list(self.records) if i not in chosen]
        for entry_id in gone:
            self._forget(entry_id)
        self.flush_vectors()
        return changed + gone

    def _chosen(self) -> dict[str, EntryFile]:
        """One file per id; with a copy in both places (a crash mid-archive) the newer wins."""
        chosen: dict[str, EntryFile] = {}
        for f in self.folder.scan():
            if f.id not in chosen or f.mtime_ns > chosen[f.id].mtime_ns:
                chosen[f.id] = f
        return chosen

    def stale(self) -> bool:
        """Whether ``sync`` has anything to do: stats only, no reads, no writes."""
        if self._unsaved_vectors:
            return True
        if not self.folder.exists():
            return False
        current = self._chosen()
        known = {r.entry.id: r.file for r in self.snapshot()}
        for entry_id, f in current.items():
            k = known.get(entry_id)
            moved = k is None or (k.path, k.mtime_ns, k.size) != (f.path, f.mtime_ns, f.size)
            if moved and self._bad.get(str(f.path)) != (f.mtime_ns, f.size):
                return True
        return bool(set(known) - set(current))

    def _refreshed(self, f: EntryFile) -> bool:
        """``_refresh``, with a file that cannot be read (or its revision kept) reported as a
        problem instead of stopping the sync of every other entry."""
        try:
            return self._refresh(f)
        except SidecarError as exc:
            self.problems[str(f.path)] = exc.message
            return False

    def _refresh(self, f: EntryFile) -> bool:
        if self._bad.get(str(f.path)) == (f.mtime_ns, f.size):
            return False  # still the unreadable file already reported
        old = self.records.get(f.id)
        if old is not None and (old.file.path, old.file.mtime_ns, old.file.size) == (
            f.path, f.mtime_ns, f.size
        ):  # fmt: skip
            return False
        text = self.folder.read(f)
        if text is None:
            return False
        if old is not None and old.text == text:
            self._store(replace(old, file=f))
            return False
        try:
            entry = parse(text, f.id, _mtime(f))
        except EntryError as exc:
            self.problems[str(f.path)] = str(exc)
            self._bad[str(f.path)] = (f.mtime_ns, f.size)
            return False
        self.problems.pop(str(f.path), None)
        self._bad.pop(str(f.path), None)
        if old is not None:
            self.folder.save_revision(f.id, old.text, _stamp(self.clock()))
        keep = old.vector if old and embed_text(old.entry) == embed_text(entry) else None
        self._store(Record(entry, f, text, old.counters if old else Counters(), keep))
        return True

    def _forget(self, entry_id: str) -> None:
        old = self.records.pop(entry_id)
        try:
            self.folder.save_revision(entry_id, old.text, _stamp(self.clock()))
        except SidecarError as exc:  # the entry's text stays in the table's history only
            _log.warning("memory: %s", exc.message)
        self.table.delete([entry_id])

    # -- the services' writes ---------------------------------------------------------------

    def save(self, entry: Entry, vector: NDArray[np.float32] | None = None) -> Record:
        """Write the entry's file (archived ones into ``archive/``), keep the old text as a
        revision, mirror both to RAM and the table."""
        text = render(entry)
        old = self.records.get(entry.id)
        if old is not None and old.text != text:
            self.folder.save_revision(entry.id, old.text, _stamp(self.clock()))
        f = self.folder.write(entry.id, text, archived=entry.status == "archived")
        if vector is None and old is not None and embed_text(old.entry) == embed_text(entry):
            vector = old.vector
        record = Record(entry, f, text, old.counters if old else Counters(), vector)
        try:
            self._store(record)
        except StoreError as exc:  # the files stay as they were: an error means nothing changed
            if old is None:
                self.folder.remove(f)
            else:
                self.folder.write(entry.id, old.text, archived=old.file.archived)
            fault = storage_error(exc)  # one line, without LanceDB's Rust source path
            if fault is None:
                raise
            raise fault from exc
        return record

    def _store(self, record: Record) -> None:
        """The table first: if it refuses the row, RAM still says what the table holds, and
        the next sync tries again."""
        self.table.put([_row(record, self.embedder.model_id)])
        with self.lock:
            self.records[record.entry.id] = record

    def set_counters(self, entry_id: str, counters: Counters) -> None:
        with self.lock:
            record = self.records[entry_id]
            self.records[entry_id] = replace(record, counters=counters)
        self.table.update(entry_id, {c: getattr(counters, c) for c in COUNTERS})

    # -- vectors ----------------------------------------------------------------------------

    def embed(self, texts: list[str]) -> NDArray[np.float32] | None:
        """Vectors, or None when the model cannot run (entries stay writable without it)."""
        try:
            return self.embedder.embed(texts)
        except SidecarError as exc:
            _log.warning("memory: no vectors (%s); lexical matching only", exc.message)
            return None

    def ensure_vectors(self) -> None:
        missing = [r for r in self.snapshot() if r.vector is None and r.entry.active]
        if not missing:
            return
        vectors = self.embed([embed_text(r.entry) for r in missing])
        if vectors is None:
            return
        with self.lock:
            for record, vec in zip(missing, vectors, strict=True):
                current = self.records.get(record.entry.id)
                if current is not None and current.text == record.text:
                    current.vector = vec
                    self._unsaved_vectors.add(record.entry.id)
        if self.persist_on_read:
            self.flush_vectors()

    def flush_vectors(self) -> None:
        with self.lock:
            items = [
                (i, self.records[i].vector) for i in self._unsaved_vectors if i in self.records
            ]
            self._unsaved_vectors.clear()
        model = self.embedder.model_id
        self.table.set_vectors([(i, model, v) for i, v in items if v is not None])

    def cosines(self, vec: NDArray[np.float32], records: list[Record]) -> list[tuple[str, float]]:
        with_vec = [r for r in records if r.vector is not None]
        if not with_vec:
            return []
        matrix = np.stack([r.vector for r in with_vec if r.vector is not None])
        scores = matrix @ vec.astype(np.float32)
        return [(r.entry.id, float(s)) for r, s in zip(with_vec, scores, strict=True)]


def _row(record: Record, model: str) -> dict[str, Any]:
    vec = record.vector
    return {
        "id": record.entry.id, "path": str(record.file.path), "archived": record.file.archived,
        "mtime_ns": record.file.mtime_ns, "size": record.file.size, "text": record.text,
        "search_text": search_text(record.entry), "model": model if vec is not None else "",
        "vector": [float(x) for x in vec] if vec is not None else None,
        **{c: getattr(record.counters, c) for c in COUNTERS},
    }  # fmt: skip


def _mtime(f: EntryFile) -> dt.datetime:
    return dt.datetime.fromtimestamp(f.mtime_ns / 1e9, dt.UTC).replace(microsecond=0)


def _stamp(now: dt.datetime) -> str:
    """Revision file names sort in time order."""
    return now.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
