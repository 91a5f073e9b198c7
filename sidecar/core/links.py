"""Links as the index keeps them: a wikilink's or Markdown link's parts, and the typed links
a note's frontmatter makes. ``markdown.py`` finds the body's links (with marko); nothing here
resolves a target, which needs the whole vault (``resolve.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from sidecar.core.model import LinkRef

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_LINK_SHAPED_WIKI = re.compile(r"^\s*!?\[\[([^\[\]\n]+)\]\]\s*$")
_LINK_SHAPED_MD = re.compile(r"^\s*\[([^\]\n]*)\]\(([^)\s]+)\)\s*$")
_DENDRON_URI = re.compile(r"^dendron://[^/]*/")
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
