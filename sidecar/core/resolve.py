"""Resolve link targets to notes the way Obsidian does, and say so when it cannot.

Order for a wikilink: vault path (case-insensitive, ``.md`` optional), then a unique basename,
then a unique alias or frontmatter ``id``. A basename shared by several notes is narrowed by the
path suffix written in the link; if that still leaves several, the link goes where Obsidian
goes (``obsidian_choice``) and keeps its candidates, so lint still reports it as ambiguous. Markdown links resolve relative to the source's
folder first, then from the vault root. Dendron writes ``[[Label|note.name]]`` (label first): when
the written target does not resolve and the label does, the label is the target.

A link to an attachment (``![[diagram.png]]``, ``![](img/a.png)``) resolves as Obsidian resolves
any file link: the path as written (a Markdown link's relative to its note's folder first), else
the file name anywhere in the vault. A name several files share goes to the one in Obsidian's
attachment folder (``attachmentFolderPath``), else as a note's would (``obsidian_choice``). A
found attachment keeps state ``attachment`` with its path; one naming no file is ``broken``.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sidecar.core.model import Edge, LinkRef, LinkState

NOTE_EXTENSIONS = (".md", ".markdown")
# Files a vault links to that are not notes (Obsidian's accepted formats plus common documents).
# Anything else after a dot is part of a note's name: Dendron's ``dendron.topic.lookup``.
ATTACHMENT_EXTENSIONS = frozenset(
    [
        ".avif",
        ".bmp",
        ".gif",
        ".jpeg",
        ".jpg",
        ".png",
        ".svg",
        ".webp",
        ".heic",
        ".tif",
        ".tiff",
        ".ico",
        ".flac",
        ".m4a",
        ".mp3",
        ".ogg",
        ".wav",
        ".3gp",
        ".mkv",
        ".mov",
        ".mp4",
        ".ogv",
        ".webm",
        ".pdf",
        ".canvas",
        ".base",
        ".excalidraw",
        ".csv",
        ".tsv",
        ".json",
        ".yml",
        ".yaml",
        ".txt",
        ".html",
        ".htm",
        ".zip",
        ".docx",
        ".xlsx",
        ".pptx",
        ".drawio",
        ".ipynb",
        ".py",
        ".js",
        ".ts",
        ".sh",
    ]
)


@dataclass(frozen=True, slots=True)
class NoteKey:
    """What a link can match a note by."""

    path: str
    aliases: tuple[str, ...] = ()
    note_id: str | None = None


@dataclass(frozen=True, slots=True)
class Resolution:
    target: str | None
    state: LinkState
    candidates: tuple[str, ...] = ()
    swapped: bool = False  # Dendron order: the label named the note


@dataclass(slots=True)
class Catalog:
    """Lookup tables over every note's path, basename, aliases and id."""

    paths: dict[str, str] = field(default_factory=dict)
    # Paths by name as tuples (``_put``, ``_drop``): most names are one note's, and a list of
    # one is twice a tuple's size.
    basenames: dict[str, tuple[str, ...]] = field(default_factory=dict)
    names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exact: set[str] = field(default_factory=set)
    files: dict[str, str] = field(default_factory=dict)  # attachment paths, by lowercase path
    file_names: dict[str, tuple[str, ...]] = field(default_factory=dict)  # ... by lowercase name
    attachment_folder: str | None = None  # Obsidian's ``attachmentFolderPath``

    @classmethod
    def build(
        cls, notes: Iterable[NoteKey], attachments: Iterable[str] = (),
        attachment_folder: str | None = None,
    ) -> Catalog:  # fmt: skip
        cat = cls(attachment_folder=attachment_folder)
        for note in notes:
            cat.add(note)
        for path in attachments:
            cat.add_file(path)
        return cat

    def add_file(self, path: str) -> None:
        # Two paths differing only in case: the path lookup finds the first sorted.
        key = _nfc(path).lower()
        self.files[key] = min(path, self.files.get(key, path))
        _put(self.file_names, file_name_key(path), path)

    def has_file(self, path: str) -> bool:
        return path in self.file_names.get(file_name_key(path), ())

    def remove_file(self, path: str) -> None:
        key = _nfc(path).lower()
        _drop(self.file_names, file_name_key(path), path)
        if self.files.get(key) == path:
            del self.files[key]
            for other in self.file_names.get(file_name_key(path), ()):
                if _nfc(other).lower() == key:
                    self.add_file(other)

    def add(self, note: NoteKey) -> None:
        self.exact.add(note.path)
        stem = _strip_ext(_nfc(note.path))
        self.paths[stem.lower()] = note.path
        _put(self.basenames, posixpath.basename(stem).lower(), note.path)
        for name in _names(note):
            _put(self.names, name, note.path)

    def remove(self, note: NoteKey) -> None:
        self.exact.discard(note.path)
        stem = _strip_ext(_nfc(note.path))
        if self.paths.get(stem.lower()) == note.path:
            del self.paths[stem.lower()]
        _drop(self.basenames, posixpath.basename(stem).lower(), note.path)
        for name in _names(note):
            _drop(self.names, name, note.path)

    def resolve(self, link: LinkRef, source: str) -> Resolution:
        first = self._resolve_target(link, link.target, source)
        if first.state in ("valid", "self", "attachment") or not link.label or not link.wikilink:
            return first
        name = link.label.partition("#")[0]
        swapped = self._resolve_target(link, name, source) if name.strip() else first
        if swapped.state not in ("valid", "self"):
            return first
        return Resolution(swapped.target, swapped.state, swapped.candidates, swapped=True)

    def _resolve_target(self, link: LinkRef, target: str, source: str) -> Resolution:
        target = _nfc(target.strip().replace("\\", "/"))
        ext = posixpath.splitext(target)[1].lower()
        if ext in ATTACHMENT_EXTENSIONS and not self._is_dotted_note(target):
            return self._attachment(link, target, source)
        found = self._by_markdown_path(target, source) if link.markdown else None
        if found is None:
            found = self._by_name(target, source)
        if found.target == source:
            return Resolution(source, "self", found.candidates)
        return found

    def _is_dotted_note(self, target: str) -> bool:
        """``dendron.topic.lookup`` has an "extension" but names a note."""
        key = target.lower().lstrip("/")
        return key in self.paths or posixpath.basename(key) in self.basenames

    def _attachment(self, link: LinkRef, target: str, source: str) -> Resolution:
        written = target.lstrip("/").lower()
        named = self.file_names.get(posixpath.basename(written), ())
        bases = (_nfc(posixpath.dirname(source)).lower(), "") if link.markdown else ("",)
        for base in bases:
            joined = posixpath.normpath(posixpath.join(base, written))
            # As for notes (``_by_name``): a bare name several files share is a name, even
            # when one of them lies at the vault root.
            shared = not base and "/" not in joined and len(named) > 1
            if not joined.startswith("../") and joined in self.files and not shared:
                return Resolution(self.files[joined], "attachment")
        pool = [p for p in named if ("/" + _nfc(p).lower()).endswith("/" + written)] or named
        if not pool:
            return Resolution(None, "broken")
        folder = self._attachment_folder(source)
        choice = [p for p in pool if posixpath.dirname(p) == folder] or pool
        several = tuple(sorted(choice)) if len(choice) > 1 else ()  # linted as for notes
        return Resolution(obsidian_choice(choice, source), "attachment", several)

    def _attachment_folder(self, source: str) -> str | None:
        """Where Obsidian puts a new attachment of ``source``: a vault folder, or with ``./``
        one relative to the note's folder (``./`` itself is the note's folder)."""
        setting = self.attachment_folder
        if setting is None:
            return None
        if setting == "." or setting.startswith("./"):
            folder = posixpath.normpath(posixpath.join(posixpath.dirname(source), setting))
        else:
            folder = posixpath.normpath(setting.strip("/") or ".")
        return "" if folder == "." else folder

    def _by_markdown_path(self, target: str, source: str) -> Resolution | None:
        folder = _nfc(posixpath.dirname(source))
        for base in (folder, ""):
            joined = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
            if joined.startswith("../") or joined == "..":
                continue
            hit = self.paths.get(_strip_ext(joined).lower())
            if hit is not None:
                return Resolution(hit, "valid")
        return None

    def _by_name(self, target: str, source: str) -> Resolution:
        written = target.lstrip("/").lower()
        # The name as written first: [[dendron.topic.markdown]] names dendron.topic.markdown.md,
        # not dendron.topic.md with a ".markdown" extension.
        keys = dict.fromkeys([written, _strip_ext(written)])
        for key in keys:
            hit = self.paths.get(key)
            # A bare name that is also a root note's path is still a name several notes may
            # share: Obsidian prefers the linking note's folder over the root.
            if hit is not None and ("/" in key or len(self.basenames.get(key, ())) < 2):
                return Resolution(hit, "valid")
        for key in keys:
            found = self._unique(self.basenames.get(posixpath.basename(key), ()), key, source)
            if found.state != "broken":
                return found
        return self._unique(self.names.get(target.strip().lower(), ()), written, source)

    @staticmethod
    def _unique(candidates: Sequence[str], key: str, source: str) -> Resolution:
        if not candidates:
            return Resolution(None, "broken")
        if len(candidates) == 1:
            return Resolution(candidates[0], "valid")
        stems = {c: _strip_ext(_nfc(c)).lower() for c in candidates}
        narrowed = [c for c in candidates if stems[c] == key or stems[c].endswith("/" + key)]
        if len(narrowed) == 1:
            return Resolution(narrowed[0], "valid")
        pool = narrowed or candidates
        return Resolution(obsidian_choice(pool, source), "valid", tuple(sorted(pool)))


