"""The index's working set in memory: note records, the resolution catalog and the link graph.

Graph queries read only this, so they never touch LanceDB and answer in microseconds. When notes
change, ``apply`` re-resolves just the links whose lookup names were touched by the change (a
new note can fix another note's broken link; a deleted one can break it), not the whole vault.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from sidecar.core.facts import Facts
from sidecar.core.graph import Graph
from sidecar.core.model import Edge, NoteRecord
from sidecar.core.relations import Taxonomy
from sidecar.core.resolve import (
    Catalog,
    NoteKey,
    file_name_key,
    link_keys,
    lookup_keys,
    missing_attachment,
    resolve_links,
)
from sidecar.core.title_match import TitleMatcher


def note_key(note: NoteRecord) -> NoteKey:
    return NoteKey(note.path, note.aliases, note.note_id)


@dataclass(frozen=True, slots=True)
class FileChange:
    """Attachment files that appeared or went, and Obsidian's attachment folder setting."""

    added: frozenset[str] = frozenset()
    gone: frozenset[str] = frozenset()
    folder: str | None = None
    listed: bool = False  # a full listing: the catalog now knows every attachment


class IndexState:
    """``lock`` guards every read and write of the in-memory structures: the daemon's writer
    holds it only while applying a batch (microseconds to milliseconds), never while parsing,
    embedding or writing LanceDB, so queries do not wait for indexing."""

    def __init__(self, notes: dict[str, NoteRecord], edges: Iterable[Edge]) -> None:
        self.lock = threading.RLock()
        self.version = 0  # bumped by every apply, so caches derived from notes know to rebuild
        self.files_listed = False  # whether the catalog knows the vault's attachment files
        self.catalog = Catalog.build((), (), None)
        self._build(notes, edges)

    def reload(self, notes: dict[str, NoteRecord], edges: Iterable[Edge]) -> None:
        """Take a whole new index in (another process wrote the store)."""
        with self.lock:
            self.version += 1
            self._build(notes, edges)

    def _build(self, notes: dict[str, NoteRecord], edges: Iterable[Edge]) -> None:
        self.notes = notes
        # Attachment paths are not stored: a reload keeps the ones the last scan listed.
        old = self.catalog
        keys = (note_key(n) for n in notes.values())
        self.catalog = Catalog.build(keys, old.files.values(), old.attachment_folder)
        self.graph = Graph(notes.keys(), edges)
        self._facts: Facts | None = None  # built on first use, then kept up to date by apply
        self._titles: TitleMatcher | None = None  # likewise
        self._chunks: tuple[int, int] | None = None  # (version, chunk count)
        self._sources_by_key: dict[str, list[str]] = {}
        for note in notes.values():
            self._index_links(note, add=True)

    @classmethod
    def empty(cls) -> IndexState:
        return cls({}, ())

    def facts(self, taxonomy: Taxonomy) -> Facts:
        """The typed facts of every edge (call holding ``lock``; treat them as read-only).

        Built once, then patched by ``apply`` for the sources that changed, so that
        ``graph.traverse`` need not rebuild them. A changed taxonomy (config reload) rebuilds."""
        if self._facts is None or self._facts.taxonomy != taxonomy:
            self._facts = Facts(self.graph.edges(), taxonomy)
        return self._facts

    def chunk_count(self) -> int:
        """Chunks of every note (call holding ``lock``), counted once per state version."""
        if self._chunks is None or self._chunks[0] != self.version:
            self._chunks = (self.version, sum(n.chunk_count for n in self.notes.values()))
        return self._chunks[1]

    def titles(self) -> TitleMatcher:
        """Which notes a text names (call holding ``lock``). Built once, patched by ``apply``."""
        if self._titles is None:
            self._titles = TitleMatcher(
                (p, name) for p, n in self.notes.items() for name in (n.title, *n.aliases)
            )
        return self._titles

    def _index_links(self, note: NoteRecord, *, add: bool) -> None:
        # Lists, not sets: each note is entered once a key, and most keys have a few notes,
        # for which a set is several times the size of a list.
        for key in {key for link in note.links for key in link_keys(link)}:
            if add:
                self._sources_by_key.setdefault(key, []).append(note.path)
                continue
            sources = self._sources_by_key.get(key)
            if sources is not None and note.path in sources:
                sources.remove(note.path)
                if not sources:
                    del self._sources_by_key[key]

    def apply(
        self, upserts: Iterable[NoteRecord], deletes: Iterable[str], files: FileChange | None = None
    ) -> dict[str, list[Edge]]:
        """Take changed and deleted notes (and attachment files) in; return the new edges of
        every source that changed."""
        self.version += 1
        touched_keys: set[str] = set() if files is None else self._apply_files(files)
        affected: set[str] = set()
        dropped: set[str] = set()
        for path in deletes:
            gone = self.notes.pop(path, None)
            if gone is None:
                continue
            dropped.add(path)
            if self._titles is not None:
                self._titles.drop(path, (gone.title, *gone.aliases))
            touched_keys |= lookup_keys(note_key(gone))
            self.catalog.remove(note_key(gone))
            self._index_links(gone, add=False)
            self.graph.remove_node(path)
        for note in upserts:
            old = self.notes.get(note.path)
            new_keys = lookup_keys(note_key(note))
            if old is not None:
                touched_keys |= lookup_keys(note_key(old)) ^ new_keys
                self.catalog.remove(note_key(old))
                self._index_links(old, add=False)
            else:
                touched_keys |= new_keys
            self.catalog.add(note_key(note))
            self.notes[note.path] = note
            if self._titles is not None:
                before = () if old is None else (old.title, *old.aliases)
                self._titles.put(note.path, (note.title, *note.aliases), before)
            self._index_links(note, add=True)
            self.graph.nodes.add(note.path)
            affected.add(note.path)
        for key in touched_keys:
            affected.update(self._sources_by_key.get(key, ()))
        changed: dict[str, list[Edge]] = {}
        for source in sorted(affected):
            record = self.notes.get(source)
            if record is None:
                continue
            edges = resolve_links(source, record.links, self.catalog)
            if edges != self.graph.out.get(source, []) or source in changed:
                self.graph.replace_source(source, edges)
                changed[source] = edges
        if self._facts is not None:
            sources = set(changed) | (dropped - self.notes.keys())
            self._facts.replace(sources, [e for es in changed.values() for e in es])
        return changed

    def _apply_files(self, files: FileChange) -> set[str]:
        """The lookup names of the attachments that came or went: a link naming one of them
        resolves differently now, as a link to a new note does."""
        cat = self.catalog
        touched = {file_name_key(p) for p in files.added | files.gone}
        for path in files.gone:
            cat.remove_file(path)
        for path in files.added:
            cat.add_file(path)
        if files.folder != cat.attachment_folder:  # every shared name may now go elsewhere
            touched |= cat.file_names.keys()
            cat.attachment_folder = files.folder
        if files.listed and not self.files_listed:
            # This process's first listing: edges stored by an earlier one may name files that
            # came or went while no process watched (attachment paths are not stored).
            touched |= {file_name_key(e.raw) for e in self.graph.edges()
                        if e.state == "attachment" or missing_attachment(e)}  # fmt: skip
        self.files_listed = self.files_listed or files.listed
        return touched

    def link_stats(self) -> dict[str, int]:
        c, marks = self.graph.states, self.graph.marks
        return {
            "total": sum(c.values()),
            "resolved": c["valid"],  # ambiguous names included: they resolve as in Obsidian
            "broken": c["broken"],
            "ambiguous": marks["ambiguous"],  # of the resolved and the attachments
            "attachments": c["attachment"],  # links to a file found in the vault
            "attachments_missing": marks["attachment_missing"],  # of the broken, those to a file
            "self": c["self"],
        }
