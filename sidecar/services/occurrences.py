"""Every link to a note as written: one row per occurrence, each with its own line and context.

The graph keeps one edge per (target, relation) per source note, which is what traversal and
lint need; a reader of backlinks (Obsidian's pane, LSP references, a rename) needs every place a
note is linked. Each source note's links are kept in the index as parsed (their contexts in its
row), so the occurrences are its links that resolve to the note, re-resolved from the live
catalog: nothing extra is stored.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from sidecar.core.anchors import anchor_key, heading_key
from sidecar.core.model import LinkRef
from sidecar.core.resolve import link_keys, lookup_keys
from sidecar.services.link_context import link_context
from sidecar.services.state import IndexState, note_key
from sidecar.store.lance import IndexStore

_DENDRON_URI = re.compile(r"^dendron://[^/]*/")
_LINK = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]|!?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\(\s*<?([^)>\s]+)")


def occurrences(
    state: IndexState, store: IndexStore, path: str, heading: str | None = None
) -> list[dict[str, Any]]:
    """Links to ``path`` (optionally to one heading of it), by source and line; the caller
    does not hold ``state.lock`` (the contexts are read from the store after it). ``match`` is
    the link's ``[start, end)`` in ``context`` when it is there; ``columns`` its ``[start,
    end)`` on ``line`` when the index knows them (an ASCII line, where every position encoding
    counts alike: an editor places it without reading the note)."""
    with state.lock:
        found = _found(state, path, heading)
    stored = store.stored_links({row["source"] for row, _, _, _ in found})
    out = []
    for row, i, link, nth in found:
        context = link_context(stored, row["source"], i, link)
        out.append({**row, "context": context, "match": match_in(context, row["target"], nth),
                    "columns": [link.start, link.end] if link.end >= 0 else None})  # fmt: skip
    return out


def _found(
    state: IndexState, path: str, heading: str | None
) -> list[tuple[dict[str, Any], int, LinkRef, int]]:
    """Each occurrence's fields, with its link, the link's place in its note and how many
    links before it on its line name the same target."""
    wanted = heading_key(heading) if heading else None
    out: list[tuple[dict[str, Any], int, LinkRef, int]] = []
    sources = sorted({e.source for e in state.graph.inc.get(path, [])} | {path})
    # A link reaches a note only through one of the note's names (what the index's
    # invalidation relies on too), so a hub's linking notes resolve only their links to it.
    target = state.notes.get(path)
    names = lookup_keys(note_key(target)) if target is not None else set()
    for source in sources:
        note = state.notes.get(source)
        seen: dict[tuple[int, str], int] = {}  # (line, written): links found so far there
        for i, link in enumerate(note.links if note else ()):
            if not _may_name(link, names):
                continue
            res = state.catalog.resolve(link, source)
            if res.target != path:
                continue
            anchor = link.label.partition("#")[2] if res.swapped else link.anchor
            if wanted is not None and (anchor_key(anchor) if anchor else None) != wanted:
                continue
            written = link.label.partition("#")[0] if res.swapped else link.target
            written = _DENDRON_URI.sub("", written.strip())
            nth = seen.get((link.line, written.lower()), 0)
            seen[(link.line, written.lower())] = nth + 1
            row = {"source": source, "line": link.line, "relation": link.relation,
                   "target": written, "text": link.text, "anchor": anchor,
                   "swapped": res.swapped, "wikilink": link.wikilink, "embed": link.embed}  # fmt: skip
            out.append((row, i, link, nth))
    return out


def _may_name(link: LinkRef, names: set[str]) -> bool:
    """Whether ``link`` could resolve through one of ``names``. Each of its keys is part of its
    target or label, lowered, when they are ASCII (NFC changes nothing): a link holding none of
    the names needs no key computed, which was most of a hub's cost."""
    written = link.target + "|" + link.label
    if written.isascii():
        low = written.lower()
        if not any(name in low for name in names):
            return False
    return not names.isdisjoint(link_keys(link))


def grouped(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The occurrences per source note, with a count (for clients that list notes, not links)."""
    by_source: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = by_source.setdefault(row["source"], {"source": row["source"], "count": 0,
                                                     "relations": [], "lines": []})  # fmt: skip
        entry["count"] += 1
        entry["lines"].append(row["line"])
        if row["relation"] not in entry["relations"]:
            entry["relations"].append(row["relation"])
    return list(by_source.values())


def match_in(context: str, written: str, nth: int = 0) -> list[int] | None:
    """Where the ``nth`` link naming ``written`` sits in ``context``, for highlighting."""
    key = written.strip().lower()
    found = 0
    for m in _LINK.finditer(context):
        inner = m.group(1)
        if inner is not None:
            name = re.split(r"[|#]", inner, maxsplit=1)[0]
            label = inner.partition("|")[2].partition("#")[0]
            names = {name.strip().lower(), label.strip().lower()}
        else:
            names = {unquote(m.group(2).partition("#")[0]).strip().lower()}
        if key in names or any(n.endswith("/" + key) for n in names):
            if found == nth:
                end = context.find(")", m.end()) + 1 if inner is None else m.end()
                return [m.start(), end or m.end()]
            found += 1
    return None
