"""Read a note's body with marko (``syntax.py``) and keep what the index needs, with lines.

Out of marko's tree come the headings (level, plain text, line), the blocks that chunks are
made of (each top-level block's source text and lines, its heading breadcrumb, whether it is
code), every link occurrence (line, and the paragraph, list item, heading or table row around
it as context), tags and block ids. What a renderer hides or shows verbatim holds none of
these: code, math, raw HTML, comments. A block's text is its source as a reader sees it:
without comments (``%%...%%``, ``<!-- ... -->``) and without raw HTML's tags.
"""

from __future__ import annotations

import bisect
import functools
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from marko import block, inline
from marko.ext import footnote
from marko.ext.gfm import elements as gfm

from sidecar.core import syntax
from sidecar.core.links import markdown_link, wikilink
from sidecar.core.model import Block, Heading, LinkRef

_PARSER = syntax.new_parser(text_only_plain=True)
CONTEXT_CHARS = 400
# Cut marks are ASCII: one "…" in a string makes CPython store all of it at two bytes a
# character (a parse holds every context of its batch's notes).
CUT = "..."

_FLAT = re.compile(r"^[ \t>]+", re.M)
_DEEP = re.compile(r"^[ \t>]{240}", re.M)
_CODE_BLOCKS = (block.FencedCode, block.CodeBlock, syntax.MathBlock)
_OPAQUE = (inline.CodeSpan, inline.InlineHTML, syntax.Comment, syntax.InlineMath)
_SKIP = (*_CODE_BLOCKS, inline.CodeSpan, syntax.Comment, syntax.InlineMath, syntax.CommentBlock)
_UNSEEN = (syntax.Comment, syntax.CommentBlock)
# An HTML comment, as CommonMark ends one (``<!-->`` and ``<!--->`` too; unclosed, it runs to
# the end of its HTML block), or an open or closing tag, attributes and all.
_HTML_MARKUP = re.compile(
    r"<!--(?:-?>|[\s\S]*?-->|[\s\S]*)"
    r"|</?[A-Za-z][A-Za-z0-9-]*(?:\s+[^<>\"']*(?:(?:\"[^\"]*\"|'[^']*')[^<>\"']*)*)?/?>"
)
_CONTEXT = (block.Paragraph, block.Heading, block.SetextHeading, gfm.TableRow)


class _Kind:
    """What the walk does with an element, decided once per element type. Plain numbers, not
    an ``enum``: looking up an Enum member costs ~200 ns, and the walk compares a few for
    every element of every note."""

    PLAIN = 0  # nothing of its own: walk its children
    TEXT = 1  # a run of text: no children to walk
    SKIP = 2  # code, comments, math: nothing inside counts
    HEADING = 3
    CONTEXT = 4  # paragraph, table row: the context of the links in it
    HTML = 5
    AUTOLINK = 6
    WIKILINK = 7
    LINK = 8
    IMAGE = 9
    TAG = 10
    BLOCK_ID = 11


# The first entry a class is a subclass of gives its kind, in the order the tests once ran per
# element (a Heading is also a context).
_BY_CLASS: tuple[tuple[Any, int], ...] = (
    (_SKIP, _Kind.SKIP),
    (block.Heading | block.SetextHeading, _Kind.HEADING),
    (_CONTEXT, _Kind.CONTEXT),
    (block.HTMLBlock | inline.InlineHTML, _Kind.HTML),
    (inline.AutoLink, _Kind.AUTOLINK),
    (syntax.WikiLink, _Kind.WIKILINK),
    (inline.Image, _Kind.IMAGE),
    (inline.Link, _Kind.LINK),
    (syntax.Tag, _Kind.TAG),
    (syntax.BlockId, _Kind.BLOCK_ID),
)


def _kind(cls: type[Any]) -> int:
    if cls is inline.RawText:
        return _Kind.TEXT
    return next((kind for types, kind in _BY_CLASS if issubclass(cls, types)), _Kind.PLAIN)


_KINDS: dict[type[Any], int] = {}
_RAW_TEXT = inline.RawText


