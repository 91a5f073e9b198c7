"""Obsidian's Markdown as a marko parser: CommonMark, the GFM parts Obsidian renders, and
Obsidian's own syntax as marko elements.

Added to marko's CommonMark elements: tables, strikethrough and task lists (GFM), footnotes,
``[[wikilinks]]`` and ``![[embeds]]``, ``#tags``, ``^block-ids``, ``%%comments%%`` (inline and
as a block), ``==highlights==``, ``$math$`` and ``$$`` math blocks (both opaque, like code) and
callouts (``> [!note] Title``, a quote that knows its type). Elements carry marko's source spans
(offsets into the text marko parsed), which ``markdown.py`` turns into line numbers.

``FastParser`` is marko's parser with shortcuts where a profile of dendron-site showed the
time going (see ``docs/benchmarks.md``); each returns what marko would, only sooner. The
largest builds a simple document-level list (``_simple_list``) without marko's machinery for
every line; ``tests/test_syntax.py`` compares its trees with marko's, attribute by attribute.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from marko import block, inline, inline_parser
from marko.ext import footnote
from marko.ext.gfm import elements as gfm
from marko.helpers import normalize_label
from marko.parser import Parser
from marko.source import Source

# Obsidian: no brackets or line breaks inside; ``|`` splits off the display text.
_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
# A tag starts after a space, a line start or punctuation that cannot be part of a word or URL;
# it holds letters, digits, ``_``, ``-`` and ``/``, and is not all digits (``#123`` is no tag).
_TAG = re.compile(r"(?<![\w/#&\\`(\[\]])#([\w/-]+)")
_BLOCK_ID = re.compile(r"(?:^|(?<=\s))\^([A-Za-z0-9-]+)[ \t]*$", re.M)


class WikiLink(inline.InlineElement):
    """``[[Target#anchor|text]]`` or, with ``!``, an embed. Before CommonMark links: Obsidian
    reads ``[[x]]`` as a wikilink even where ``[x]`` is a link reference."""

    pattern = _WIKI
    priority = 7
    parse_group = 2

    def __init__(self, match: Any) -> None:
        self.embed = bool(match.group(1))
        self.inner = match.group(2)
        self.children = match.group(2)


class Tag(inline.InlineElement):
    pattern = _TAG
    priority = 4

    def __init__(self, match: Any) -> None:
        self.children = match.group(0)
        self.name = match.group(1).rstrip("/-")

    @classmethod
    def find(cls, text: str, *, source: Source) -> Any:
        if "#" not in text:
            return ()
        return (m for m in _TAG.finditer(text) if not m.group(1).rstrip("/-").isdigit())


class _Marked(inline.InlineElement):
    """An element whose pattern needs ``marker`` in the text: a text without it is not
    searched (marko tries every element on every inline run)."""

    marker = ""
    pattern: re.Pattern[str]

    @classmethod
    def find(cls, text: str, *, source: Source) -> Any:
        return cls.pattern.finditer(text) if cls.marker in text else ()


class BlockId(_Marked):
    """``^id`` ending a block's line: the target of ``[[Note#^id]]``."""

    pattern = _BLOCK_ID
    marker = "^"
    priority = 4

    def __init__(self, match: Any) -> None:
        self.children = match.group(0)
        self.name = match.group(1)


class Comment(_Marked):
    """``%%hidden%%``: Obsidian shows nothing of it, so nothing in it is a link or a tag. Its
    priority is a code span's: of the two, the one that begins first wins."""

    pattern = re.compile(r"%%([\s\S]*?)%%")
    marker = "%%"
    priority = 7


class Highlight(_Marked):
    pattern = re.compile(r"(?<!=)==(?!=)(\S(?:[\s\S]*?\S)?)==(?!=)")
    marker = "=="
    priority = 5
    parse_children = True


class InlineMath(_Marked):
    """``$x^2$``: opaque like a code span (no space inside either dollar, as Obsidian)."""

    pattern = re.compile(r"(?<![\\$])\$(?=[^\s$])([^$\n]*?[^\s\\$])\$(?![$\d])")
    marker = "$"
    priority = 7


class _UntilMarker(block.BlockElement):
    """A block from an opening line to the line holding its closing marker (or the end)."""

    opener: re.Pattern[str]
    closer: str
    priority = 7
    breaks_paragraph = True

    def __init__(self, body: str) -> None:
        self.children = [inline.RawText(body, False)]

    @classmethod
    def match(cls, source: Source) -> bool:
        return source.expect_re(cls.opener) is not None

    @classmethod
    def parse(cls, source: Source) -> str:
        first = source.next_line()
        assert first is not None
        source.consume()
        lines = [first]
        rest = first.lstrip()[len(cls.closer) :]
        if cls.closer in rest:
            return first
        while not source.exhausted:
            line = source.next_line()
            if line is None:
                break
            source.consume()
            lines.append(line)
            if cls.closer in line:
                break
        return "".join(lines)


class CommentBlock(_UntilMarker):
    """A ``%%`` line opens a comment that runs, across blank lines, to the next ``%%``."""

    opener = re.compile(r" {0,3}%%(?!.*%%)")
    closer = "%%"


class MathBlock(_UntilMarker):
    """Obsidian's ``$$`` display math: its text is code for links and tags."""

    opener = re.compile(r" {0,3}\$\$")
    closer = "$$"


class Callout(block.Quote):
    """``> [!type] Title``: a quote Obsidian draws as a box; ``kind`` and ``title`` say which."""

    override = True
    _head = re.compile(r" {0,3}>[ \t]?\[!([\w-]+)\][+-]?[ \t]*(.*)")

    kind: str | None = None
    title: str = ""

    @classmethod
    def parse(cls, source: Source) -> block.Quote:
        line = source.next_line(False)
        head = cls._head.match(line) if line else None
        state = super().parse(source)
        if head is not None:
            state.kind = head.group(1).lower()  # type: ignore[attr-defined]
            state.title = head.group(2).strip()  # type: ignore[attr-defined]
        return state


def _opens_with(chars: str, base: type[Any], miss: Any = None) -> type[Any]:
    """``base`` whose ``match`` first checks the line's first character: each of these
    elements' patterns starts with up to three spaces and one of ``chars``, so any other
    character is a miss that needs no regular expression (most lines are tried against every
    element, and each try ran marko's whole line-and-prefix machinery)."""

    fast: type[Any]

    def match(cls: type[Any], source: Any) -> Any:
        first = source.first_char()
        if first is not None and (not first or first not in chars):
            return miss
        return super(fast, cls).match(source)

    def get_type(cls: type[Any], snake_case: bool = False) -> str:
        # The name ``base`` registers under (marko names an override after its direct base
        # only: a shortcut of Callout would take Callout's own place, never used).
        return str(base.get_type(snake_case))

    attrs = {"override": True, "match": classmethod(match), "starts": chars,
             "get_type": classmethod(get_type),
             "__module__": __name__, "__doc__": base.__doc__}  # fmt: skip
    fast = type(base.__name__, (base,), attrs)
    return fast


# A paragraph's next line can only end it if it starts (after at most three spaces) with one
# of these, or is blank; anything else continues the paragraph whatever the other elements
# say. Covers every ``breaks_paragraph`` element above and marko's: blank line, ATX heading,
# fences, quote, thematic break, list item, HTML block, comment and math blocks, footnotes.
_MAY_BREAK = frozenset("#`~>-*_+0123456789<%$[=|")
_BULLETS = frozenset("-*+0123456789")


_SETEXT = re.compile(r" {,3}(=+|-+)[^\n\S]*$")


def _fast_paragraph(base: type[Any]) -> type[Any]:
    fast: type[Any]

    def break_paragraph(cls: type[Any], source: Source, lazy: bool = False) -> bool:
        line = source.next_line()
        if line is None and not lazy:
            return False  # outside the open containers' prefix no element matches
        if line is not None:
            body = line.lstrip(" ")
            indent = len(line) - len(body)
            if not body.strip():
                return True  # a blank line: marko's BlankLine, one of the breaking elements
            if body[0] not in _MAY_BREAK and indent < 4 and body[0] != "\t":
                return False
            if lazy and isinstance(source.state, block.List) and body[:1] in _BULLETS:
                # The next item of the list a paragraph's item ended: marko tries every
                # breaking element before this test, and any of them can only say True too.
                prev_match = source.match
                try:
                    if source.parser.block_elements["ListItem"].match(source):
                        return True
                finally:
                    source.match = prev_match
        return bool(super(fast, cls).break_paragraph(source, lazy))

    def is_setext_heading(line: str) -> bool:
        return _SETEXT.match(line) is not None

    attrs = {"override": True, "__module__": __name__,
             "break_paragraph": classmethod(break_paragraph),
             "is_setext_heading": staticmethod(is_setext_heading)}  # fmt: skip
    fast = type(base.__name__, (base,), attrs)
    return fast


class Paragraph(gfm.Paragraph):
    """GFM's paragraph (marko's, then a task item's ``[ ]`` taken off), its source offsets
    kept as a plain list or range (see ``_flat``) instead of marko's map, built and sliced in
    Python for every paragraph."""

    override = True

    def __init__(self, lines: list[str]) -> None:
        starts = getattr(lines, "line_starts", None)
        offsets: Sequence[int] | None = None
        if len(lines) == 1:  # most paragraphs (a list item's): the offsets are one range
            text = lines[0].lstrip()
            body = text.rstrip("\n")
            if starts is not None:
                begin = starts[0] + len(lines[0]) - len(text)
                self._inline_positions = offsets = range(begin, begin + len(body))
        else:
            body = "".join(line.lstrip() for line in lines).rstrip("\n")
            if starts is not None:
                flat: list[int] = []
                for line, base in zip(lines, starts, strict=False):
                    flat.extend(range(base + len(line) - len(line.lstrip()), base + len(line)))
                self._inline_positions = offsets = flat[: len(body)]
        self.inline_body = body
        self._tight = False
        task = self._task_list_item_pattern.match(body)
        if task:
            self.checked = task.group(1)[1:-1].lower() == "x"
            self.inline_body = body[task.end(1) :]
            if offsets is not None:
                self._inline_positions = offsets[task.end(1) :]


class BlankLine(block.BlankLine):
    """marko's blank line, told apart from a line with text by its first character: only a
    line whose first character after the prefix is whitespace still needs the full check."""

    override = True

    @classmethod
    def match(cls, source: Source) -> bool:
        first = source.first_char()  # type: ignore[attr-defined]
        if first is None or (first and not first.isspace()):
            return False
        return bool(super().match(source))


class List(block.List):
    """marko's list, asking the parser's blank line (marko's ``List.parse`` names its own)."""

    override = True

    @classmethod
    def parse(cls, source: Source) -> block.List:
        if len(source._states) == 1:  # a list of the document itself, not inside a container
            simple = _simple_list(cls, source)
            if simple is not None:
                return simple
        state = cls(source.context.list_info)
        children = []
        tight = True
        has_blank_line = False
        parser = source.parser
        item: Any = parser.block_elements["ListItem"]
        blank = parser.block_elements["BlankLine"]
        with source.under_state(state):
            while not source.exhausted:
                item_start = source._current_pos
                at = source.pos
                if item.match(source):
                    el: Any = item.parse(source)
                    if source.pos == at:
                        # An item that consumed nothing would be matched here again, forever
                        # (marko 2.2.4: ``-\t  > q``, a quote its item's prefix cannot hold):
                        # the list ends before it.
                        break
                    if not isinstance(el, block.BlockElement):
                        el = item(el)
                    el.source_span = (item_start, source.pos)
                    children.append(el)
                    source.anchor()
                    if has_blank_line:
                        tight = False
                elif blank.match(source):
                    blank.parse(source)
                    has_blank_line = True
                else:
                    source.reset()
                    break
        tight = tight and not any(
            isinstance(e, block.BlankLine) for el in children for e in el.children
        )
        if tight:
            for el in children:
                el._tight = tight
                for child in el.children:
                    if isinstance(child, block.Paragraph):
                        child._tight = tight
        state.children = children
        state.tight = tight
        return state


# A list item's line: its indent, bullet (or number), the spaces after it and its text.
_ITEM_LINE = re.compile(r"( *)(\d{1,9}[.)]|[-*+])( {1,4})(?=\S)([^\n]*)\n?")
_TEXT_LINE = re.compile(r"( *)(\S[^\n]*)\n?")
_BLANK_LINE = re.compile(r" *\n")
_TASK = re.compile(r"\[[ xX]\] ")
_ORDERED = re.compile(r"\d{1,9}[.)]")
_HEADING_OPEN = re.compile(r"#{1,6}(?:\s|$)")
_FENCE = re.compile(r"(?:`{3,}[^`\n]*|~{3,}[^\n]*)(?:\n|$)")
_WORD = re.compile(r"[^\s*_-]")
_NOT_DELIMITER = re.compile(r"[^\s:|-]")  # a table's delimiter row holds nothing else


def _opens_block(text: str) -> bool:
    """Whether a list item's text, as the first line of the item, could open anything but a
    paragraph (or be a table's delimiter row, or hold a tab): then marko decides."""
    first = text[0]
    if "\t" in text or _NOT_DELIMITER.search(text) is None:
        return True
    if first not in _MAY_BREAK:
        return False
    if first == "[":  # a link, a wikilink, a task box: not a definition (``[label]: dest``)
        if text.startswith("[[") or _TASK.match(text):
            return False
        close = text.find("]", 1)
        if close < 0 or "\\" in text[:close]:
            return True  # a label may go on to the next line, or hold an escaped bracket
        if "[" in text[1:close]:
            return False  # a label holds no bracket unescaped
        return text[close + 1 : close + 2] == ":"
    if first in "*_":  # emphasis: a bullet or a thematic break are made of marks alone
        return text[1:2].isspace() or _WORD.search(text) is None
    if first == "#":
        return _HEADING_OPEN.match(text) is not None
    if first in "`~$%":  # a code span, strikethrough, math, a comment: not their block forms
        return text.startswith(first * (3 if first in "`~" else 2))
    if first.isdigit():
        return _ORDERED.match(text) is not None
    return first != "="


class _Line:
    """One item of a simple list: where it is, and its paragraph's lines."""

    __slots__ = ("bases", "bullet", "depth", "indent", "lines", "mid", "start", "stop")

    def __init__(self, depth: int, bullet: str, start: int, indent: int, mid: int) -> None:
        self.depth, self.bullet, self.start = depth, bullet, start
        self.indent, self.mid = indent, mid
        self.lines: list[str] = []
        self.bases: list[int] = []
        self.stop = 0


def _simple_list(cls: type[Any], source: Source) -> block.List | None:
    """A document-level list of tight items that each hold one paragraph (and lists nested
    at their text's column), built as marko builds it, without marko's machinery for every
    line: lists are most of a docs vault's lines. Anything else in or after it (a loose
    list, a tab, indentation marko reads another way, a line that might open a block other
    than a paragraph) returns None, and marko parses the list."""
    buf = source._buffer
    size = len(buf)
    pos = source.pos
    items: list[_Line] = []
    # Each open list: its bullets' column, its first bullet, the column of its last item's
    # text, and of the item (or document) holding it.
    levels: list[tuple[int, str, int, int]] = []
    tail = False  # the list runs through blank lines to the end
    loose = False  # blank lines between two of the document list's items
    while True:
        m = _ITEM_LINE.match(buf, pos)
        if m is not None:
            indent, bullet, spaces, text = m.group(1, 2, 3, 4)
            column = len(indent)
            depth = next((i for i, lv in enumerate(levels) if lv[0] == column), len(levels))
            if _opens_block(text):
                return None
            if depth < len(levels):  # the next item of an open list
                first = levels[depth][1]
                ordered = first[-1] in ".)"
                if (bullet != first) if not ordered else (bullet[-1] != first[-1]):
                    return None
                del levels[depth + 1 :]
            else:  # a list in the last item, or the first line
                outer = levels[-1][2] if levels else 0
                if not outer <= column <= outer + 3:
                    return None  # indented code, or more of the item's text: marko decides
                if levels and bullet[-1] in ".)" and bullet[:-1] != "1":
                    return None  # only a list starting at 1 interrupts a paragraph
                levels.append((column, bullet, 0, outer))
            mid = len(spaces)
            _, first, _, outer = levels[depth]
            levels[depth] = (column, first, column + len(bullet) + mid, outer)
            item = _Line(depth, bullet, pos + outer, column - outer, mid)
            body = pos + column + len(bullet) + mid
            item.lines.append(buf[body : m.end()])
            item.bases.append(body)
            items.append(item)
            pos = m.end()
        else:
            if not items:
                return None
            if _BLANK_LINE.match(buf, pos) is not None:
                after = pos
                while (blank := _BLANK_LINE.match(buf, after)) is not None:
                    after = blank.end()
                if after >= size:
                    tail = True
                    break
                top = _ITEM_LINE.match(buf, after)
                if top is not None and not top.group(1):
                    # The document's list goes on after blank lines: a loose list, and the
                    # blank lines belong to neither item.
                    loose = True
                    pos = after
                    continue
                if buf[after].isspace() or block.ListItem.pattern.match(buf, after):
                    return None  # a loose list, or more of an item: marko decides
                break
            line = _TEXT_LINE.match(buf, pos)
            if line is None:
                return None
            lead, text = line.group(1, 2)
            if not lead and (_HEADING_OPEN.match(text) or _FENCE.match(text)):
                break  # a heading or a fence ends the list
            if text[0] in _MAY_BREAK or "\t" in text or _NOT_DELIMITER.search(text) is None:
                return None
            # The last item's paragraph goes on (lazily, when not indented to its text).
            items[-1].lines.append(buf[pos + len(lead) : line.end()])
            items[-1].bases.append(pos + len(lead))
            pos = line.end()
        items[-1].stop = pos
        if pos >= size:
            break
    source.pos = size if tail else pos
    source.match = None
    state, _ = _build_list(cls, source, items, 0, source.context.list_info, tail, loose)
    return state  # type: ignore[no-any-return]


def _build_list(
    cls: type[Any],
    source: Source,
    items: list[_Line],
    i: int,
    info: Any,
    tail: bool,
    loose: bool = False,
) -> tuple[Any, int]:
    """The list starting with ``items[i]``, and the index of the item after it. With
    ``tail`` (blank lines to the end), marko's lists and items around the last item reach
    the end; the last item does not (it gives its blank lines back). A ``loose`` list's items
    and their paragraphs keep marko's loose defaults (the lists inside them are tight)."""
    parser = source.parser
    item_cls: Any = parser.block_elements["ListItem"]
    paragraph: Any = parser.block_elements["Paragraph"]
    size = len(source._buffer)
    state = cls(info)
    state.children = []
    depth = items[i].depth
    while i < len(items) and items[i].depth == depth:
        line = items[i]
        item = item_cls(block.ListItem.ParseInfo(line.indent, line.bullet, line.mid))
        if line.lines[0].endswith("\n"):  # marko's prefix moves on at the first line's end
            item._prefix = item._second_prefix
        para = paragraph(block._ParsedLines(line.lines, line.bases))
        para.source_span = (line.bases[0], line.stop)
        if not loose:
            item._tight = True
            para._tight = True
        item.children = [para]
        i += 1
        if i < len(items) and items[i].depth > depth:
            sub = items[i].bullet
            ordered = sub[:-1].isdigit()
            sub_info = block.List.ParseInfo(sub, ordered, int(sub[:-1]) if ordered else 1)
            nested, i = _build_list(cls, source, items, i, sub_info, tail)
            item.children.append(nested)
        around_last = tail and i >= len(items) and len(item.children) > 1
        item.source_span = (line.start, size if around_last else items[i - 1].stop)
        state.children.append(item)
    state.tight = not loose
    last = size if tail and i >= len(items) else state.children[-1].source_span[1]
    state.source_span = (state.children[0].source_span[0], last)
    return state, i


class ListItem(block.ListItem):
    """marko's list item, matching the containers' prefix with its pattern compiled once."""

    override = True

    @classmethod
    def match(cls, source: Source) -> bool:
        if source.parser.block_elements["ThematicBreak"].match(source):
            return False
        if not source.expect_re(cls.pattern):
            return False
        next_line = source.next_line(False).expandtabs(4)
        m = _prefix_pattern(source.prefix).match(next_line)
        prefix_pos = m.end() if m is not None else 0
        indent, bullet, mid, _ = cls.parse_leading(next_line.rstrip(), prefix_pos)
        parent: Any = source.state
        if (parent.ordered and not bullet[:-1].isdigit()) or bullet[-1] != parent.bullet[-1]:
            return False
        if not parent.ordered and bullet != parent.bullet:
            return False
        source.context.list_item_info = cls.ParseInfo(indent, bullet, mid)
        return True


_MAX_OPEN = 64  # brackets open at once; no note nests links this deep
_NEXT_DELIMITER = re.compile(r"[\\`\]\[!*_]")
_DELIMITER = re.compile(r"(?:!?\[|\*+|_+)")
_CODE = re.compile(r"(?<!`)(`+)(?!`)([\s\S]+?)(?<!`)\1(?!`)")


def _find_links_or_emphs(
    text: str, link_ref_defs: dict[str, tuple[str, str]]
) -> list[inline_parser.MatchObj]:
    """marko's ``find_links_or_emphs``, stepping from one character that matters to the next
    instead of through every character (the loop was a quarter of the parse time)."""
    i = 0
    delimiters: list[inline_parser.Delimiter] = []
    matches: list[inline_parser.MatchObj] = []
    n = len(text)
    while i < n:
        m = _NEXT_DELIMITER.search(text, i)
        if m is None:
            break
        i = m.start()
        ch = text[i]
        if ch == "\\":
            i += 2
        elif ch == "`":
            code = _CODE.match(text, i)
            if code is not None:
                i = code.end()
            else:  # no span opens anywhere in this run of backticks (the pattern's lookbehind)
                while i < n and text[i] == "`":
                    i += 1
        elif (
            (ch == "[" or ch == "!")
            and len(delimiters) <= _MAX_OPEN - 2
            and ((past := _past_wikilink(text, i, link_ref_defs)) is not None)
        ):
            i = past
        elif ch == "]":
            node = _look_for_image_or_link(text, delimiters, i, link_ref_defs, matches)
            if node:
                i = node.end()
                matches.append(node)
            else:
                i += 1
        else:
            d = _DELIMITER.match(text, i)
            if d is None:
                i += 1
                continue
            if ch != "*" and ch != "_" and len(delimiters) >= _MAX_OPEN:
                opened = sum(1 for x in delimiters if x.content in ("[", "!["))
                if opened >= _MAX_OPEN:  # "[[[[…": marko's bracket matching is cubic in depth
                    i = d.end()
                    continue
            delimiters.append(inline_parser.Delimiter(d, text))
            i = d.end()
    inline_parser.process_emphasis(text, delimiters, None, matches)
    return matches


def _look_for_image_or_link(
    text: str,
    delimiters: list[inline_parser.Delimiter],
    close: int,
    link_ref_defs: dict[str, tuple[str, str]],
    matches: list[inline_parser.MatchObj],
) -> inline_parser.MatchObj | None:
    """marko's ``look_for_image_or_link`` (2.2.4), trying ``_plain_dest`` first."""
    for i, d in list(enumerate(delimiters))[::-1]:
        if d.content not in ("[", "!["):
            continue
        if not d.active:
            break  # break to remove the delimiter and return None
        if not inline_parser._is_legal_link_text(text[d.end : close]):
            break
        link_text = inline_parser.Group(d.end, close, text[d.end : close])
        assert link_text.text is not None
        etype = "Image" if d.content == "![" else "Link"
        match = (
            _plain_dest(text, close + 1)
            or inline_parser._expect_inline_link(text, close + 1)
            or inline_parser._expect_reference_link(text, close + 1, link_text.text, link_ref_defs)
        )
        if not match:  # not a link
            break
        rv = inline_parser.MatchObj(etype, text, d.start, match[2], link_text, match[0], match[1])
        inline_parser.process_emphasis(text, delimiters, i, matches)
        if etype == "Link":
            for d in delimiters[:i]:
                if d.content == "[":
                    d.active = False
        del delimiters[i]
        return rv
    else:
        return None  # no matching opener is found
    del delimiters[i]
    return None


# ``(dest)`` with no title, space, parenthesis, escape, control character or ``<``: what
# marko's character loop in ``_parse_link_dest_title`` would find, most links' shape.
_PLAIN_DEST = re.compile(r"\(([^\s()\\<\x00-\x20\x7f][^\s()\\\x00-\x20\x7f]*)\)")


def _plain_dest(
    text: str, start: int
) -> tuple[inline_parser.Group, inline_parser.Group, int] | None:
    """What marko's ``_expect_inline_link`` gives for a plain ``(dest)`` at ``start``, read by
    one regex instead of marko's loop over its characters (dendron-site: 3,639 of its 4,439
    calls, ~35 ms to ~6 ms); None for any other text, which marko reads."""
    m = _PLAIN_DEST.match(text, start)
    if m is None:
        return None
    return (
        inline_parser.Group(start + 1, m.end() - 1, m.group(1)),
        inline_parser._EMPTY_GROUP,
        m.end(),
    )


def _past_wikilink(text: str, i: int, link_ref_defs: dict[str, tuple[str, str]]) -> int | None:
    """Where the ``[[wikilink]]`` (or ``![[embed]]``) opening at ``text[i]`` ends, when marko's
    search would leave no trace of it: its two brackets are pushed, and each ``]`` finds no
    link and takes one away again, unless a link reference is named like it, a ``(`` or ``[``
    follows it (then it is a link's text), or its text holds an escape, code or emphasis
    marks. Then None, and the search reads it bracket by bracket, as marko does. Wikilinks
    are most of a vault's brackets, and each cost two link look-ups."""
    wiki = _WIKI.match(text, i)
    if wiki is None:
        return None
    end = wiki.end()
    inner = wiki.group(2)
    if text[end : end + 1] in ("(", "[") or _NOT_INERT.search(inner) is not None:
        return None
    if link_ref_defs and normalize_label(inner) in link_ref_defs:
        return None  # (``[inner]`` names none: a label holds no bracket unescaped)
    return end


_NOT_INERT = re.compile(r"[\\`*_]")


# A line with its end. marko asks ``(?m)[^\n]*?$\n?`` of the line past the prefix, which
# matches the same text but tries ``$`` at every character (3x slower on a 60-character line).
_LINE = re.compile(r"[^\n]*\n?")


class FastSource(Source):
    """marko's ``Source`` answering its three most asked questions from small caches: the
    line at a position, the containers' joined prefix (rebuilt only when the stack of open
    blocks or a prefix changes) and how far that prefix reaches into the line. The answers,
    and the ``match`` objects the elements read, are the ones marko computes."""

    def __init__(self, text: str) -> None:
        self._version = 0
        super().__init__(text)
        self._prefix_at = (-1, -1, 0)  # (pos, version, prefix length)
        self._first_at: tuple[int, int, str | None] = (-1, -1, None)
        self._line_at: tuple[int, Any] = (-1, None)
        self._next_at: tuple[int, int, Any, str | None] = (-1, -1, None, None)
        self._prefix_cache = (-1, "")
        self._patterns: dict[str, re.Pattern[str]] = {}

    @property
    def _states(self) -> list[block.BlockElement]:
        return self._stack

    @_states.setter
    def _states(self, states: list[block.BlockElement]) -> None:
        self._stack = states
        self._version += 1

    def push_state(self, element: block.BlockElement) -> None:
        self._stack.append(element)
        self._version += 1

    def pop_state(self) -> block.BlockElement:
        self._version += 1
        return self._stack.pop()

    def _update_prefix(self) -> None:
        # marko's, counting a change only when a prefix changed: after an item's first line
        # this runs at every line end and changes nothing, and kept the caches from lasting.
        changed = False
        for state in self._stack:
            second = getattr(state, "_second_prefix", None)
            if second is not None and state._prefix != second:
                state._prefix = second
                changed = True
        if changed:
            self._version += 1

    @property
    def prefix(self) -> str:
        version, prefix = self._prefix_cache
        if version != self._version:
            prefix = "".join(s._prefix for s in self._stack)
            self._prefix_cache = (self._version, prefix)
        return prefix

    def _whole_line(self, pos: int) -> Any:
        at, match = self._line_at
        if at != pos:
            match = _LINE.match(self._buffer, pos)
            self._line_at = (pos, match)
        return match

    def _prefix_len(self) -> int:
        pos, version, length = self._prefix_at
        if pos != self.pos or version != self._version:
            prefix = self.prefix
            if not prefix:
                length = 0
            else:
                line = self._whole_line(self.pos)
                length = _match_prefix(prefix, line.group() if line else "")
            self._prefix_at = (self.pos, self._version, length)
        return length

    @property
    def _current_pos(self) -> int:
        if self._whole_line(self.pos) is None:
            return self.pos
        return self.pos + max(self._prefix_len(), 0)

    def first_char(self) -> str | None:
        """The line's first character after the containers' prefix and up to three spaces
        (a space when more follow, "" at the end), or None where the prefix does not match."""
        pos, version, first = self._first_at
        if pos == self.pos and version == self._version:
            return first
        length = self._prefix_len()
        first = None
        if length >= 0:
            buf, at = self._buffer, self.pos + length
            first = ""
            for i in range(at, min(at + 4, len(buf))):
                if buf[i] != " " or i == at + 3:
                    first = buf[i]
                    break
        self._first_at = (self.pos, self._version, first)
        return first

    def expect_re(self, regexp: re.Pattern[str] | str) -> Any:
        prefix_len = self._prefix_len()
        if prefix_len < 0:
            return None
        if isinstance(regexp, str):
            compiled = self._patterns.get(regexp)
            if compiled is None:
                compiled = self._patterns[regexp] = re.compile(regexp)
            regexp = compiled
        self.match = regexp.match(self._buffer, self.pos + prefix_len)
        return self.match

    def next_line(self, require_prefix: bool = True) -> Any:
        if not require_prefix:
            m = self.match = self._whole_line(self.pos)
            return m.group() if m else None
        pos, version, m, line = self._next_at
        if pos != self.pos or version != self._version:
            m = self.expect_re(_LINE)
            line = m.group() if m else None
            self._next_at = (self.pos, self._version, m, line)
        self.match = m
        return line


_PREFIXES: dict[str, re.Pattern[str]] = {}


def _prefix_pattern(prefix: str) -> re.Pattern[str]:
    pattern = _PREFIXES.get(prefix)
    if pattern is None:
        if len(_PREFIXES) >= 512:  # a daemon meets endless nestings: keep the common ones
            _PREFIXES.clear()
        pattern = _PREFIXES[prefix] = re.compile(prefix)
    return pattern


def _match_prefix(prefix: str, line: str) -> int:
    """marko's ``Source.match_prefix`` with the containers' prefix compiled once: its cache
    of (prefix, line) pairs misses on every new line, and each miss looked the prefix up in
    ``re``'s cache (once more when the line ends early)."""
    pattern = _prefix_pattern(prefix)
    expanded = line.expandtabs(4)
    m = pattern.match(expanded)
    if not m:
        if pattern.match(expanded.replace("\n", " " * 99 + "\n")):
            return len(line) - 1
        return -1
    pos = m.end()
    if pos == 0:
        return 0
    if "\t" not in line:
        return pos if pos <= len(line) else -1  # without tabs a column is an offset
    for i in range(1, len(line) + 1):
        if len(line[:i].expandtabs(4)) >= pos:
            return i
    return -1


# Everything the index reads out of a paragraph's inline parse starts with one of these:
# links, wikilinks and embeds, tags, block ids, raw HTML and autolinks, and the code spans,
# comments and math that hide them.
_INDEXED = re.compile(r"[\[<#^`%$]")


# A paragraph's first line that nothing else can be: up to three spaces, then a character no
# other block opens with (a line with a pipe might head a table).
_PLAIN_FIRST = re.compile(r" {0,3}[^\s#`~>\-*_+0-9<%$\[=|][^|\n]*(?:\n|\Z)")
_FIRST_LINE = re.compile(r" {0,3}(\S[^\n]*)(?:\n|\Z)")
_SHORT_BLANK = re.compile(r" {0,3}\n")
_HASH_FIRST = re.compile(r" {0,3}#")


def _plain_block(parser: Parser, source: Source) -> Any:
    """At the document level, the run of blank lines, the ATX heading or the plain paragraph
    at ``source.pos``, built as marko builds it: a paragraph's next line goes on or breaks it
    as marko's ``break_paragraph`` says (asked only for a line that might break it). None for
    any other block, and for a paragraph that turns out to be a setext heading: marko parses
    those."""
    buf = source._buffer
    size = len(buf)
    start = source.pos
    if _SHORT_BLANK.match(buf, start):
        pos = start
        while pos < size:  # marko's blank line takes every blank line after it
            nl = buf.find("\n", pos)
            stop = size if nl < 0 else nl + 1
            if buf[pos:stop].strip():
                break
            pos = stop
        source.pos = pos
        blank_line: Any = parser.block_elements["BlankLine"]
        blank = blank_line(start)
        blank.source_span = (start, pos)
        return blank
    if _HASH_FIRST.match(buf, start):  # marko tries a heading first at a line like this
        heading: Any = parser.block_elements["Heading"]
        found = heading.pattern.match(buf, start)
        if found is not None:
            source.pos = found.end()
            source.match = None
            element = heading(found)
            element.source_span = (start, found.end())
            return element
    first = _PLAIN_FIRST.match(buf, start)
    if first is None:  # a line opening with a link, code, emphasis, a tag: a paragraph too
        first = _FIRST_LINE.match(buf, start)
        if first is None or _opens_block(first.group(1)):
            return None
        if "|" in first.group(1):  # a table's header row, if a delimiter row follows: marko
            # takes any line for one whose cells each start with ``:?-`` (``- a`` too)
            below = _LINE.match(buf, first.end()).group()  # type: ignore[union-attr]
            if below.strip()[:1] in ("|", ":", "-"):
                return None
    paragraph: Any = parser.block_elements["Paragraph"]
    lines = [first.group()]
    starts = [start]
    pos = first.end()
    while pos < size:
        nl = buf.find("\n", pos)
        stop = size if nl < 0 else nl + 1
        line = buf[pos:stop]
        body = line.lstrip(" ")
        if not body.strip():
            break  # a blank line ends it
        if body[0] in _MAY_BREAK or len(line) - len(body) >= 4 or body[0] == "\t":
            source.pos = pos
            if paragraph.break_paragraph(source):
                break
            if paragraph.is_setext_heading(line):
                source.pos = start
                return None
        lines.append(line)
        starts.append(pos)
        pos = stop
    source.pos = pos
    source.match = None
    para = paragraph(block._ParsedLines(lines, starts))
    para.source_span = (start, pos)
    return para


def _line_as_paragraph(parser: Parser, source: Source) -> Any:
    """The line at ``source.pos`` as a paragraph, for a line no block consumes."""
    buf = source._buffer
    start = source.pos
    line = _LINE.match(buf, start).group()  # type: ignore[union-attr]
    paragraph: Any = parser.block_elements["Paragraph"]
    para = paragraph(block._ParsedLines([line], [start]))
    para.source_span = (start, start + len(line))
    source.pos = start + len(line)
    source.match = None
    return para


class FastParser(Parser):
    #: Leave a paragraph or table cell without any of ``_INDEXED`` as one run of text (its
    #: emphasis unparsed): what the index reads of it is the same, and rendering it is not
    #: the index's job. Off for a parser whose output is rendered.
    text_only_plain = False

    def parse(self, text: str) -> block.Document:
        """marko's ``Parser.parse`` over a ``FastSource``."""
        source = FastSource(text)
        source.parser = self
        doc: Any = self.block_elements["Document"]()
        doc.source_span = (0, len(source._buffer))
        with source.under_state(doc):
            doc.children = self.parse_source(source)
            self.parse_inline(doc, source)
        return doc  # type: ignore[no-any-return]

    def parse_source(self, source: Source) -> list[block.BlockElement]:
        """marko's ``parse_source``, trying at each line only the elements that can open with
        its first character (``starts``), in marko's order of priority."""
        ast: list[block.BlockElement] = []
        top = len(source._states) == 1
        while not source.exhausted:
            if top:  # the document's own blocks: blank lines and paragraphs the short way
                plain = _plain_block(self, source)
                if plain is not None:
                    ast.append(plain)
                    continue
            start = source._current_pos
            at = source.pos
            for ele_type in self._candidates(source.first_char()):  # type: ignore[attr-defined]
                if ele_type.match(source):
                    result: Any = ele_type.parse(source)
                    end = source.pos
                    if not hasattr(result, "priority"):
                        result = ele_type(result)
                    if result.source_span is None:
                        result.source_span = (start, end)
                    ast.append(result)
                    break
            else:
                break
            if source.pos == at:
                # A block that consumed nothing would be matched here again, forever (marko
                # 2.2.4: a footnote definition tab-indented in an empty list item): the
                # container ends, and the blocks around it read the line. The document
                # reads it as a paragraph of its own, its links still links.
                if not top:
                    break
                ast[-1] = _line_as_paragraph(self, source)
        return ast

    def _candidates(self, first: str | None) -> list[Any]:
        """None: the line does not continue the open containers, and no element matches a
        line outside its containers' prefix (each tests the prefix first)."""
        if first is None:
            return []
        table = self.__dict__.setdefault("_by_first", {})
        found = table.get(first)
        if found is None:
            found = table[first] = [
                e for e in self._build_block_element_list()
                if getattr(e, "starts", None) is None or (first and first in e.starts)  # type: ignore[attr-defined]
            ]  # fmt: skip
        return found  # type: ignore[no-any-return]

    def __init__(self) -> None:
        super().__init__()
        elements = self.inline_elements

        class LinkOrEmph(inline.InlineElement):
            parse_children = True

            def __new__(cls, match: Any) -> Any:
                return elements[match.etype](match)

        self._link_or_emph = LinkOrEmph
        self._inline_list: list[tuple[Any, str]] | None = None

    def parse_inline(self, element: block.BlockElement, source: Source) -> None:
        body = element.inline_body
        if (self.text_only_plain and body and isinstance(element, _PLAIN_BLOCKS)
                and _INDEXED.search(body) is None):  # fmt: skip
            fallback = self.inline_elements["RawText"]
            element.children = inline_parser.make_elements(
                [], body, fallback=fallback, positions=element._inline_positions
            )
            element.inline_body = ""
            element._inline_positions = None
        elif body:  # marko's ``parse_inline``, its walk over the blocks calling this one
            element.children = self._parse_inline(body, source, element._inline_positions)
            element.inline_body = ""
            element._inline_positions = None
        else:
            for child in element.children:
                if isinstance(child, block.BlockElement):
                    self.parse_inline(child, source)

    def _parse_inline(self, text: str, source: Source, positions: Any = None) -> Any:
        """marko's ``inline_parser.parse`` with ``_find_links_or_emphs`` in its place, and
        without asking an element to search a text that lacks the character it starts with."""
        if self._inline_list is None:
            self._inline_list = [(e, _NEEDS.get(e.get_type(), ""))
                                 for e in self._build_inline_element_list()]  # fmt: skip
        fallback = self.inline_elements["RawText"]
        positions = _flat(positions)
        token = inline_parser.Token
        tokens = [token(self._link_or_emph, m, text, fallback, positions)
                  for m in _find_links_or_emphs(text, source.root.link_ref_defs)]  # fmt: skip
        for etype, needs in self._inline_list:
            if needs in text:
                for match in etype.find(text, source=source):
                    tokens.append(token(etype, match, text, fallback, positions))
        tokens.sort()
        tokens = inline_parser._resolve_overlap(tokens)
        return inline_parser.make_elements(tokens, text, fallback=fallback, positions=positions)


def _flat(positions: Any) -> Any:
    """marko's map from inline text to source offsets as a plain list: marko looks it up a
    few times for every inline element it makes, and each lookup of its own map is a bisect
    in Python (~4% of a parse). The list answers the same for every offset."""
    runs = getattr(positions, "_runs", None)  # marko's ``_SourceMap``: (start, end, source)
    if runs is None:
        return positions
    out: list[int] = []
    for start, end, source in runs:
        out.extend(range(source, source + end - start))
    return out


# The character each inline element's pattern cannot match without.
_NEEDS = {
    "CodeSpan": "`", "InlineHTML": "<", "AutoLink": "<", "Literal": "\\", "LineBreak": "\n",
    "Strikethrough": "~", "FootnoteRef": "[^", "WikiLink": "[[", "Tag": "#", "BlockId": "^",
    "Comment": "%%", "Highlight": "==", "InlineMath": "$",
}  # fmt: skip


# marko's closing fence, compiled once (marko hands the string to ``re`` at every line).
_CLOSING_FENCE = re.compile(r" {,3}(~+|`+)[^\n\S]*$", re.MULTILINE)


def _fenced_code(source: Source) -> tuple[str, str, str] | None:
    """At the document level, the fenced code block whose opening line marko has matched at
    ``source.pos``, read as marko's ``FencedCode.parse`` reads it (to the closing fence or the
    end, each line without the opening fence's indent), but without the containers' prefix
    machinery for every line: there are none. None inside a container: marko reads it."""
    if len(source._states) != 1:
        return None
    info = source.context.code_info
    buf = source._buffer
    size = len(buf)
    pos = _LINE.match(buf, source.pos).end()  # type: ignore[union-attr]
    lines = []
    while pos < size:
        line = _LINE.match(buf, pos).group()  # type: ignore[union-attr]
        pos += len(line)
        close = _CLOSING_FENCE.match(line)
        if close is not None and info.leading in close.group(1):
            break
        cut = _match_prefix(info.prefix, line) if info.prefix else 0
        lines.append(line[cut:] if cut >= 0 else line.lstrip())
    source.pos = pos
    source.match = None
    return info.lang, info.extra, "".join(lines)


class FencedCode(block.FencedCode):
    override = True

    @classmethod
    def parse(cls, source: Source) -> tuple[str, str, str]:
        return _fenced_code(source) or super().parse(source)


class LinkRefDef(block.LinkRefDef):
    """marko's link reference definition, found by its bracket alone: marko's pattern (a
    bracket, then anything up to a blank line or the end) matches wherever a bracket opens
    the line, and ``match`` reads only where the bracket is, but it scanned on to the next
    blank line first, at every such line of a paragraph."""

    override = True
    pattern = re.compile(r" {,3}(\[)")


class Table(gfm.Table):
    override = True

    @classmethod
    def match(cls, source: Source) -> Any:
        line = source.next_line()  # a table's header row holds a pipe
        return line is not None and "|" in line and super().match(source)  # type: ignore[no-untyped-call]


# marko's own elements, each answering as marko does, only sooner.
FAST_COMMONMARK: tuple[type[Any], ...] = (
    _fast_paragraph(block.Paragraph),
    _opens_with("#", block.Heading),
    _opens_with("`~", FencedCode),
    _opens_with(" \t", block.CodeBlock, ""),  # four spaces or a tab in
    _opens_with("-_*", block.ThematicBreak, False),
    _opens_with("<", block.HTMLBlock, False),
    BlankLine,
    _opens_with("-*+0123456789", List, False),
    _opens_with("-*+0123456789", ListItem, False),
    _opens_with("[", LinkRefDef, False),
    _opens_with(">", block.Quote),
)
FAST_GFM: tuple[type[Any], ...] = (
    _fast_paragraph(Paragraph),
    gfm.Strikethrough,
    Table,
    gfm.TableRow,
    gfm.TableCell,
)
OBSIDIAN: tuple[type[Any], ...] = (
    footnote.Document,
    _opens_with("[", footnote.FootnoteDef),
    footnote.FootnoteRef,
    WikiLink,
    Tag,
    BlockId,
    Comment,
    Highlight,
    InlineMath,
    _opens_with("%", CommentBlock, False),
    _opens_with("$", MathBlock, False),
    _opens_with(">", Callout),
)


_PLAIN_BLOCKS = (block.Paragraph, gfm.TableCell)


def new_parser(*, text_only_plain: bool = False) -> Parser:
    parser = FastParser()
    parser.text_only_plain = text_only_plain
    for element in (*FAST_COMMONMARK, *FAST_GFM, *OBSIDIAN):
        parser.add_element(element)
    return parser
