"""The indexer: plan against the disk, parse what changed, write it, update the graph.

One code path for ``sidecar index``, the daemon's start-up reconcile and its watcher batches
(``run(scope=...)``). Per-file failures (binary, too large, unreadable) are reported and skipped;
the rest indexes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sidecar.core.chunks import ChunkOptions, is_properties
from sidecar.core.model import ChunkKey, NoteRecord, ParsedNote
from sidecar.core.note import content_hash
from sidecar.core.plan import Candidates, Indexed, candidates, classify
from sidecar.profiling import profile_as
from sidecar.services.parse_worker import parse_all
from sidecar.services.state import FileChange, IndexState
from sidecar.store.lance import IndexStore
from sidecar.store.vaultfs import NoteFile, Vault

Progress = Callable[[int, int], None]
# Told, in the writer's turn, which notes changed and which went, as soon as what search reads
# (their chunk rows, the in-memory state) is written; their note rows are written after.
Searchable = Callable[[list[str], list[str]], None]
ChunkKeys = Callable[[Iterable[str]], dict[str, list[ChunkKey]]]
EMPTY_VAULT = (
    "no notes found (only .md files count; hidden folders and .sidecarignore entries are "
    "skipped): is this the vault you meant?"
)


@dataclass(slots=True)
class IndexReport:
    notes: int = 0
    chunks: int = 0
    edges: int = 0
    parsed: int = 0
    changed: int = 0
    deleted: int = 0
    renamed: int = 0
    touched: int = 0
    embedded: int = 0
    links: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    changed_paths: list[str] = field(default_factory=list)
    deleted_paths: list[str] = field(default_factory=list)
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage (parse, embed)
    # the chunk hashes and lines of every re-parsed note, by seq: for the vector index, not
    # the report
    hashes: dict[str, list[str]] = field(default_factory=dict)
    lines: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    named: set[str] = field(default_factory=set)  # of those, the notes with a properties' chunk

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__ if k not in ("hashes", "lines", "named")}
        out["seconds"] = round(self.seconds, 3)
        return out


class Indexer:
    def __init__(
        self,
        vault: Vault,
        store: IndexStore,
        state: IndexState,
        chunk_options: ChunkOptions = ChunkOptions(),
        chunk_keys: ChunkKeys | None = None,
    ) -> None:
        self.vault = vault
        self.store = store
        self.state = state
        self.chunk_options = chunk_options
        # which chunk rows each note has (the vector index knows), so a save's are not read
        # back; not trusted for a note whose last write failed part-way
        self.chunk_keys = chunk_keys
        self.unsure: set[str] = set()
        self.failures: dict[str, str] = {}
        # The index was parsed by another version (``note.parsed_by``): the next full scan
        # reads every note, changed or not.
        self.stale = False

    @profile_as("index")
    def run(
        self,
        *,
        full: bool = False,
        scope: Iterable[str] | None = None,
        progress: Progress | None = None,
        searchable: Searchable | None = None,
    ) -> IndexReport:
        started = time.perf_counter()
        report = IndexReport()
        scope_set = frozenset(scope) if scope is not None else None
        full = full or (self.stale and scope is None)
        disk, indexed, cand, listing = self._candidates(full, scope_set)
        file_change = self._file_change(scope_set, listing)
        files: dict[str, NoteFile] = {}
        gone = list(cand.gone)
        failures = dict(self.failures)
        for path in cand.to_read:
            f = self.vault.read(path)
            if f.data is None or f.text is None:
                report.errors.append({"path": path, "error": f.error or "unreadable"})
                failures[path] = f.error or "unreadable"
                if path in indexed:
                    gone.append(path)
                continue
            failures.pop(path, None)
            files[path] = f
        for path in cand.gone:
            failures.pop(path, None)
        if scope is None:  # a full scan also forgets failures of files no longer there
            failures = {p: e for p, e in failures.items() if p in disk}
        self.failures = failures  # swapped whole: readers never see it half-updated
        hashes = {p: content_hash(f.data) for p, f in files.items() if f.data is not None}
        plan = classify(hashes, indexed, tuple(sorted(set(gone))), full=full)
        parsed = self._parse(plan.parse, files, hashes, progress)
        records = [self._record(note, files[note.path]) for note in parsed]
        with self.state.lock:
            records += [self._touched(self.state.notes[p], files[p]) for p in plan.touch]

        def told() -> None:
            if searchable is not None and (plan.parse or plan.delete):
                searchable(list(plan.parse), list(plan.delete))

        report.hashes = self._write(parsed, records, plan.delete, told, file_change)
        report.lines = {n.path: [(c.start_line, c.end_line) for c in n.chunks] for n in parsed}
        report.named = {n.path for n in parsed if n.chunks and is_properties(n.chunks[-1].chunk_id)}
        for note in parsed:
            if note.frontmatter_error:
                report.warnings.append({"path": note.path, "warning": note.frontmatter_error})
            if files[note.path].error:
                report.warnings.append({"path": note.path, "warning": str(files[note.path].error)})
        report.parsed = len(parsed)
        report.changed = len(plan.parse)
        report.changed_paths = list(plan.parse)
        report.deleted = len(plan.delete)
        report.deleted_paths = list(plan.delete)
        report.renamed = len(plan.renames)
        report.touched = len(plan.touch)
        with self.state.lock:
            report.notes = len(self.state.notes)
            report.chunks = sum(n.chunk_count for n in self.state.notes.values())
            report.links = self.state.link_stats()
        report.edges = report.links["total"] - report.links["self"]
        if scope is None and report.notes == 0:  # most often the wrong folder: say so
            report.warnings.append({"path": str(self.vault.root), "warning": EMPTY_VAULT})
        report.seconds = time.perf_counter() - started
        if scope is None:
            self.stale = False
        return report

    def backlog(self) -> int:
        """How many notes a full run would read or drop: one scan of file stats, no reads."""
        cand = self._candidates(self.stale, None)[2]
        return len(cand.to_read) + len(cand.gone)

    def _candidates(
        self, full: bool, scope: frozenset[str] | None
    ) -> tuple[dict[str, tuple[int, int]], dict[str, Indexed], Candidates, set[str] | None]:
        """Notes on disk, what the index knows of them, which to read or drop, and (after a
        full scan) the attachment files."""
        disk, listing = self._disk(scope)
        with self.state.lock:  # a watcher batch looks only at its own paths: O(batch), not O(vault)
            notes = self.state.notes
            paths = notes.keys() if scope is None else scope & notes.keys()
            indexed = {p: Indexed(notes[p].mtime_ns, notes[p].size, notes[p].content_hash)
                       for p in paths}  # fmt: skip
        return disk, indexed, candidates(disk, indexed, full=full, scope=scope), listing

    def _disk(
        self, scope: frozenset[str] | None
    ) -> tuple[dict[str, tuple[int, int]], set[str] | None]:
        if scope is None:
            notes, attachments = self.vault.scan_all()
            return {p: (s.mtime_ns, s.size) for p, s in notes.items()}, attachments
        out = {}
        for path in scope:
            if not self.vault.is_note(path) or not self.vault.inside(path):
                continue
            try:
                st = (self.vault.root / path).stat(follow_symlinks=False)
            except OSError:
                continue
            out[path] = (st.st_mtime_ns, st.st_size)
        return out, None

    def _file_change(self, scope: frozenset[str] | None, listing: set[str] | None) -> FileChange:
        """Which attachment files came or went: all of them after a full scan (or the first
        run, when none are known yet), else the batch's own paths."""
        folder = self.vault.obsidian.attachment_folder
        with self.state.lock:
            listed = self.state.files_listed
        if listing is None and not listed:
            listing = self.vault.scan_all()[1]
        with self.state.lock:  # a batch copies only its own paths, not every attachment's
            cat = self.state.catalog
            known = set(cat.files.values()) if listing is not None else {
                p for p in scope or () if cat.has_file(p)}  # fmt: skip
        if listing is not None:
            return FileChange(frozenset(listing - known), frozenset(known - listing), folder, True)
        assert scope is not None
        here = {p for p in scope if self.vault.attachment_exists(p)}
        return FileChange(frozenset(here - known), frozenset(known - here), folder)

    def _parse(
        self,
        paths: Iterable[str],
        files: dict[str, NoteFile],
        hashes: dict[str, str],
        progress: Progress | None,
    ) -> list[ParsedNote]:
        jobs = [(p, files[p].text or "", hashes[p]) for p in paths]
        return parse_all(jobs, self.chunk_options, progress)

    @staticmethod
    def _record(note: ParsedNote, f: NoteFile) -> NoteRecord:
        assert f.stat is not None
        return NoteRecord.from_parsed(note, f.stat.mtime_ns, f.stat.size, f.error)

    @staticmethod
    def _touched(old: NoteRecord, f: NoteFile) -> NoteRecord:
        assert f.stat is not None
        fields = {s: getattr(old, s) for s in NoteRecord.__slots__}
        fields.update(mtime_ns=f.stat.mtime_ns, size=f.stat.size)
        return NoteRecord(**fields)

    def _write(
        self,
        parsed: list[ParsedNote],
        records: list[NoteRecord],
        deletes: Iterable[str],
        searchable: Callable[[], None],
        file_change: FileChange | None = None,
    ) -> dict[str, list[str]]:
        """Chunks first, each note's row last: the row lists the hashes of the chunks it was
        written with, so a ``kill -9`` in between leaves rows that disagree with their chunks,
        and ``Services.open`` has those notes read again. Edges travel in their source's row;
        a note whose links now resolve differently is rewritten with its new edges.
        ``searchable`` is called between the two: search reads only the chunks and the
        in-memory state, so a save is announced without waiting for its row."""
        deletes = list(deletes)
        with self.state.lock:
            known = {n.path for n in parsed} & self.state.notes.keys()
            had = {r.path for r in records} & self.state.notes.keys()
        keys = None if self.chunk_keys is None or known & self.unsure else self.chunk_keys(known)
        writing = {n.path for n in parsed} | set(deletes)
        try:
            self.store.put_chunks(
                [c for n in parsed for c in n.chunks], sorted(known), deletes, keys
            )
            with self.state.lock:
                changed_edges = self.state.apply(records, deletes, file_change)
                written = {r.path for r in records}
                rewired = [self.state.notes[s] for s in changed_edges
                           if s not in written and s in self.state.notes]  # fmt: skip
                rows = [*records, *rewired]
                edges = {r.path: list(self.state.graph.out.get(r.path, ())) for r in rows}
            searchable()
            replacing = sorted(had | {r.path for r in rewired})
            self.store.put_notes(rows, edges, {n.path: n for n in parsed}, replacing, deletes)
        except BaseException:
            self.unsure |= writing  # their chunk rows may be written, the vector index not
            raise
        self.unsure -= writing
        return {n.path: [c.content_hash for c in n.chunks] for n in parsed}
