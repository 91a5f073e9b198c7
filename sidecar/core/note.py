"""Parse one note's text into a frozen ``ParsedNote``: the only entry point to the parsers."""

from __future__ import annotations

import hashlib
import posixpath

from sidecar.core.chunks import ChunkOptions, make_chunks, property_chunk
from sidecar.core.frontmatter import load_frontmatter, string_list
from sidecar.core.links import frontmatter_links
from sidecar.core.markdown import normalise, parse_body, split_lines
from sidecar.core.model import ParsedNote

# Bumped whenever ``parse_note`` reads a note differently: an index a different version made is
# read again whole once (``Indexer.stale``), the vectors of unchanged chunks carried over.
PARSER_VERSION = "marko-7"  # 2: links carry their columns; 3: long lists cut between items;
# 4: comments and HTML markup left out of chunk text; 5: a code span shows its ``%%``;
# 6: a piece that is nothing but embeds joins its neighbour; 7: no doubled space where a tag was


def parsed_by(options: ChunkOptions) -> str:
    """What made an index's parses: this parser, with these chunk sizes."""
    return f"{PARSER_VERSION}/{options.max_chars}/{options.overlap_chars}"


def content_hash(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def parse_note(
    path: str, text: str, digest: str, options: ChunkOptions = ChunkOptions()
) -> ParsedNote:
    """``path`` is vault-relative with ``/`` separators; ``digest`` the hash of the file bytes."""
    text = normalise(text)
    lines = split_lines(text)
    fm = load_frontmatter(lines)
    body_offset = sum(len(line) for line in lines[: fm.body_start])
    scanned = parse_body(text[body_offset:], fm.body_start + 1)
    data = fm.data
    title = _title(path, data, scanned.headings)
    tags = {
        t.lstrip("#"): None
        for t in string_list(data.get("tags", data.get("tag")), split_spaces=True)
    }
    tags.update(dict.fromkeys(scanned.tags))
    aliases = string_list(data.get("aliases", data.get("alias")))
    note_id = data.get("id")
    links = (*frontmatter_links(data, fm.raw), *scanned.links)
    chunks = make_chunks(path, title, scanned.headings, scanned.blocks, options)
    stem = posixpath.splitext(posixpath.basename(path))[0]
    props = property_chunk(path, title, stem, aliases, data, len(chunks),
                           (1, max(1, fm.body_start)), bool(chunks), options)  # fmt: skip
    if props is not None:
        chunks = (*chunks, props)
    return ParsedNote(
        path=path,
        title=title,
        content_hash=digest,
        frontmatter=data,
        frontmatter_error=fm.error,
        aliases=aliases,
        note_id=str(note_id) if isinstance(note_id, str | int) else None,
        tags=tuple(t for t in tags if t),
        headings=scanned.headings,
        block_ids=scanned.block_ids,
        links=links,
        chunks=chunks,
        line_count=len(lines),
    )


def _title(path: str, data: dict[str, object], headings: tuple[object, ...]) -> str:
    title = data.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    return posixpath.splitext(posixpath.basename(path))[0]
