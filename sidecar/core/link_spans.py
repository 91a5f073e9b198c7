"""Where links and headings sit in a document, to the column: pure functions over its lines.

The index knows each link's line but not its columns; an editor needs ranges (what is under the
cursor, what a rename replaces). The body's links are the ones the indexer's parser finds
(marko, ``core/markdown.py``), placed by its source offsets; a frontmatter line is YAML, and
its links are read on the line. Each is split into its parts: the name, the ``#anchor``, and
for wikilinks the ``|label`` (Dendron writes the note there, ``[[Label|note.name]]``). A link
that spans lines or names a reference definition has no one range to edit and is left out.
Columns are code points; the server converts to the client's encoding at the edge.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from sidecar.core.frontmatter import split_frontmatter
from sidecar.core.markdown import normalise, parse_body_cached
from sidecar.core.model import Heading

_WIKI = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
_MD = re.compile(r"!?\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^>\n]*>|[^)\s]+)[^)\n]*\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_DENDRON_URI = re.compile(r"^dendron://[^/]*/")


@dataclass(frozen=True, slots=True)
class Part:
    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class LinkAt:
    """One link on one line (0-based). ``name`` is the note part (URL-decoded for Markdown
    links), ``anchor`` the text after ``#``; ``label_name``/``label_anchor`` split the wikilink
    label the same way, for Dendron's label-first order."""

    line: int
    start: int
    end: int
    written: str
    wikilink: bool
    name: Part
    anchor: Part | None
    label_name: Part | None = None
    label_anchor: Part | None = None

    def contains(self, col: int) -> bool:
        return self.start <= col <= self.end


def split_lines(text: str) -> list[str]:
    """Lines without their endings; a trailing newline gives a last empty line, as in editors."""
    return text.split("\n") if "\r" not in text else re.split(r"\r\n|\r|\n", text)


def frontmatter_end(lines: Sequence[str]) -> int:
    """0-based index of the closing ``---`` (0 when there is no frontmatter)."""
    raw, body_start = split_frontmatter([line + "\n" for line in lines[:400]])
    return body_start - 1 if raw is not None else 0


def links_in(lines: Sequence[str]) -> Iterator[LinkAt]:
    """Every link in the document, frontmatter included, in order."""
    first = _body_start(lines)
    for i in range(first):
        if "[" in lines[i]:
            yield from links_on(i, lines[i])
    body = normalise("\n".join(lines[first:]))
    starts = [0, *(m.end() for m in re.finditer("\n", body))]
    for start, _ in parse_body_cached(body, first + 1).link_spans:
        row = bisect.bisect_right(starts, start) - 1
        line = lines[first + row]
        link = _link_at_column(first + row, line, start - starts[row])
        if link is not None:
            yield link


def line_links(lines: Sequence[str], i: int) -> list[LinkAt]:
    """The links on line ``i`` (0-based) as the document reads them: a line read alone can read
    otherwise (four spaces in, under a list item, it would be an indented code block)."""
    return [link for link in _document_links(tuple(lines)) if link.line == i]


@functools.lru_cache(maxsize=8)
def _document_links(lines: tuple[str, ...]) -> tuple[LinkAt, ...]:
    # A rename asks for each of a note's references in turn: one parse of the note serves all.
    return tuple(links_in(lines))


def _body_start(lines: Sequence[str]) -> int:
    end = frontmatter_end(lines)
    return end + 1 if end else 0


def links_on(i: int, line: str) -> Iterator[LinkAt]:
    """The links on one line read alone (a frontmatter value): as text, so its indentation
    makes no code block."""
    text = line.lstrip(" \t")
    indent = len(line) - len(text)
    for start, _ in parse_body_cached(normalise(text)).link_spans:
        link = _link_at_column(i, line, indent + start)
        if link is not None:
            yield link


def written_on(i: int, line: str) -> list[LinkAt]:
    """The links line ``i`` holds as text, without parsing it: for a line the note's parse
    already says holds a link (a ``note.references`` row), when only the columns are wanted."""
    out: list[LinkAt] = []
    for m in _OPENING.finditer(line):
        if out and m.start() < out[-1].end:
            continue
        link = _link_at_column(i, line, m.start())
        if link is not None:
            out.append(link)
    return out


_OPENING = re.compile(r"!?\[")


def _link_at_column(i: int, line: str, col: int) -> LinkAt | None:
    wiki = _WIKI.match(line, col)
    if wiki is not None:
        return _wiki(i, wiki)
    md = _MD.match(line, col)
    return _markdown(i, line, md) if md is not None else None


