"""Memory entries: write (with the near-duplicate gate), read, archive, confirm, refute, link.

All writes go through ``MemoryIndex.save`` (the file first, then RAM and the table) and, in the
daemon, run on its single writer because their methods are registered ``read_only=False``.
Nothing is ever deleted: ``delete`` and expiry archive (status ``archived``, file moved into the
folder's ``archive/``), and every change keeps the previous text among the last revisions.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sidecar.core import memory as m
from sidecar.core.memory import Counters, Entry
from sidecar.embed.base import Embedder
from sidecar.errors import NoteNotFound, SidecarError, UsageError
from sidecar.services.memory_index import MemoryIndex, Record, embed_text
from sidecar.services.memory_view import Viewer
from sidecar.services.state import IndexState
from sidecar.store.files import Beneath
from sidecar.store.memory_files import MemoryFolder, vault_modes
from sidecar.store.memory_table import MemoryTable

DEFAULT_FOLDER = ".sidecar/memory"


def memory_dir(vault: Path, configured: str = DEFAULT_FOLDER) -> Path:
    """The ``memory.folder`` setting: vault-relative unless absolute (or ``~``)."""
    path = Path(configured or DEFAULT_FOLDER).expanduser()
    return path if path.is_absolute() else vault / path


def memory_folder(vault: Path, folder: Path) -> MemoryFolder:
    """The folder's files, reached without symlinks from the vault (when inside it) or from
    the folder itself (one the user's own config put elsewhere), with the vault's modes."""
    file_mode, dir_mode = vault_modes(vault)
    folder = Path(os.path.normpath(folder))
    for base in (vault, vault.resolve()):
        if folder.is_relative_to(base):
            rel = folder.relative_to(base).as_posix()
            return MemoryFolder(Beneath(base, rel, dir_mode=dir_mode), file_mode)
    return MemoryFolder(Beneath(folder, dir_mode=dir_mode, create_anchor=True), file_mode)


def memory_ignores(vault: Path, folder: Path) -> list[str]:
    """A visible memory folder inside the vault is kept out of the notes (its files are
    entries, searched as memory; indexed twice they would crowd recall with duplicates)."""
    try:
        rel = folder.resolve().relative_to(vault.resolve()).as_posix()
    except ValueError:
        return []
    return [] if rel in ("", ".") or rel.startswith(".") else [f"/{rel}/"]


class MemoryService:
    def __init__(self, index: MemoryIndex, viewer: Viewer, clock: Callable[[], dt.datetime]):
        self.index = index
        self.viewer = viewer
        self.clock = clock

    @classmethod
    def open(cls, folder: Path, db: Any, embedder: Embedder, clock: Callable[[], dt.datetime],
             state: IndexState, vault_root: Path) -> MemoryService:  # fmt: skip
        index = MemoryIndex(memory_folder(vault_root, folder), MemoryTable(db, embedder.dim),
                            embedder, clock)  # fmt: skip
        index.folder.remove_stray_temps()
        index.sync()
        return cls(index, Viewer(state, vault_root.resolve()), clock)

    # -- reads --------------------------------------------------------------------------------

    def record(self, entry_id: str) -> Record:
        record = self.index.get(entry_id)
        if record is None:
            raise NoteNotFound(f"no memory entry '{entry_id}'", {"id": entry_id})
        return record

    def view(self, record: Record, *, body: bool = True) -> dict[str, Any]:
        return self.viewer.entry(record, self.index.records, body=body)

    def get(self, entry_id: str) -> dict[str, Any]:
        return {"entry": self.view(self.record(entry_id))}

    def entries(self, types: Sequence[str] = (), tags: Sequence[str] = (), status: str = "active",
             limit: int = 100) -> dict[str, Any]:  # fmt: skip
        """Newest first; ``status`` ``all`` includes archived, superseded and refuted entries."""
        rows = [r for r in self.index.snapshot() if wanted(r.entry, types, tags, status)]
        rows.sort(key=lambda r: (r.entry.updated_at, r.entry.id), reverse=True)
        entries = [self.view(r, body=False) for r in rows[:limit]]
        return {"entries": entries, "total": len(rows), "problems": self.problems()}

    def problems(self) -> list[dict[str, str]]:
        found = {**self.index.problems, **self.index.folder.problems}
        return [{"path": p, "error": e} for p, e in sorted(found.items())]

    def history(self, entry_id: str) -> dict[str, Any]:
        revisions = self.index.folder.revisions(entry_id)
        current = self.index.get(entry_id)
        if current is None and not revisions:
            raise NoteNotFound(f"no memory entry '{entry_id}'", {"id": entry_id})
        return {
            "id": entry_id,
            "current": current.text if current else None,
            "revisions": [{"saved_at": stamp, "text": text} for stamp, text in revisions],
        }

    # -- writes -------------------------------------------------------------------------------

    def write(self, *, title: str, entry_type: str, id: str | None = None, content: str = "",
              tags: Sequence[str] = (), due_at: dt.datetime | None = None,
              ttl: float | None = None, relations: Mapping[str, Sequence[str]] | None = None,
              source_type: str = "user_statement", agent: str = "",
              confidence: float | None = None, on_duplicate: str = "reject") -> dict[str, Any]:  # fmt: skip
        now, title = self.clock(), _title(title)
        entry_id = self._new_id(id, title, entry_type, now)
        old = self.index.get(entry_id)
        if (entry_type == "reminder") != (due_at is not None):
            raise UsageError("a reminder needs a due time (due_in or due_at); other entries "
                             "take none")  # fmt: skip
        entry = Entry(
            id=entry_id, title=title, entry_type=entry_type,
            created_at=old.entry.created_at if old else now, updated_at=now,
            source_type=source_type, tags=tuple(dict.fromkeys(t.strip() for t in tags if t.strip())),
            due_at=due_at, relations=m.normalise_relations(relations or {}), agent=agent,
            expires_at=now + dt.timedelta(seconds=ttl) if ttl else None,
            confidence=confidence, body=content.strip("\n"),
        )  # fmt: skip
        verdict, vector = self._gate(entry)
        if verdict.kind == "duplicate":
            if on_duplicate != "contradicts":
                raise SidecarError(
                    f"near-duplicate of memory entry '{verdict.other}' (similarity "
                    f"{verdict.score:.2f}); update that entry, or pass on_duplicate=contradicts",
                    {"reason": "near_duplicate", "duplicate_of": verdict.other,
                     "similarity": verdict.score, "retry_with": {"on_duplicate": "contradicts"}},
                )  # fmt: skip
            entry = m.with_relation(entry, "contradicts", verdict.other or "")
        record = self.index.save(entry, vector)
        self.index.flush_vectors()  # this runs on the writer: the gate's vectors may be kept
        superseded = self._supersede_targets(entry, now)
        out: dict[str, Any] = {"entry": self.view(record), "created": old is None,
                               "superseded": superseded}  # fmt: skip
        if verdict.kind == "similar" or verdict.kind == "duplicate":
            other = self.index.get(verdict.other or "")
            out["similar"] = [{"id": verdict.other, "similarity": verdict.score,
                               "title": other.entry.title if other else ""}]  # fmt: skip
        return out

    def _new_id(self, given: str | None, title: str, entry_type: str, now: dt.datetime) -> str:
        if given:
            if not m.valid_id(given):
                raise UsageError(f"'{given}' is not a memory id: use lowercase letters, digits, "
                                 f"'.', '_' and '-' (e.g. {m.slugify(given)})")  # fmt: skip
            return given
        base = m.slugify(title)
        if entry_type == "handoff":
            base = f"handoff-{now.astimezone(dt.UTC):%Y-%m-%d}-{base[:24]}".rstrip("-")
        return m.unique_id(base, self.index.records)

    def _gate(self, entry: Entry) -> tuple[m.Verdict, Any]:
        """The near-duplicate verdict against the other active entries (not the ones this
        entry supersedes: a revised decision may well repeat the old one), and the new vector."""
        replaced = {m.target_name(t) for t in entry.relation_map().get("supersedes", [])}
        others = [r for r in self.index.snapshot()
                  if r.entry.active and r.entry.id != entry.id and r.entry.id not in replaced]  # fmt: skip
        self.index.ensure_vectors()
        vectors = self.index.embed([embed_text(entry)])
        vec = vectors[0] if vectors is not None else None
        cosines = dict(self.index.cosines(vec, others)) if vec is not None else {}
        keys = [(r.entry.id, cosines.get(r.entry.id, 0.0), m.text_key(r.entry.title, r.entry.body))
                for r in others]  # fmt: skip
        return m.judge_duplicate(m.text_key(entry.title, entry.body), keys), vec

    def _supersede_targets(self, entry: Entry, now: dt.datetime) -> list[str]:
        done = []
        for target in entry.relation_map().get("supersedes", []):
            old = self.index.get(m.target_name(target))
            if old is not None and old.entry.id != entry.id and old.entry.status == "active":
                self.index.save(m.superseded(old.entry, entry.id, now))
                done.append(old.entry.id)
        return done

    def revise(self, entry_id: str, *, title: str | None = None, body: str | None = None,
               tags: Sequence[str] | None = None) -> dict[str, Any]:  # fmt: skip
        """Change an entry's title, body or tags and nothing else (its type, times, links and
        provenance stay); the old text is kept as a revision, as for any write."""
        record = self.record(entry_id)
        e = record.entry
        entry = replace(
            e, title=_title(title) if title is not None else e.title, updated_at=self.clock(),
            body=body.strip("\n") if body is not None else e.body,
            tags=tuple(dict.fromkeys(t.strip() for t in tags if t.strip())) if tags is not None
            else e.tags,
        )  # fmt: skip
        verdict, vector = self._gate(entry)
        if verdict.kind == "duplicate":
            raise SidecarError(f"the change makes it a near-duplicate of memory entry "
                               f"'{verdict.other}' (similarity {verdict.score:.2f})",
                               {"reason": "near_duplicate", "duplicate_of": verdict.other})  # fmt: skip
        saved = self.index.save(entry, vector)
        self.index.flush_vectors()
        return {"entry": self.view(saved), "created": False}

    def delete(self, entry_id: str) -> dict[str, Any]:
        """Archive, never delete: the file moves to ``archive/`` with status ``archived``."""
        record = self.record(entry_id)
        if record.entry.status != "archived":
            record = self.index.save(m.archived(record.entry, self.clock()))
        return {"entry": self.view(record, body=False), "archived": True}

    def confirm(self, entry_id: str, refute: bool = False) -> dict[str, Any]:
        record = self.record(entry_id)
        c = record.counters
        if refute:
            counters = replace(c, refutations=c.refutations + 1)
            if record.entry.status == "active":
                record = self.index.save(replace(record.entry, status="refuted",
                                                 updated_at=self.clock()))  # fmt: skip
        else:
            counters = replace(c, confirmations=c.confirmations + 1,
                               last_confirmed_at=m.iso(self.clock()))  # fmt: skip
        self.index.set_counters(entry_id, counters)
        return {"entry": self.view(self.record(entry_id), body=False)}

    def link(
        self, entry_id: str, relation: str, target: str, remove: bool = False
    ) -> dict[str, Any]:
        if relation not in m.RELATIONS:
            raise UsageError(f"relation must be one of {', '.join(m.RELATIONS)}")
        if not m.target_name(target):
            raise UsageError("a link target (memory id or note name) is required")
        record = self.record(entry_id)
        entry = m.with_relation(record.entry, relation, target, remove=remove)
        now = self.clock()
        record = self.index.save(replace(entry, updated_at=now))
        superseded = [] if remove else self._supersede_targets(entry, now)
        return {"entry": self.view(record, body=False), "superseded": superseded}

    def expire(self) -> list[str]:
        """Archive every entry whose TTL ran out; the ids archived."""
        now = self.clock()
        due = [r.entry for r in self.index.snapshot() if m.is_expired(r.entry, now)]
        for entry in due:
            self.index.save(m.archived(entry, now))
        return [e.id for e in due]

    def counters(self, entry_id: str) -> Counters:
        return self.record(entry_id).counters


def wanted(e: Entry, types: Sequence[str], tags: Sequence[str], status: str) -> bool:
    if types and e.entry_type not in types:
        return False
    if tags and not all(t in e.tags for t in tags):
        return False
    return status == "all" or e.status == status


def _title(text: str) -> str:
    """The title as stored; one of white space alone (NEL and U+2028 count, as they do for
    ``str.strip``) is refused, since the file would read back with the id as its title."""
    title = text.strip()
    if not title:
        raise UsageError(
            "a memory entry's title needs at least one character that is not white space"
        )
    return title