def obsidian_choice(candidates: Iterable[str], source: str) -> str:
    """The note Obsidian opens for a name several notes share: the one in the linking note's
    own folder, else the one with the shortest path (``README.md``, "How links resolve")."""
    folder = posixpath.dirname(source)
    pool = sorted(candidates, key=lambda p: (len(p), p))
    return next((p for p in pool if posixpath.dirname(p) == folder), pool[0])


def lookup_keys(note: NoteKey) -> set[str]:
    """The lowercase names under which links can find this note (see ``link_keys``)."""
    return {posixpath.basename(_strip_ext(_nfc(note.path))).lower(), *_names(note)}


def names_attachment(target: str) -> bool:
    """Whether a link's target, as written, names an attachment file rather than a note."""
    return posixpath.splitext(target.strip())[1].lower() in ATTACHMENT_EXTENSIONS


def missing_attachment(edge: Edge) -> bool:
    """Whether a broken edge names an attachment file (``![[gone.png]]``), not a note."""
    if edge.state != "broken":  # every edge passes here when the graph loads: the cheap test first
        return False
    return names_attachment(edge.raw.removesuffix(f"#{edge.anchor}") if edge.anchor else edge.raw)


def file_name_key(path: str) -> str:
    """The lowercase name under which links find an attachment file (one of ``link_keys``)."""
    return posixpath.basename(_nfc(path)).lower()


