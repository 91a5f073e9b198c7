"""The frozen values the core hands to the store and the services.

A note is parsed once into a ``ParsedNote``; everything downstream (chunks, edges, the graph,
lint) reads these values and never the raw text again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

LinkState = Literal["valid", "broken", "ambiguous", "attachment", "self"]


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading's anchor is ``anchors.heading_key(text)``, computed where an anchor is checked:
    kept on every heading it cost ~70 bytes each (1.8 MB at 10k generated notes)."""

    level: int
    text: str
    line: int


@dataclass(frozen=True, slots=True)
class Block:
    """A top-level block of the body: a paragraph, a list, a table, a code fence... ``items``:
    in a list, where each item after the first starts (offsets in ``text``), for a list too long
    for one chunk to be cut between its items."""

    start_line: int
    end_line: int
    text: str
    breadcrumb: tuple[str, ...]
    is_code: bool = False
    items: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class LinkRef:
    """A link as written in the note, before resolution.

    ``target`` is the part before ``#``/``|`` (for Markdown links: the URL-decoded path);
    ``label`` is the text after ``|`` in a wikilink, which Dendron writes *before* the target,
    so resolution may swap the two. ``start``/``end`` are the whole link's columns on ``line``
    when the line up to the link's end is ASCII, so that every position encoding (UTF-8,
    UTF-16, code points) counts them alike and an editor can use them without the text; -1
    otherwise (non-ASCII before or in the link, a link across lines, a bare property name).

    ``context`` (the paragraph or property around the link) is set by the parser and stored in
    the note's row; the index's records in memory hold "" (``NoteRecord.from_parsed``), and
    the queries that show contexts read them from the rows (``services/link_context.py``).
    """

    target: str
    anchor: str
    relation: str
    text: str
    label: str
    wikilink: bool
    embed: bool
    markdown: bool
    line: int
    context: str
    start: int = -1
    end: int = -1


@dataclass(frozen=True, slots=True)
class Chunk:
    chunk_id: str
    path: str
    seq: int
    heading: str
    start_line: int
    end_line: int
    text: str
    content_hash: str
    embed_text: str  # what the model sees and BM25 indexes: title > breadcrumb, then the text

    @property
    def key(self) -> ChunkKey:
        """What decides whether its stored row is rewritten (``IndexStore.put_chunks``)."""
        return (self.chunk_id, self.content_hash, self.start_line, self.end_line, self.seq)


# a chunk row's id, content hash, start and end line and seq: one that keeps all of them is not
# rewritten (the properties' chunk is named, not numbered, and comes last: it moves)
ChunkKey = tuple[str, str, int, int, int]


@dataclass(frozen=True, slots=True)
class ParsedNote:
    path: str
    title: str
    content_hash: str
    frontmatter: dict[str, Any]
    frontmatter_error: str | None
    aliases: tuple[str, ...]
    note_id: str | None
    tags: tuple[str, ...]
    headings: tuple[Heading, ...]
    block_ids: tuple[str, ...]
    links: tuple[LinkRef, ...]
    chunks: tuple[Chunk, ...]
    line_count: int


@dataclass(frozen=True, slots=True)
class Edge:
    """A resolved, deduplicated link, kept in its source's row. Its context is its first
    link's, read from that row when a query shows it (``services/link_context.py``)."""

    source: str
    target: str | None
    raw: str
    relation: str
    text: str
    wikilink: bool
    embed: bool
    line: int
    anchor: str
    state: LinkState
    candidates: tuple[str, ...] = field(default=())

    @property
    def resolved(self) -> bool:
        return self.state == "valid"


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """What the index keeps about a note (everything but its chunks and resolved edges)."""

    path: str
    title: str
    content_hash: str
    mtime_ns: int
    size: int
    note_id: str | None
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    frontmatter: dict[str, Any]
    frontmatter_error: str | None
    headings: tuple[Heading, ...]
    block_ids: tuple[str, ...]
    links: tuple[LinkRef, ...]
    chunk_count: int
    line_count: int
    warning: str | None = None

    @classmethod
    def from_parsed(
        cls, note: ParsedNote, mtime_ns: int, size: int, warning: str | None = None
    ) -> NoteRecord:
        links = tuple(replace(link, context="") for link in note.links)
        return cls(
            note.path, note.title, note.content_hash, mtime_ns, size, note.note_id, note.aliases,
            note.tags, note.frontmatter, note.frontmatter_error, note.headings, note.block_ids,
            links, len(note.chunks), note.line_count, warning,
        )  # fmt: skip