@dataclass(frozen=True, slots=True)
class Scanned:
    headings: tuple[Heading, ...]
    blocks: tuple[Block, ...]
    tags: tuple[str, ...]
    block_ids: tuple[str, ...]
    links: tuple[LinkRef, ...]
    link_spans: tuple[tuple[int, int], ...]  # body offsets of every wikilink and Markdown link
    hidden: tuple[tuple[int, int], ...]  # body offsets of links, code, HTML, comments, math


def normalise(text: str) -> str:
    """Line ends as marko reads them (``\\r\\n``, ``\\r``, form feed: one ``\\n``), so that
    marko's offsets, our line numbers and an editor's agree."""
    if "\r" in text or "\f" in text or "\x00" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")
        text = text.replace("\x00", "\ufffd")
    return text


def split_lines(text: str) -> list[str]:
    """Lines with their ``\n`` (only ``\n``: ``str.splitlines`` also splits at characters
    such as U+2028 that neither marko nor an editor treats as a line end)."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def slugify(text: str) -> str:
    """Heading anchor as Obsidian matches it: case-insensitive, punctuation-insensitive."""
    return " ".join(re.sub(r"[^\w\s-]", " ", text.lower()).split())


def parse_body(body: str, first_line: int = 1) -> Scanned:
    """``body`` is normalised text whose first line is line ``first_line`` of the file."""
    return _Reader(body, first_line).read()


@functools.lru_cache(maxsize=16)
def parse_body_cached(body: str, first_line: int = 1) -> Scanned:
    """``parse_body`` remembered for the last few texts: an editor asks one document for its
    links, then its headings, then its mentions, and one parse serves them all (the index
    parses each note once and does not need it)."""
    return parse_body(body, first_line)


class _Reader:
    def __init__(self, body: str, first_line: int) -> None:
        self.body = body
        self.first_line = first_line
        self.starts = [0, *(m.end() for m in re.finditer("\n", body))]
        self.headings: list[Heading] = []
        self.blocks: list[Block] = []
        self.links: list[LinkRef] = []
        self.tags: dict[str, None] = {}
        self.block_ids: dict[str, None] = {}
        self.crumbs: list[tuple[int, str]] = []
        self.spans: list[tuple[int, int]] = []
        self.hidden: list[tuple[int, int]] = []
        self.unseen: list[tuple[int, int]] = []  # the current block's comments and HTML tags
        self.flattened = False  # offsets no longer match the note's text: no link columns

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1 + self.first_line

    def read(self) -> Scanned:
        try:
            if _DEEP.search(self.body):
                raise RecursionError  # known to be too deep: skip the doomed first try
            doc = _PARSER.parse(self.body)
        except RecursionError:
            # Containers nested hundreds deep (``>>>>…``, a list indented 1,000 levels) run
            # out of Python's stack in marko: read the lines with their nesting taken away.
            self.body = _FLAT.sub(lambda m: "> " if ">" in m.group(0) else "", self.body)
            self.flattened = True
            doc = _PARSER.parse(self.body)
        for el in doc.children:
            if isinstance(el, block.BlankLine | block.LinkRefDef | syntax.CommentBlock):
                continue
            if isinstance(el, block.Heading | block.SetextHeading):
                level = el.level
                while self.crumbs and self.crumbs[-1][0] >= level:
                    self.crumbs.pop()
                self.crumbs.append((level, plain(el.children)))
                self.visit(el, None)
                continue
            span = el.source_span
            if span is None or isinstance(el, block.ThematicBreak):
                continue
            text = self.body[span[0] : span[1]].rstrip()
            if not text.strip():
                continue
            start = self.line(span[0])
            code = isinstance(el, _CODE_BLOCKS)
            items = _item_offsets(el) if isinstance(el, block.List) else ()
            if not code:
                self.unseen.clear()
                self.visit(el, None)
                if self.unseen:  # what no reader sees is no chunk's text
                    text, skipped, items = _seen(self.body, span, self.unseen, items)
                    if not text:
                        continue
                    start += skipped
            end = start + text.count("\n")
            crumb = tuple(t for _, t in self.crumbs)
            self.blocks.append(Block(start, end, text, crumb, code, items))
        return Scanned(tuple(self.headings), tuple(self.blocks), tuple(self.tags),
                       tuple(self.block_ids), tuple(self.links), tuple(self.spans),
                       tuple(self.hidden))  # fmt: skip

    def visit(self, el: Any, context: Any) -> None:
        """Walk one element's subtree; ``context`` is the innermost paragraph-like block."""
        kind = _KINDS.get(type(el))
        if kind is None:
            kind = _KINDS[type(el)] = _kind(type(el))
        if kind == _Kind.TEXT:
            return
        if kind != _Kind.PLAIN:
            if kind == _Kind.SKIP:
                if isinstance(el, inline.InlineElement) and el.source_span:
                    self.hidden.append(el.source_span)
                if isinstance(el, _UNSEEN) and el.source_span:
                    self.unseen.append(el.source_span)
                return
            if kind == _Kind.HEADING:
                if el.source_span:
                    self.headings.append(
                        Heading(el.level, plain(el.children), self.line(el.source_span[0]))
                    )
                context = el
            elif kind == _Kind.CONTEXT:
                context = el
            elif kind == _Kind.HTML:
                if el.source_span:
                    self.hidden.append(el.source_span)
                    self.html_markup(el)
                self.html_links(el, context)
                return
            elif kind == _Kind.AUTOLINK:
                if el.source_span:
                    self.hidden.append(el.source_span)
            elif kind == _Kind.WIKILINK:
                self.add(wikilink(el.inner, el.embed, "link", 0, ""), el, context)
                if el.source_span:
                    self.hidden.append(el.source_span)
                    self.spans.append(el.source_span)
                return
            elif kind == _Kind.LINK or kind == _Kind.IMAGE:
                image = kind == _Kind.IMAGE
                self.add(markdown_link(html.unescape(el.dest), plain(el.children), image),
                         el, context)  # fmt: skip
                if el.source_span:
                    self.hidden.append(el.source_span)
                    self.spans.append(el.source_span)
                if image:
                    return  # an image's description is its alt text: a link in it is no link
            elif kind == _Kind.TAG:
                self.tags.setdefault(el.name, None)
            elif kind == _Kind.BLOCK_ID:
                self.block_ids.setdefault(el.name, None)
        children = getattr(el, "children", None)
        if isinstance(children, list):
            for child in children:
                if type(child) is not _RAW_TEXT:  # most children: nothing to walk
                    self.visit(child, context)

    def html_markup(self, el: Any) -> None:
        """No reader sees raw HTML's markup (Obsidian's reading view included): a comment,
        and a tag with its attributes, in an HTML block or inline, are left out of the
        block's text; the text between tags stays."""
        start, end = el.source_span
        if isinstance(el, inline.InlineHTML):
            self.unseen.append((start, end))
        else:
            for m in _HTML_MARKUP.finditer(self.body, start, end):
                self.unseen.append(m.span())

    def html_links(self, el: Any, context: Any) -> None:
        """Raw HTML is rendered as written: its ``<a href>`` and ``<img src>`` are links (and
        Markdown written inside it is not Markdown)."""
        if el.source_span is None:
            return
        raw = el.body if isinstance(el, block.HTMLBlock) else el.children
        if "href" not in raw and "src" not in raw:
            return
        tags = _HTMLLinks()
        tags.feed(raw)
        tags.close()
        line_offsets = [0, *(m.end() for m in re.finditer("\n", raw))]
        for (line, col), embed, url in tags.found:
            at = el.source_span[0] + line_offsets[line - 1] + col
            self.add(markdown_link(url, "", embed), el, context or el, at)

    def add(self, link: LinkRef | None, el: Any, context: Any, at: int | None = None) -> None:
        if link is None:
            return
        columns = (-1, -1)
        if at is None:  # a wikilink or Markdown link, which marko placed (not one in HTML)
            columns = self.columns(el.source_span)
            at = el.start_pos if el.start_pos is not None else (context.start_pos if context else 0)
        ctx = ""
        if context is not None and context.source_span is not None:
            start, end = context.source_span
            ctx = _context(self.body, start, end, at)
        self.links.append(LinkRef(
            link.target, link.anchor, link.relation, link.text, link.label, link.wikilink,
            link.embed, link.markdown, self.line(at or 0), ctx, *columns,
        ))  # fmt: skip

    def columns(self, span: tuple[int, int] | None) -> tuple[int, int]:
        """The span's columns on its line, when one ASCII line holds it (see ``LinkRef``)."""
        if span is None or self.flattened:
            return -1, -1
        row = bisect.bisect_right(self.starts, span[0]) - 1
        begin = self.starts[row]
        ahead = self.body[begin : span[1]]
        if "\n" in ahead or not ahead.isascii():
            return -1, -1
        return span[0] - begin, span[1] - begin