def _wiki(i: int, m: re.Match[str]) -> LinkAt:
    inner, base = m.group(1), m.start(1)
    bar = inner.find("|")
    target = inner if bar < 0 else inner[:bar].removesuffix("\\")
    name, anchor = _name_and_anchor(target, base)
    label_name = label_anchor = None
    if bar >= 0:
        label_name, label_anchor = _name_and_anchor(inner[bar + 1 :], base + bar + 1)
    return LinkAt(i, m.start(), m.end(), m.group(0), True, name, anchor, label_name, label_anchor)


def _name_and_anchor(text: str, base: int) -> tuple[Part, Part | None]:
    prefix = _DENDRON_URI.match(text.lstrip())
    skip = (len(text) - len(text.lstrip())) + (prefix.end() if prefix else 0)
    hash_at = text.find("#", skip)
    name_text = text[skip:] if hash_at < 0 else text[skip:hash_at]
    name = _part(name_text, base + skip)
    if hash_at < 0:
        return name, None
    return name, _part(text[hash_at + 1 :], base + hash_at + 1)


def _part(text: str, start: int) -> Part:
    """``text`` at ``start`` with surrounding spaces trimmed off the span."""
    lead = len(text) - len(text.lstrip())
    core = text.strip()
    return Part(core, start + lead, start + lead + len(core))


def _markdown(i: int, line: str, m: re.Match[str]) -> LinkAt | None:
    url, base = m.group(2), m.start(2)
    if url.startswith("<") and url.endswith(">"):
        url, base = url[1:-1], base + 1
    if not url or url.startswith(("#", "//")) or _SCHEME.match(url):
        return None
    hash_at = url.find("#")
    path = url if hash_at < 0 else url[:hash_at]
    name = Part(unquote(path.split("?", 1)[0]), base, base + len(path))
    anchor = None if hash_at < 0 else Part(unquote(url[hash_at + 1 :]), base + hash_at + 1,
                                           base + len(url))  # fmt: skip
    return LinkAt(i, m.start(), m.end(), line[m.start() : m.end()], False, name, anchor)


def link_at(lines: Sequence[str], line: int, col: int) -> LinkAt | None:
    # Every link opens with "[": a line without one spares the parse of the whole note (a
    # hub's references, asked anywhere in its text, parsed it twice per request).
    if not 0 <= line < len(lines) or "[" not in lines[line]:
        return None
    return next((link for link in links_in(lines) if link.line == line and link.contains(col)),
                None)  # fmt: skip


def headings(lines: Sequence[str]) -> tuple[Heading, ...]:
    """The document's headings (1-based lines, as the index has them)."""
    first = _body_start(lines)
    return parse_body_cached(normalise("\n".join(lines[first:])), first + 1).headings


def heading_at(lines: Sequence[str], line: int) -> Heading | None:
    if not 0 <= line < len(lines) or not _may_head(lines, line):
        return None
    return next((h for h in headings(lines) if h.line == line + 1), None)


_UNDERLINE = re.compile(r"(?:^|[\s>])(?:=+|-+)[ \t]*$")


def _may_head(lines: Sequence[str], line: int) -> bool:
    """Whether a heading could start on ``line``: an ATX one has a ``#``, a setext one an
    underline below its paragraph (the frontmatter has none). Only then is the note parsed."""
    if line < _body_start(lines):
        return False
    if "#" in lines[line]:
        return True
    for below in lines[line + 1 :]:
        if not below.strip():
            return False
        if _UNDERLINE.search(below):
            return True
    return False


def heading_text_span(line: str) -> tuple[int, int]:
    """Columns of an ATX heading's text (``## Text ##`` -> ``Text``); the whole line otherwise."""
    m = re.match(r"^( {0,3}#{1,6}[ \t]+)(.*?)(?:[ \t]+#+)?[ \t]*$", line)
    if m is None:
        return 0, len(line.rstrip())
    return m.end(1), m.end(1) + len(m.group(2))


def block_line(lines: Sequence[str], block_id: str) -> int | None:
    """0-based line ending in ``^block_id``."""
    pattern = re.compile(r"(?:^|\s)\^" + re.escape(block_id) + r"\s*$", re.I)
    return next((i for i, line in enumerate(lines) if pattern.search(line)), None)


def body_preview(lines: Sequence[str], start: int, count: int = 12) -> str:
    """``count`` lines from ``start`` (skipping the frontmatter when starting at 0)."""
    if start == 0:
        start = frontmatter_end(lines) + 1 if frontmatter_end(lines) else 0
    picked = list(lines[start : start + count])
    while picked and not picked[-1].strip():
        picked.pop()
    return "\n".join(picked)
