"""Find every link a note makes: body wikilinks, embeds, Markdown links and frontmatter relations.

Nothing here resolves a target; that needs the whole vault (``resolve.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import unquote

from sidecar.core.markdown import mask_inline_code
from sidecar.core.model import Block, LinkRef

_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_MD = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+[\"'(][^)\n]*[\"')])?\s*\)"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_LINK_SHAPED_WIKI = re.compile(r"^\s*!?\[\[([^\[\]\n]+)\]\]\s*$")
_LINK_SHAPED_MD = re.compile(r"^\s*\[([^\]\n]*)\]\(([^)\s]+)\)\s*$")
_DENDRON_URI = re.compile(r"^dendron://[^/]*/")
NOT_RELATIONS = frozenset(
    {"aliases", "alias", "tags", "tag", "id", "title", "cssclasses", "relations"}
)
CONTEXT_CHARS = 400
# Cut marks are ASCII: one "…" in a string makes CPython store all of it at two bytes a
# character, and the index keeps every link's context in memory (~200 MB at 100k notes).
CUT = "..."


def body_links(blocks: Iterable[Block]) -> Iterator[LinkRef]:
    for block in blocks:
        if block.is_code:
            continue
        masked = mask_inline_code(block.text)
        if "[" not in masked:
            continue
        lines = _Lines(block)
        for match in _WIKI.finditer(masked):
            link = _wikilink(match.group(2), bool(match.group(1)), "link", 0, "")
            if link is not None:
                yield _place(link, block, match.start(), lines)
        lines = _Lines(block)
        for match in _MD.finditer(masked):
            link = _mdlink(match.group(3), match.group(2), bool(match.group(1)))
            if link is not None:
                yield _place(link, block, match.start(), lines)


class _Lines:
    """Line numbers of ascending offsets in one block, counted incrementally: counting from
    the block's start for each link made a paragraph of 100k links quadratic (16 s)."""

    def __init__(self, block: Block) -> None:
        self.text = block.text
        self.offset = 0
        self.line = block.start_line

    def at(self, offset: int) -> int:
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _place(link: LinkRef, block: Block, offset: int, lines: _Lines) -> LinkRef:
    return LinkRef(
        link.target, link.anchor, link.relation, link.text, link.label, link.wikilink,
        link.embed, link.markdown, lines.at(offset), _context(block.text, offset),
    )  # fmt: skip


def _context(text: str, offset: int) -> str:
    if len(text) <= CONTEXT_CHARS:
        return text.strip()
    start = max(0, offset - CONTEXT_CHARS // 2)
    return (CUT if start else "") + text[start : start + CONTEXT_CHARS].strip() + CUT


def _wikilink(inner: str, embed: bool, relation: str, line: int, context: str) -> LinkRef | None:
    inner = inner.replace("\\|", "|")
    target_part, _, label = inner.partition("|")
    target_part = _DENDRON_URI.sub("", target_part.strip())
    name, _, anchor = target_part.partition("#")
    name = name.strip()
    if not name:
        return None  # [[#Heading]]: navigation inside the note, not an edge
    text = label.strip() or target_part
    return LinkRef(name, anchor.strip(), relation, text, label.strip(), True, embed, False,
                   line, context)  # fmt: skip


def _mdlink(url: str, text: str, embed: bool) -> LinkRef | None:
    url = url.strip()
    if url.startswith("<") and url.endswith(">"):
        url = url[1:-1].strip()
    if not url or url.startswith(("#", "//")) or _SCHEME.match(url):
        return None
    path, _, anchor = url.partition("#")
    path = unquote(path.split("?", 1)[0]).strip()
    if not path:
        return None
    return LinkRef(path, unquote(anchor), "link", text.strip() or path, "", False, embed, True,
                   0, "")  # fmt: skip


def normalise_relation(key: str) -> str:
    return re.sub(r"[\s-]+", "_", key.strip().lower())


def frontmatter_links(data: dict[str, Any]) -> Iterator[LinkRef]:
    """Typed edges from a ``relations:`` mapping and from whole-value link-shaped keys."""
    relations = data.get("relations")
    if isinstance(relations, dict):
        for key, value in relations.items():
            for item in _values(value):
                link = _shaped(item, normalise_relation(str(key)), bare_ok=True)
                if link is not None:
                    yield link
    for key, value in data.items():
        if key.lower() in NOT_RELATIONS:
            continue
        items = list(_values(value))
        links = [_shaped(item, normalise_relation(key), bare_ok=False) for item in items]
        if items and all(link is not None for link in links):
            yield from (link for link in links if link is not None)


def _values(value: Any) -> Iterator[str]:
    """Strings of a value; ``[[X]]`` written unquoted in YAML arrives as ``[["X"]]``."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                yield item
            elif isinstance(item, list) and len(item) == 1 and isinstance(item[0], list):
                inner = item[0]
                if len(inner) == 1 and isinstance(inner[0], str):
                    yield f"[[{inner[0]}]]"
            elif isinstance(item, list) and len(item) == 1 and isinstance(item[0], str):
                yield f"[[{item[0]}]]"
            else:
                yield ""  # a non-string member: the value is not a list of links
    elif isinstance(value, dict):
        yield ""


def _shaped(item: str, relation: str, *, bare_ok: bool) -> LinkRef | None:
    wiki = _LINK_SHAPED_WIKI.match(item)
    if wiki:
        return _wikilink(wiki.group(1), item.lstrip().startswith("!"), relation, 0, "")
    md = _LINK_SHAPED_MD.match(item)
    if md:
        link = _mdlink(md.group(2), md.group(1), False)
        if link is None:
            return None
        return LinkRef(link.target, link.anchor, relation, link.text, "", False, False, True,
                       0, "")  # fmt: skip
    if bare_ok and item.strip():
        return _wikilink(item, False, relation, 0, "")
    return None