def link_keys(link: LinkRef) -> set[str]:
    """The lowercase names a link could resolve through; a catalog change touching none of them
    cannot change the link's resolution. Names are read as ``_resolve_target`` reads them
    (``\\`` is ``/``), and a last part is tried with and without its extension, as ``_by_name``
    does (``folder/topic.markdown`` may name ``topic.markdown.md``)."""
    keys: set[str] = set()
    for written in (link.target, link.label.partition("#")[0] if link.label else ""):
        name = _nfc(written.strip().replace("\\", "/")).lower()
        if name:
            last = posixpath.basename(name)
            keys |= {name, last, posixpath.basename(_strip_ext(name))}
    return keys


def _names(note: NoteKey) -> list[str]:
    names = [*note.aliases, *([note.note_id] if note.note_id else [])]
    return [_nfc(n).strip().lower() for n in names if n.strip()]


def _nfc(text: str) -> str:
    """Names compare in NFC: macOS writes file names decomposed (NFD) and editors type links
    composed, so ``[[café]]`` must find ``cafe\u0301.md`` (and the other way round)."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _put(table: dict[str, tuple[str, ...]], key: str, path: str) -> None:
    paths = table.get(key, ())
    if path not in paths:
        table[key] = (*paths, path)


def _drop(table: dict[str, tuple[str, ...]], key: str, path: str) -> None:
    kept = tuple(p for p in table.get(key, ()) if p != path)
    if kept:
        table[key] = kept
    else:
        table.pop(key, None)


def _strip_ext(path: str) -> str:
    root, ext = posixpath.splitext(path)
    return root if ext.lower() in NOTE_EXTENSIONS else path


def resolve_links(source: str, links: Iterable[LinkRef], catalog: Catalog) -> list[Edge]:
    """Resolve and deduplicate one note's links by (target, relation), keeping the first."""
    edges: dict[tuple[str, str], Edge] = {}
    for link in links:
        res = catalog.resolve(link, source)
        name, anchor, text = link.target, link.anchor, link.text
        if res.swapped:
            name, _, anchor = link.label.partition("#")
            text = link.target
        raw = name + (f"#{anchor}" if anchor else "")
        key = (res.target or name.lower(), link.relation)
        if key in edges:
            continue
        edges[key] = Edge(
            source, res.target, raw, link.relation, text, link.wikilink, link.embed, link.line,
            anchor, res.state, res.candidates,
        )  # fmt: skip
    return list(edges.values())
