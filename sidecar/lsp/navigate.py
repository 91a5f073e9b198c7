"""Answers that follow links: what a position points at, definition, references, hover, rename.

A position points at a *note* (on a link's name), at a *heading* (on a link's ``#anchor``, or
on a heading line of the document), or at nothing. Links resolve through the daemon
(``note.resolve``), so the answer is the index's; every reference comes from
``note.references``, placed by the columns the index keeps, or, in a document the editor has
open (its text wins) and on lines the index has no columns for, found on its line here.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sidecar.core import link_edits as e
from sidecar.core.anchors import anchor_key, heading_key
from sidecar.core.link_spans import (
    block_line,
    body_preview,
    heading_at,
    heading_text_span,
    headings,
    link_at,
)
from sidecar.errors import SidecarError, UsageError
from sidecar.lsp.server import Scope
from sidecar.lsp.types import Json, Location, TextEdit, location, position, span


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    heading: str | None = None  # the heading's text, as the target note writes it
    line: int = 0  # 0-based line of the heading or block, 0 for the note
    span: tuple[int, int, int] | None = None  # (line, start, end) of what a rename replaces


def target_at(ls: Scope, source: str, lines: Sequence[str], line: int,
              col: int) -> Target | None:  # fmt: skip
    link = link_at(lines, line, col)
    if link is None:
        head = heading_at(lines, line)
        if head is None:
            return None
        start, end = heading_text_span(lines[line])
        return Target(source, head.text, line, (line, start, end))
    swapped_first = link.label_name is not None and link.label_name.start <= col
    resolved = _resolve(ls, source, link.written) if link.name.text else None
    path = resolved["target"] if resolved else source
    if not path:
        return None
    swapped = bool(resolved and resolved.get("swapped"))
    name = link.label_name if swapped else link.name
    anchor = link.label_anchor if swapped else link.anchor
    on_anchor = anchor is not None and anchor.start - 1 <= col <= anchor.end
    if swapped and not swapped_first:
        on_anchor = False
    if anchor is not None and anchor.text and (on_anchor or name is None or not name.text):
        return _heading_target(ls, path, anchor.text, (line, anchor.start, anchor.end))
    span = (line, name.start, name.end) if name is not None else None
    line_of = _anchor_line(ls, path, anchor.text) if anchor is not None else 0
    return Target(path, None, line_of or 0, span)


def _resolve(ls: Scope, source: str, written: str) -> dict[str, Any] | None:
    result = ls.vault.call("note.resolve", {"source": source, "links": [written]})["results"][0]
    return dict(result) if result.get("target") is not None else None


def _heading_target(ls: Scope, path: str, anchor: str,
                    span: tuple[int, int, int]) -> Target | None:  # fmt: skip
    key = anchor_key(anchor)
    lines = ls.lines(path) or []
    if key and key.startswith("^"):
        row = block_line(lines, key[1:])
        return Target(path, None, row or 0, None)
    for head in headings(lines):
        if heading_key(head.text) == key:
            return Target(path, head.text, head.line - 1, span)
    return Target(path, None, 0, None)


def _anchor_line(ls: Scope, path: str, anchor: str) -> int:
    found = _heading_target(ls, path, anchor, (0, 0, 0)) if anchor else None
    return found.line if found else 0


def definition(ls: Scope, source: str, lines: Sequence[str], line: int,
               col: int) -> Location | None:  # fmt: skip
    if link_at(lines, line, col) is None:
        return None
    target = target_at(ls, source, lines, line, col)
    if target is None:
        return None
    there = ls.lines(target.path) or [""]
    return location(ls.uri(target.path), ls.range(there, target.line, 0, 0))


def references(ls: Scope, target: Target) -> list[Location]:
    refs = _refs(ls, target)
    out: list[Location] = []
    for source, rows in sorted(_by_source(refs).items()):
        indexed = ls.open_doc(source) is None  # else the buffer, maybe unsaved, is the truth
        lines: list[str] | None = None
        for ref in rows:
            if indexed and ref.get("columns"):
                row, (start, end) = int(ref["line"]) - 1, ref["columns"]
                where = span(position(row, start), position(row, end))  # ASCII: any encoding
                out.append(location(ls.uri(source), where))
                continue
            if lines is None:
                lines = ls.lines(source) or []
            found = e.placed(lines, ref)
            if not found:
                row = max(int(ref["line"]) - 1, 0)
                width = len(lines[row]) if row < len(lines) else 0
                out.append(location(ls.uri(source), ls.range(lines, row, 0, width)))
            for link in found:
                out.append(location(ls.uri(source), ls.link_range(lines, link)))
    return list({(loc["uri"], loc["range"]["start"]["line"], loc["range"]["start"]["character"]): loc
                 for loc in out}.values())  # fmt: skip


def _refs(ls: Scope, target: Target) -> list[dict[str, Any]]:
    params: dict[str, Any] = {"note": target.path}
    if target.heading is not None:
        params["heading"] = target.heading
    return list(ls.vault.call("note.references", params)["references"])


def _by_source(refs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for ref in refs:
        out.setdefault(ref["source"], []).append(ref)
    return out


def hover(ls: Scope, source: str, lines: Sequence[str], line: int,
          col: int) -> Json | None:  # fmt: skip
    link = link_at(lines, line, col)
    target = target_at(ls, source, lines, line, col) if link is not None else None
    if link is None or target is None:
        return None
    there = ls.lines(target.path) or []
    names = ls.vault.names()
    title = names.notes[target.path].title if target.path in names.notes else target.path
    parts = [f"**{title}** — `{target.path}`", body_preview(there, target.line)]
    relations = _relations(ls, target.path)
    if relations:
        parts.append("---\n" + "  \n".join(relations))
    return {"contents": {"kind": "markdown", "value": "\n\n".join(parts)},
            "range": ls.link_range(lines, link)}  # fmt: skip


def _relations(ls: Scope, path: str) -> list[str]:
    try:
        links = ls.vault.call("note.links", {"note": path})
    except SidecarError:
        return []
    out = [f"{o['relation']} → {o['target'] or o['raw']}" for o in links["outgoing"]
           if o["relation"] != "link"]  # fmt: skip
    out += [
        f"{i['relation']} ← {i['source']}" for i in links["incoming"] if i["relation"] != "link"
    ]
    return out


def rename(ls: Scope, target: Target, new_name: str) -> Json:
    if target.heading is not None:
        return _rename_heading(ls, target, new_name.strip())
    new_path = e.new_note_path(target.path, new_name)
    if new_path != target.path and new_path.lower() in {p.lower() for p in ls.vault.names().notes}:
        raise UsageError(f"a note {new_path} already exists")
    changes: list[Any] = []
    for source, rows in sorted(_by_source(_refs(ls, target)).items()):
        lines = ls.lines(source) or []
        changes += doc_edit(
            ls, source, lines, e.rename_note_edits(lines, source, rows, target.path, new_path)
        )
    if new_path != target.path:
        changes.append({"kind": "rename", "oldUri": ls.uri(target.path),
                        "newUri": ls.uri(new_path)})  # fmt: skip
    return {"documentChanges": changes}


def _rename_heading(ls: Scope, target: Target, new: str) -> Json:
    old = target.heading or ""
    if not new or "\n" in new:
        raise UsageError("a heading needs a one-line name")
    per_file = _by_source(_refs(ls, target))
    per_file.setdefault(target.path, [])
    changes: list[Any] = []
    for source, rows in sorted(per_file.items()):
        lines = ls.lines(source) or []
        edits = e.rename_heading_edits(lines, rows, old, new)
        if source == target.path:
            start, end = heading_text_span(lines[target.line])
            edits += [e.Edit(target.line, start, end, new), *e.local_anchor_edits(lines, old, new)]
        changes += doc_edit(ls, source, lines, edits)
    return {"documentChanges": changes}


def doc_edit(ls: Scope, rel: str, lines: Sequence[str],
              edits: list[e.Edit]) -> list[Json]:  # fmt: skip
    if not edits:
        return []
    unique = {(x.line, x.start): x for x in edits}.values()
    text_edits: list[TextEdit] = [
        {"range": ls.range(lines, x.line, x.start, x.end, x.last_line), "newText": x.new_text}
        for x in sorted(unique, key=lambda x: (x.line, x.start))
    ]
    doc = {"uri": ls.uri(rel), "version": ls.doc_version(rel)}  # null: the file on disk
    return [{"textDocument": doc, "edits": text_edits}]


def note_path_for(written: str) -> str:
    """Where "create the missing note" puts ``[[written]]``: that path from the vault root."""
    return e.stem(posixpath.normpath(written.strip().lstrip("/"))) + ".md"
