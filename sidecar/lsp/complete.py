"""What the cursor is completing, and the candidates: pure functions over lines and ``Names``.

Inside ``[[`` the candidates are note names and aliases; after ``[[note#`` that note's headings;
after ``[[note#^`` its block ids. In the frontmatter, a key under ``relations:`` completes to a
relation name of the taxonomy and a value under it to a note, written ``"[[name]]"``.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from sidecar.core.link_spans import frontmatter_end
from sidecar.lsp.names import LinkName, Names

Kind = Literal["note", "heading", "block", "relation", "relation_target"]
MAX_ITEMS = 100


@dataclass(frozen=True, slots=True)
class Context:
    kind: Kind
    prefix: str
    start: int  # column where the replaced text starts (the cursor is the end)
    note: str = ""  # heading/block: the note part written before '#'
    close: bool = False  # append ']]' (the editor has not already paired it)


@dataclass(frozen=True, slots=True)
class Item:
    label: str
    insert: str
    detail: str
    kind: Kind
    sort: str


_KEY_LINE = re.compile(r"^(\s+)([\w-]*)$")
_VALUE = re.compile(r"^(\s+)(?:-\s*|[\w-]+:\s*)([\"']?)([^\"'\[\]]*)$")


def context_at(lines: Sequence[str], line: int, col: int) -> Context | None:
    if not 0 <= line < len(lines):
        return None
    text = lines[line]
    before, after = text[:col], text[col:]
    opened = before.rfind("[[")
    if opened >= 0 and "]]" not in before[opened:]:
        return _in_wikilink(before[opened + 2 :], opened + 2, col, not after.startswith("]"))
    end = frontmatter_end(lines)
    if 0 < line < end and _under_relations(lines, line):
        return _in_relations(before, col)
    return None


def _in_wikilink(inner: str, start: int, col: int, close: bool) -> Context | None:
    if "|" in inner:
        return None  # writing the label
    note, hashed, rest = inner.partition("#")
    if not hashed:
        return Context("note", inner, start, close=close)
    if rest.startswith("^"):
        return Context("block", rest[1:], col - len(rest) + 1, note.strip(), close)
    return Context("heading", rest, col - len(rest), note.strip(), close)


def _under_relations(lines: Sequence[str], line: int) -> bool:
    """Whether ``line`` is indented inside the top-level ``relations:`` mapping."""
    if not lines[line].startswith((" ", "\t")):
        return False
    for i in range(line - 1, 0, -1):
        if lines[i] and not lines[i].startswith((" ", "\t", "#")):
            return lines[i].split(":", 1)[0].strip() == "relations"
    return False


def _in_relations(before: str, col: int) -> Context | None:
    key = _KEY_LINE.match(before)
    if key is not None:
        return Context("relation", key.group(2), col - len(key.group(2)))
    value = _VALUE.match(before)
    if value is not None:
        prefix = value.group(3)
        return Context("relation_target", prefix, col - len(prefix) - len(value.group(2)))
    return None


def items(ctx: Context, names: Names, source: str) -> tuple[list[Item], bool]:
    """Candidates for ``ctx`` (best first) and whether the list was cut at ``MAX_ITEMS``."""
    if ctx.kind in ("note", "relation_target"):
        found = _notes(ctx, names)
    elif ctx.kind == "relation":
        found = [Item(n, n + ": ", f"inverse: {inv}" if inv else "relation", "relation", n)
                 for n, inv in names.relations if n.startswith(ctx.prefix.lower())]  # fmt: skip
    else:
        target = names.resolve(ctx.note, source) if ctx.note else source
        note = names.notes.get(target or "")
        found = _anchors(ctx, note.headings if note else (), note.blocks if note else ())
    ranked = sorted(found, key=lambda item: item.sort)
    return ranked[:MAX_ITEMS], len(ranked) > MAX_ITEMS


def _notes(ctx: Context, names: Names) -> list[Item]:
    """The best ``MAX_ITEMS + 1`` candidates (one more tells the caller the list was cut):
    every name is ranked, an ``Item`` is built only for those shown."""
    prefix = ctx.prefix.strip().lower()
    ranked = []
    for seq, name in enumerate(names.link_names()):
        rank = _rank(prefix, name)
        if rank is not None:
            ranked.append((rank, len(name.label), name.label, seq))
    table = names.link_names()
    return [_item(ctx, table[seq], f"{rank}{size:04d}{label}")
            for rank, size, label, seq in heapq.nsmallest(MAX_ITEMS + 1, ranked)]  # fmt: skip


def _item(ctx: Context, name: LinkName, sort: str) -> Item:
    note, wrap = name.note, ctx.kind == "relation_target"
    insert = note.link
    if name.alias:  # in the frontmatter an alias completes to the note itself: no label there
        insert = note.link if wrap else f"{note.link}|{name.label}"
    text = f'"[[{insert}]]"' if wrap else insert + ("]]" if ctx.close else "")
    how = "alias of " if name.alias else ""
    detail = f"{how}{note.path}" if how or note.title == name.label else note.title
    return Item(name.label, text, detail, ctx.kind, sort)


def _rank(prefix: str, name: LinkName) -> int | None:
    """0: the name starts with the prefix, 1: a dotted/slashed part does, 2: it contains it."""
    if not prefix or name.lower.startswith(prefix):
        return 0
    for part in name.parts:
        if part.startswith(prefix):
            return 1
    if prefix in name.lower or prefix in name.path:
        return 2
    return None


def _anchors(
    ctx: Context, heads: Iterable[tuple[int, str, int]], blocks: Iterable[str]
) -> list[Item]:
    prefix = ctx.prefix.lower()
    close = "]]" if ctx.close else ""
    if ctx.kind == "block":
        return [Item("^" + b, b + close, "block", "block", b) for b in blocks
                if b.lower().startswith(prefix)]  # fmt: skip
    return [Item(text, text + close, f"{'#' * level} line {line}", "heading", f"{line:06d}")
            for level, text, line in heads if prefix in text.lower()]  # fmt: skip
