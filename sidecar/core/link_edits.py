"""Text edits for renames and fixes, as pure values: the language server turns them into a
WorkspaceEdit (the editor applies it, and can undo it), ``note.move`` applies them to the files
(``apply_edits``). Each reference the daemon reports (source, line, the name as written) is
located on its line among the links the note's parse finds (``link_spans.line_links``), and
only the part naming the note or heading is replaced, in the style it was written: a bare name
stays bare, a path stays a path, ``.md`` and URL-encoding are kept, a link through an alias is
left alone (the alias still resolves).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from sidecar.core.anchors import anchor_key, heading_key
from sidecar.core.link_spans import (
    LinkAt,
    Part,
    frontmatter_end,
    line_links,
    links_in,
    written_on,
)
from sidecar.core.markdown import slugify


@dataclass(frozen=True, slots=True)
class Edit:
    line: int
    start: int
    end: int
    new_text: str
    end_line: int = -1  # -1: the same line

    @property
    def last_line(self) -> int:
        return self.line if self.end_line < 0 else self.end_line


def nfc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def stem(path: str) -> str:
    return re.sub(r"\.(md|markdown)$", "", path, flags=re.I)


def new_note_path(old: str, new_name: str) -> str:
    """Where a note renamed to ``new_name`` goes: the same folder unless a path is given."""
    name = new_name.strip().removeprefix("[[").removesuffix("]]").strip().replace("\\", "/")
    name = stem(name.lstrip("/"))
    if not name or name.endswith("/"):
        raise ValueError(f"not a note name: {new_name!r}")
    if ".." in name.split("/"):  # as rust-analyzer does: a rename never leaves the workspace
        raise ValueError(f"a note cannot be renamed outside the vault: {new_name!r}")
    folder = posixpath.dirname(old)
    return (name if "/" in name or not folder else f"{folder}/{name}") + ".md"


def locate(lines: Sequence[str], ref: Mapping[str, Any]) -> list[LinkAt]:
    """The links of one reference (``note.references`` row): on its line (1-based), or in the
    frontmatter when the line is 0, whose written name is the reported one."""
    line = int(ref["line"])
    rows = range(1, frontmatter_end(lines)) if line == 0 else [line - 1]
    wanted = str(ref["target"]).strip().lower()
    found = []
    for i in rows:
        if 0 <= i < len(lines):
            for link in line_links(lines, i):
                part = _name_part(link, bool(ref.get("swapped")))
                if part is not None and part.text.strip().lower() == wanted:
                    found.append(link)
    return found


def placed(lines: Sequence[str], ref: Mapping[str, Any]) -> list[LinkAt]:
    """``locate`` for a row with a body line, read from that line's text alone: the daemon's
    parse found the link there, and parsing every linking note again made a hub's references
    take a quarter of a second. Anything else (frontmatter, a line the text no longer has, no
    match) goes to ``locate``."""
    row = int(ref["line"]) - 1
    if row < frontmatter_end(lines) or row >= len(lines):
        return locate(lines, ref)
    wanted = str(ref["target"]).strip().lower()
    swapped = bool(ref.get("swapped"))
    found = [link for link in written_on(row, lines[row])
             if (part := _name_part(link, swapped)) is not None
             and part.text.strip().lower() == wanted]  # fmt: skip
    return found or locate(lines, ref)


def _name_part(link: LinkAt, swapped: bool) -> Part | None:
    return link.label_name if swapped else link.name


def _anchor_part(link: LinkAt, swapped: bool) -> Part | None:
    return link.label_anchor if swapped else link.anchor


def rename_note_edits(
    lines: Sequence[str],
    source: str,
    refs: Iterable[Mapping[str, Any]],
    old_path: str,
    new_path: str,
) -> list[Edit]:
    """Edits in one source note for every reference to ``old_path`` renamed to ``new_path``."""
    old_keys = {nfc(stem(old_path)).lower(), nfc(posixpath.basename(stem(old_path))).lower()}
    edits: dict[tuple[int, int], Edit] = {}
    for ref in refs:
        swapped = bool(ref.get("swapped"))
        for link in locate(lines, ref):
            part = _name_part(link, swapped)
            if part is None:
                continue
            raw = lines[link.line][part.start : part.end]  # a Markdown link's name is decoded
            written = part.text if link.wikilink else raw
            text = _renamed(written, link.wikilink, source, old_keys, new_path,
                            angle="<" in link.written)  # fmt: skip
            if text is not None and text != raw:
                edits[(link.line, part.start)] = Edit(link.line, part.start, part.end, text)
    return sorted(edits.values(), key=lambda e: (e.line, e.start))


def _renamed(
    written: str,
    wikilink: bool,
    source: str,
    old_keys: set[str],
    new_path: str,
    angle: bool = False,
) -> str | None:
    """The new name as the link wrote the old one. A Markdown link's path stays encoded when it
    was, and is encoded when a space would otherwise end it (``<...>`` links may hold spaces)."""
    if not wikilink:
        rel = posixpath.relpath(new_path, posixpath.dirname(source) or ".")
        return quote(rel) if "%" in written or (" " in rel and not angle) else rel
    bare = nfc(stem(written.strip().lstrip("/"))).lower()  # typed composed, stored either way
    if bare not in old_keys:
        return None  # written through an alias or id: it still resolves
    new = stem(new_path) if "/" in written else posixpath.basename(stem(new_path))
    return new + written[len(stem(written)) :] if written.lower().endswith(".md") else new


def rename_heading_edits(
    lines: Sequence[str], refs: Iterable[Mapping[str, Any]], old: str, new: str
) -> list[Edit]:
    """Edits to the anchors of every reference to heading ``old`` now called ``new``."""
    edits: dict[tuple[int, int], Edit] = {}
    for ref in refs:
        swapped = bool(ref.get("swapped"))
        for link in locate(lines, ref):
            part = _anchor_part(link, swapped)
            if part is not None and anchor_key(part.text) == heading_key(old):
                edits[(link.line, part.start)] = Edit(link.line, part.start, part.end,
                                                      new_anchor(part.text, old, new))  # fmt: skip
    return sorted(edits.values(), key=lambda e: (e.line, e.start))


def local_anchor_edits(lines: Sequence[str], old: str, new: str) -> list[Edit]:
    """``[[#old]]`` links inside the note itself (navigation, not edges in the index)."""
    out = []
    for link in links_in(lines) if any("[[#" in line for line in lines) else ():
        anchor = link.anchor
        if (
            link.wikilink
            and not link.name.text
            and anchor is not None
            and (anchor_key(anchor.text) == heading_key(old))
        ):
            out.append(Edit(link.line, anchor.start, anchor.end,
                            new_anchor(anchor.text, old, new)))  # fmt: skip
    return out


def new_anchor(written: str, old: str, new: str) -> str:
    """The heading text when the link wrote the text, a slug when it wrote a slug."""
    if written.strip().lower() == old.strip().lower() or " " in written:
        return new
    return "-".join(slugify(new).split())


def minimal_edit(old: str, new: str) -> Edit | None:
    """One edit turning ``old`` into ``new``: the changed lines only (None when equal)."""
    if old == new:
        return None
    a, b = old.split("\n"), new.split("\n")
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    replaced = b[head : len(b) - tail]
    text = "".join(line + "\n" for line in replaced)
    return Edit(head, 0, 0, text, end_line=len(a) - tail)


_NEWLINE = re.compile(r"\r\n|\r|\n")


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with ``edits`` applied (lines and columns as ``split_lines`` counts them); every
    character no edit covers, line endings included, is left as it was."""
    starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]

    def offset(line: int, col: int) -> int:
        return min(starts[line] + col, len(text)) if line < len(starts) else len(text)

    out = text
    for e in sorted(edits, key=lambda e: (e.line, e.start), reverse=True):
        out = out[: offset(e.line, e.start)] + e.new_text + out[offset(e.last_line, e.end) :]
    return out
