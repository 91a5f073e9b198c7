"""A line-oriented Markdown block scanner that keeps source line numbers.

Why not marko's AST: marko's elements carry no source positions, and we need the line of every
heading, paragraph and link (backlink context, lint, "open at line"). marko also costs ~5.5 ms a
note here; this scanner does what the index needs (headings, fenced code, paragraphs, comments,
tags, block ids) at a fraction of that. Inline link syntax is handled in ``links.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sidecar.core.model import Block, Heading

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9_-]+)\s*$")
_TAG = re.compile(r"(?<![\w/#&\\`(\[])#([\w][\w/-]*)")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_OBSIDIAN_COMMENT = re.compile(r"%%.*?%%", re.S)


@dataclass(frozen=True, slots=True)
class Scanned:
    headings: tuple[Heading, ...]
    blocks: tuple[Block, ...]
    tags: tuple[str, ...]
    block_ids: tuple[str, ...]
    heading_links: tuple[Block, ...]  # headings that hold a link, for link extraction only


def slugify(text: str) -> str:
    """Heading anchor as Obsidian matches it: case-insensitive, punctuation-insensitive."""
    return " ".join(re.sub(r"[^\w\s-]", " ", text.lower()).split())


def mask_inline_code(text: str) -> str:
    """Blank out inline code spans and comments, keeping offsets, so no link is found in them."""

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    text = _INLINE_CODE.sub(blank, text)
    text = _HTML_COMMENT.sub(blank, text)
    return _OBSIDIAN_COMMENT.sub(blank, text)


def scan(lines: list[str], first: int) -> Scanned:
    """Scan body lines (``lines[first:]``); line numbers are 1-based in the whole file."""
    headings: list[Heading] = []
    blocks: list[Block] = []
    heading_links: list[Block] = []
    tags: dict[str, None] = {}
    block_ids: dict[str, None] = {}
    crumbs: list[tuple[int, str]] = []
    para: list[str] = []
    para_start = 0
    fence: str | None = None
    in_comment = False

    def flush(end: int, code: bool = False) -> None:
        nonlocal para
        if para:
            text = "".join(para).rstrip("\n")
            blocks.append(Block(para_start, end, text, tuple(t for _, t in crumbs), code))
            if not code:
                masked = mask_inline_code(text)
                for m in _TAG.finditer(masked):
                    tag = m.group(1).rstrip("/-")
                    if not tag.isdigit():
                        tags.setdefault(tag, None)
                for ln in masked.splitlines():
                    b = _BLOCK_ID.search(ln)
                    if b:
                        block_ids.setdefault(b.group(1), None)
        para = []

    def add_heading(level: int, text: str, lineno: int) -> None:
        while crumbs and crumbs[-1][0] >= level:
            crumbs.pop()
        crumbs.append((level, text))
        headings.append(Heading(level, text, lineno))
        if "[" in text:  # a link in a heading is a link too, but not chunk text
            heading_links.append(Block(lineno, lineno, text, tuple(t for _, t in crumbs)))

    for i in range(first, len(lines)):
        line = lines[i]
        lineno = i + 1
        stripped = line.strip()
        if fence is not None:
            para.append(line)
            if stripped.startswith(fence) and set(stripped) <= set(fence[0]):
                flush(lineno, code=True)
                fence = None
            continue
        if in_comment:
            if "%%" in line:
                in_comment = False
            continue
        if stripped == "%%" or (stripped.startswith("%%") and stripped.count("%%") == 1):
            flush(lineno - 1)
            in_comment = True
            continue
        m = _FENCE.match(line)
        if m:
            flush(lineno - 1)
            fence = m.group(1)
            para_start = lineno
            para.append(line)
            continue
        h = _ATX.match(line)
        if h:
            flush(lineno - 1)
            add_heading(len(h.group(1)), (h.group(2) or "").strip(), lineno)
            continue
        if not stripped:
            flush(lineno - 1)
            continue
        s = _SETEXT.match(line)
        if s and len(para) == 1 and not _is_list_item(para[0]):
            text = para[0].strip()
            para = []
            add_heading(1 if s.group(1)[0] == "=" else 2, text, lineno - 1)
            continue
        if not para:
            para_start = lineno
        para.append(line)
    flush(len(lines), code=fence is not None)
    return Scanned(
        tuple(headings), tuple(blocks), tuple(tags), tuple(block_ids), tuple(heading_links)
    )


def _is_list_item(line: str) -> bool:
    return bool(re.match(r"^\s*([-*+]|\d+[.)])\s", line))
