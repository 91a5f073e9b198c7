"""Text edits for renames and fixes, as pure values; the server turns them into a WorkspaceEdit.

A rename never writes: the editor applies the edit (and can undo it). Each reference the daemon
reports (source, line, the name as written) is located on its line with ``text.links_on``, and
only the part naming the note or heading is replaced, in the style it was written: a bare name
stays bare, a path stays a path, ``.md`` and URL-encoding are kept, a link through an alias is
left alone (the alias still resolves).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from sidecar.core.anchors import anchor_key, heading_key
from sidecar.core.markdown import slugify
from sidecar.lsp.text import LinkAt, Part, frontmatter_end, links_on
from sidecar.lsp.uris import nfc


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


def stem(path: str) -> str:
    return re.sub(r"\.(md|markdown)$", "", path, flags=re.I)


def new_note_path(old: str, new_name: str) -> str:
    """Where a note renamed to ``new_name`` goes: the same folder unless a path is given."""
    name = new_name.strip().removeprefix("[[").removesuffix("]]").strip().replace("\\", "/")
    name = stem(name.lstrip("/"))
    if not name or name.endswith("/"):
        raise ValueError(f"not a note name: {new_name!r}")
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
            for link in links_on(i, lines[i]):
                part = _name_part(link, bool(ref.get("swapped")))
                if part is not None and part.text.strip().lower() == wanted:
                    found.append(link)
    return found


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
            text = _renamed(part.text, link.wikilink, source, old_keys, new_path)
            if text is not None and text != part.text:
                edits[(link.line, part.start)] = Edit(link.line, part.start, part.end, text)
    return sorted(edits.values(), key=lambda e: (e.line, e.start))


def _renamed(
    written: str, wikilink: bool, source: str, old_keys: set[str], new_path: str
) -> str | None:
    if not wikilink:
        rel = posixpath.relpath(new_path, posixpath.dirname(source) or ".")
        return quote(rel) if "%" in written or (" " not in written and " " in rel) else rel
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
    for i, line in enumerate(lines):
        for link in links_on(i, line) if "[[#" in line else ():
            anchor = link.anchor
            if (
                link.wikilink
                and not link.name.text
                and anchor is not None
                and (anchor_key(anchor.text) == heading_key(old))
            ):
                out.append(Edit(i, anchor.start, anchor.end, new_anchor(anchor.text, old, new)))
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