class _HTMLLinks(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[tuple[int, int], bool, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        want = {"a": "href", "img": "src"}.get(tag)
        for name, value in attrs:
            if name == want and value:
                self.found.append((self.getpos(), tag == "img", value))


def _seen(
    body: str, span: tuple[int, int], unseen: list[tuple[int, int]], items: tuple[int, ...]
) -> tuple[str, int, tuple[int, ...]]:
    """The block ``body[span]`` with its ``unseen`` ranges cut out, each but for its line
    ends (so that the text keeps the block's lines): the text, stripped; how many lines the
    strip took off its start; ``items`` (offsets in the block's source) as offsets in it."""
    parts: list[str] = []
    removed: list[tuple[int, int]] = []  # (where a cut ends in ``body``, characters it took)
    pos = span[0]
    for a, b in sorted(unseen):
        a, b = max(a, pos), min(b, span[1])
        if a >= b:
            continue
        parts.append(body[pos:a])
        ends = body.count("\n", a, b)
        # a space only where the cut joins two words ("now<br>next", not "<kbd>Ctrl</kbd>.")
        joins = body[a - 1 : a].isalnum() and body[b : b + 1].isalnum()
        kept = "\n" * ends or (" " if joins else "")
        parts.append(kept)
        removed.append((b, b - a - len(kept)))
        pos = b
    parts.append(body[pos : span[1]])
    whole = "".join(parts).rstrip()
    text = whole.lstrip()
    lead = len(whole) - len(text)
    moved = (i - lead - sum(gone for b, gone in removed if b <= span[0] + i) for i in items)
    return text, whole.count("\n", 0, lead), tuple(i for i in moved if 0 < i < len(text))


def _item_offsets(el: Any) -> tuple[int, ...]:
    """Where each item of a list after the first starts, as an offset in the list's text."""
    spans = [item.source_span for item in el.children[1:]]
    return tuple(s[0] - el.source_span[0] for s in spans if s is not None)


def _context(body: str, start: int, end: int, at: int) -> str:
    """The block ``body[start:end]`` around offset ``at``, cut to a window when long (sliced
    from the body directly: a copy of the block per link made 100k links quadratic)."""
    if end - start <= CONTEXT_CHARS:
        return body[start:end].strip()
    begin = max(start, at - CONTEXT_CHARS // 2)
    stop = min(end, begin + CONTEXT_CHARS)
    return (CUT if begin > start else "") + body[begin:stop].strip() + (CUT if stop < end else "")


def plain(children: Any) -> str:
    """An inline tree as a reader sees it: text, code, link text, image alt; no markup."""
    if isinstance(children, str):
        return children
    return " ".join("".join(_plain_parts(children)).split())


def _plain_parts(children: Any) -> Iterator[str]:
    for el in children:
        if isinstance(el, inline.RawText | inline.Literal):
            yield html.unescape(el.children) if isinstance(el.children, str) else ""
        elif isinstance(el, inline.CodeSpan | syntax.InlineMath):
            yield el.children if isinstance(el.children, str) else ""
        elif isinstance(el, inline.LineBreak):
            yield " "
        elif isinstance(el, syntax.WikiLink):
            target, _, label = el.inner.replace("\\|", "|").partition("|")
            yield label.strip() or target.strip()
        elif isinstance(el, syntax.Tag | syntax.BlockId):
            yield str(el.children)
        elif isinstance(el, inline.InlineHTML | syntax.Comment | footnote.FootnoteRef):
            continue
        elif isinstance(getattr(el, "children", None), list):
            yield from _plain_parts(el.children)
