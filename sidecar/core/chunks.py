"""Heading-aware chunks that stay under the embedding model's token limit.

A chunk is one section (the text under a heading, down to the next heading); a long section is
split at paragraph, then sentence boundaries, with the previous piece's last sentence carried
over as a small overlap. ``max_chars`` approximates the 256-token limit of all-MiniLM-L6-v2
(English wordpiece runs ~4 chars a token; code and URLs run shorter, so we leave headroom).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sidecar.core.model import Block, Chunk, Heading

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


@dataclass(frozen=True, slots=True)
class ChunkOptions:
    max_chars: int = 900
    overlap_chars: int = 160


def embedding_input(title: str, heading: str, text: str) -> str:
    """What the model sees for a chunk: the note title and breadcrumb situate the text."""
    head = f"{title} > {heading}" if heading and heading != title else title
    return f"{head}\n{text}" if head else text


def chunk_hash(title: str, heading: str, text: str) -> str:
    return embedding_hash(embedding_input(title, heading, text))


def embedding_hash(embed: str) -> str:
    """The content hash of a chunk whose model input is ``embed``: its vector's key."""
    return hashlib.sha1(embed.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class _Piece:
    start: int
    end: int
    text: str
    joint: str = "\n\n"  # what joins it to the piece before it in one chunk


def make_chunks(
    path: str,
    title: str,
    headings: Sequence[Heading],
    blocks: Sequence[Block],
    options: ChunkOptions = ChunkOptions(),
) -> tuple[Chunk, ...]:
    heading_lines = [h.line for h in headings]
    sections: dict[int, list[Block]] = {}
    for block in blocks:
        sections.setdefault(bisect.bisect_right(heading_lines, block.start_line) - 1, []).append(
            block
        )
    placed = [
        (" > ".join(sections[index][0].breadcrumb), piece)
        for index in sorted(sections)
        for piece in _pack(sections[index], options)
    ]
    chunks: list[Chunk] = []
    for crumb, piece in _join_bare(placed):
        seq = len(chunks)
        embed = embedding_input(title, crumb, piece.text)  # built once: it is also hashed
        chunks.append(Chunk(f"{path}#{seq}", path, seq, crumb, piece.start, piece.end,
                            piece.text, embedding_hash(embed), embed))  # fmt: skip
    return tuple(chunks)


_EMBED_LINE = re.compile(r"[ \t]*(?:!\[\[[^\[\]\n]+\]\][ \t]*)+")


def _bare(text: str) -> bool:
    """Nothing but embeds (``![[note]]``): a reader sees another note there, not this text."""
    return all(_EMBED_LINE.fullmatch(line) for line in text.splitlines())


def _join_bare(placed: list[tuple[str, _Piece]]) -> list[tuple[str, _Piece]]:
    """A piece of nothing but embeds joins the piece after it (the last one, the piece before
    it) and takes that piece's heading: alone, its text is the embedded note's path, a chunk of
    a few words that outranks in BM25 the notes those words are about (dendron-site's
    ``![[dendron.topic.seed-bank.quickstart]]`` above that note for "seed bank quickstart").
    A note with nothing else keeps it as its only chunk."""
    if len(placed) < 2:
        return placed
    out: list[tuple[str, _Piece]] = []
    held: _Piece | None = None
    for crumb, piece in placed:
        if held is not None:
            piece = _Piece(held.start, piece.end, held.text + "\n\n" + piece.text)
            held = None
        if _bare(piece.text):
            held = piece
            continue
        out.append((crumb, piece))
    if held is not None:
        if out:
            crumb, last = out[-1]
            out[-1] = (crumb, _Piece(last.start, held.end, last.text + "\n\n" + held.text))
        else:
            out.append((placed[-1][0], held))
    return out


def _pack(section: Sequence[Block], options: ChunkOptions) -> list[_Piece]:
    pieces: list[_Piece] = []
    current: _Piece | None = None
    for unit in _units(section, options.max_chars):
        if current is None:
            current = unit
            continue
        if len(current.text) + len(unit.joint) + len(unit.text) <= options.max_chars:
            current = _Piece(current.start, unit.end, current.text + unit.joint + unit.text)
            continue
        pieces.append(current)
        tail = _overlap(current.text, options.overlap_chars)
        if tail and len(tail) + 1 + len(unit.text) <= options.max_chars:
            unit = _Piece(unit.start, unit.end, tail + "\n" + unit.text)
        current = unit
    if current is not None:
        pieces.append(current)
    return pieces


def _units(section: Sequence[Block], max_chars: int) -> list[_Piece]:
    """Blocks, with any block longer than ``max_chars`` split: a list into its items, then
    what is still too long into sentence-sized pieces."""
    units: list[_Piece] = []
    for block in section:
        if len(block.text) <= max_chars:
            units.append(_Piece(block.start_line, block.end_line, block.text))
            continue
        line = block.start_line
        for item, joint in _items(block):
            text = item.rstrip()
            if len(text) <= max_chars:
                units.append(_Piece(line, line + text.count("\n"), text, joint))
                line += item.count("\n")
                continue
            for part in _split_long(item, max_chars):
                end = line + part.count("\n")
                units.append(_Piece(line, min(end, block.end_line), part.strip()))
                line = min(end, block.end_line)
    return [u for u in units if u.text]


def _items(block: Block) -> Iterator[tuple[str, str]]:
    """A list's items with what joins each to the one before (a tight list's line end, a
    loose list's blank line); any other block whole."""
    cuts = [0, *block.items, len(block.text)]
    for i in range(len(cuts) - 1):
        item = block.text[cuts[i] : cuts[i + 1]]
        before = block.text[cuts[i - 1] : cuts[i]] if i else ""
        gap = before[len(before.rstrip()) :]
        yield item, "\n" if i and gap.count("\n") == 1 else "\n\n"


def _split_long(text: str, max_chars: int) -> list[str]:
    parts: list[str] = []
    buf = ""
    for sentence in _SENTENCE.split(text) if "\n" not in text else text.splitlines(keepends=True):
        while len(sentence) > max_chars:
            cut = sentence.rfind(" ", 0, max_chars)
            cut = cut if cut > max_chars // 2 else max_chars
            parts.append(sentence[:cut])
            sentence = sentence[cut:]
        if buf and len(buf) + len(sentence) + 1 > max_chars:
            parts.append(buf)
            buf = ""
        buf = f"{buf} {sentence}" if buf and not buf.endswith("\n") else buf + sentence
    if buf:
        parts.append(buf)
    return parts


def _overlap(text: str, limit: int) -> str:
    if limit <= 0:
        return ""
    sentences = _SENTENCE.split(text.strip())
    tail = sentences[-1] if sentences else ""
    return tail if 0 < len(tail) <= limit and tail != text.strip() else ""


# Keys whose values say nothing a reader would search for: styling, Obsidian Publish's switch,
# and Dendron's random ids.
# The properties' chunk is named, not numbered (``Note.md#properties``): what the note is
# (its name and properties) is told apart from what it says wherever a chunk id is at hand.
PROPERTIES_ID = "properties"


def is_properties(chunk_id: str) -> bool:
    return chunk_id.rsplit("#", 1)[-1] == PROPERTIES_ID


_QUIET_KEYS = frozenset({"cssclasses", "cssclass", "publish", "id", "position"})
_WIKI_VALUE = re.compile(r"!?\[\[([^\[\]|#\n]*)(?:#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]")
_MD_VALUE = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")
_MAX_VALUE_CHARS = 200
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://\S*$")
# Dendron writes created/updated as epoch milliseconds: digits, not words.
_EPOCH_MS = 10**11


def property_chunk(
    path: str,
    title: str,
    stem: str,
    aliases: Sequence[str],
    data: Mapping[str, Any],
    seq: int,
    lines: tuple[int, int],
    has_body: bool,
    options: ChunkOptions = ChunkOptions(),
) -> Chunk | None:
    """The note as its properties describe it: file name (when not the title), aliases, and
    each scalar or list property as ``key: value`` with links as their display text. The
    title comes first in what is searched and embedded (``embedding_input``). A note with a
    body and nothing to say here gets no such chunk; a note with no body always gets one, so
    it is found by its name."""
    parts = [stem] if stem.strip().lower() != title.strip().lower() else []
    if aliases:
        parts.append("aliases: " + ", ".join(aliases))
    for key, value in data.items():
        if key.lower() in _QUIET_KEYS or key.lower() in ("title", "aliases", "alias"):
            continue
        shown = ", ".join(v for v in _shown_values(value) if v)
        if shown:
            parts.append(f"{key}: {shown}")
    if not parts and has_body:
        return None
    text = "\n".join(parts)[: options.max_chars]
    return Chunk(f"{path}#{PROPERTIES_ID}", path, seq, "", lines[0], lines[1], text or title,
                 chunk_hash(title, "", text or title), embedding_input(title, "", text))  # fmt: skip


def _shown_values(value: Any) -> Iterator[str]:
    if isinstance(value, list):
        for item in value:
            if not isinstance(item, dict | list):
                yield from _shown_values(item)
    elif isinstance(value, bool):
        yield "yes" if value else "no"
    elif isinstance(value, int | float):
        if abs(value) < _EPOCH_MS:
            yield str(value)
    elif isinstance(value, str):
        text = _WIKI_VALUE.sub(lambda m: (m.group(2) or m.group(1)).strip(), value)
        text = _MD_VALUE.sub(lambda m: m.group(1), text).strip()
        if not _URL.match(text):  # a cover image's address is not what the note is about
            yield text[:_MAX_VALUE_CHARS]
