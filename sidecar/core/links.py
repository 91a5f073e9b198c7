"""Links as the index keeps them: a wikilink's or Markdown link's parts, and the typed links
a note's frontmatter makes. ``markdown.py`` finds the body's links (with marko); nothing here
resolves a target, which needs the whole vault (``resolve.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import yaml

from sidecar.core.model import LinkRef

try:  # the C loader, as frontmatter.py
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_LINK_SHAPED_WIKI = re.compile(r"^\s*!?\[\[([^\[\]\n]+)\]\]\s*$")
_LINK_SHAPED_MD = re.compile(r"^\s*\[([^\]\n]*)\]\(([^)\s]+)\)\s*$")
_DENDRON_URI = re.compile(r"^dendron://[^/]*/")
_WIKI_ON_LINE = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
_MD_ON_LINE = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
NOT_RELATIONS = frozenset(
    {"aliases", "alias", "tags", "tag", "id", "title", "cssclasses", "relations"}
)


def wikilink(inner: str, embed: bool, relation: str, line: int, context: str) -> LinkRef | None:
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


def markdown_link(url: str, text: str, embed: bool) -> LinkRef | None:
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


def frontmatter_links(
    data: dict[str, Any], raw: str = "", first_line: int = 2
) -> Iterator[LinkRef]:
    """Typed edges from a ``relations:`` mapping and from whole-value link-shaped keys.

    With the frontmatter's YAML text (``raw``, whose first line is line ``first_line`` of the
    file), each link carries the line of its list item (or of its key) and that property as
    context, ``categories: - "[[Movies]]"``; without it, line 0."""
    places = _Places(raw, first_line)
    relations = data.get("relations")
    if isinstance(relations, dict):
        for key, value in relations.items():
            for i, item in enumerate(_values(value)):
                link = _shaped(item, normalise_relation(str(key)), bare_ok=True)
                if link is not None:
                    yield places.at(link, "relations", str(key), i, value)
    for key, value in data.items():
        if key.lower() in NOT_RELATIONS:
            continue
        items = list(_values(value))
        links = [_shaped(item, normalise_relation(key), bare_ok=False) for item in items]
        if items and all(link is not None for link in links):
            for i, link in enumerate(links):
                if link is not None:
                    yield places.at(link, key, None, i, value)


class _Places:
    """Lines of properties and their list items, read from the YAML's node marks on first use
    (a second, node-only pass of the C loader, for notes whose properties hold links)."""

    def __init__(self, raw: str, first_line: int) -> None:
        self.raw = raw
        self.first_line = first_line
        self._lines: dict[tuple[str, ...], int] | None = None

    def at(self, link: LinkRef, key: str, sub: str | None, i: int, value: Any) -> LinkRef:
        if not self.raw:
            return link
        if self._lines is None:
            self._lines = property_lines(self.raw)
        path = (key,) if sub is None else (key, sub)
        key_line = self._lines.get(path)
        if key_line is None:
            return link
        item_line = (
            self._lines.get((*path, str(i)), key_line) if isinstance(value, list) else key_line
        )
        text = self.raw.split("\n")
        context = text[key_line].strip()
        if item_line != key_line and item_line < len(text):
            context = f"{context} {text[item_line].strip()}"
        start, end = _columns(text[item_line], link) if item_line < len(text) else (-1, -1)
        return LinkRef(link.target, link.anchor, link.relation, link.text, link.label,
                       link.wikilink, link.embed, link.markdown, item_line + self.first_line,
                       context[:400], start, end)  # fmt: skip


def _columns(line: str, link: LinkRef) -> tuple[int, int]:
    """Where ``link`` is written on its property's line (see ``LinkRef``: ASCII up to its end)."""
    pattern = _WIKI_ON_LINE if link.wikilink else _MD_ON_LINE
    for m in pattern.finditer(line):
        found = (wikilink(m.group(1), False, link.relation, 0, "") if link.wikilink
                 else markdown_link(m.group(1), "", False))  # fmt: skip
        if found is not None and (found.target, found.anchor) == (link.target, link.anchor):
            return (m.start(), m.end()) if line[: m.end()].isascii() else (-1, -1)
    return -1, -1


def property_lines(raw: str) -> dict[tuple[str, ...], int]:
    """0-based lines in ``raw`` of each top-level key, its list items (``(key, "0")``), and
    one level of nested keys and their items (``relations: {supersedes: [...]}``)."""
    try:
        root = yaml.compose(raw, Loader=_Loader)
    except (yaml.YAMLError, ValueError, RecursionError):
        return {}
    out: dict[tuple[str, ...], int] = {}

    def walk(node: Any, path: tuple[str, ...], depth: int) -> None:
        if isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                out[(*path, str(i))] = item.start_mark.line
        elif isinstance(node, yaml.MappingNode) and depth < 2:
            for k, v in node.value:
                key = (*path, str(k.value))
                out[key] = k.start_mark.line
                walk(v, key, depth + 1)

    walk(root, (), 0)
    return out


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
        return wikilink(wiki.group(1), item.lstrip().startswith("!"), relation, 0, "")
    md = _LINK_SHAPED_MD.match(item)
    if md:
        link = markdown_link(md.group(2), md.group(1), False)
        if link is None:
            return None
        return LinkRef(link.target, link.anchor, relation, link.text, "", False, False, True,
                       0, "")  # fmt: skip
    if bare_ok and item.strip():
        return wikilink(item, False, relation, 0, "")
    return None
