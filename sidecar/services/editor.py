"""What an editor asks while a note is being written: the names links can use, how a link written
in a note resolves, where every link to a note or heading sits, and what lint says about an
unsaved buffer.

All of it reads the in-memory ``IndexState`` under its lock and writes nothing: an unsaved buffer
is parsed with the same ``parse_note`` the indexer uses and resolved against the live catalog,
then thrown away.
"""

from __future__ import annotations

import dataclasses
from collections import ChainMap
from typing import Any

from sidecar.core.anchors import anchor_key, heading_key
from sidecar.core.graph import Graph
from sidecar.core.lint import LOCAL_RULES, RULE_IDS, LintConfig, lint
from sidecar.core.markdown import parse_body
from sidecar.core.model import Edge, LinkRef, NoteRecord
from sidecar.core.note import content_hash, parse_note
from sidecar.core.relations import Taxonomy
from sidecar.core.resolve import Resolution, resolve_links
from sidecar.services.occurrences import occurrences
from sidecar.services.state import IndexState
from sidecar.store.lance import IndexStore

GRAPH_RULES = tuple(r for r in RULE_IDS if r not in LOCAL_RULES)


def catalog(state: IndexState, taxonomy: Taxonomy, since: int | None = None) -> dict[str, Any]:
    """Every note's names, headings and block ids, for completion; ``since`` a version the
    caller holds, answered with ``unchanged`` when nothing was applied since."""
    with state.lock:
        version = state.version
        if since == version:
            return {"version": version, "unchanged": True}
        notes = [_entry(n) for _, n in sorted(state.notes.items())]
    relations = [{"name": n, "inverse": taxonomy.inverse(n)} for n in taxonomy.names()]
    return {"version": version, "unchanged": False, "notes": notes, "relations": relations}


def _entry(n: NoteRecord) -> dict[str, Any]:
    return {
        "path": n.path,
        "title": n.title,
        "aliases": list(n.aliases),
        "id": n.note_id,
        "headings": [[h.level, h.text, h.line] for h in n.headings],
        "blocks": list(n.block_ids),
    }


def parse_written(written: str) -> LinkRef | None:
    """A link as written (``[[T#h|a]]``, ``![[T]]``, ``[t](p.md#h)``, or a bare wikilink
    target ``T#h``) as the parsers see it."""
    text = written if "[" in written else f"[[{written}]]"
    found = parse_body(text).links
    return found[0] if found else None


def resolve(state: IndexState, source: str, links: list[str]) -> dict[str, Any]:
    """Each written link resolved from ``source``, with the line of its heading or block."""
    out = []
    with state.lock:
        for written in links:
            link = parse_written(written)
            if link is None:
                out.append({"link": written, "target": None, "state": "invalid"})
                continue
            res = state.catalog.resolve(link, source)
            out.append({"link": written, **_resolution(state, link, res)})
    return {"source": source, "results": out}


def _resolution(state: IndexState, link: LinkRef, res: Resolution) -> dict[str, Any]:
    anchor = link.label.partition("#")[2] if res.swapped else link.anchor
    line, anchor_found = None, None
    note = state.notes.get(res.target) if res.target else None
    if anchor and note is not None:
        key = anchor_key(anchor)
        line = _anchor_line(note, key) if key else None
        anchor_found = key is None or line is not None or (key[1:] in _blocks(note))
    return {"target": res.target, "state": res.state, "candidates": list(res.candidates),
            "anchor": anchor, "anchor_found": anchor_found, "line": line,
            "swapped": res.swapped}  # fmt: skip


def _blocks(note: NoteRecord) -> set[str]:
    return {b.lower() for b in note.block_ids}


def _anchor_line(note: NoteRecord, key: str) -> int | None:
    """The heading's 1-based line; block ids carry no line in the index (the editor finds them)."""
    if key.startswith("^"):
        return None
    return next((h.line for h in note.headings if heading_key(h.text) == key), None)


def references(
    state: IndexState, store: IndexStore, path: str, heading: str | None = None
) -> dict[str, Any]:
    """Every link to ``path`` as written, not deduplicated (an edge keeps one line per target
    and relation; a rename has to edit them all), optionally only those to one heading."""
    rows = occurrences(state, store, path, heading)
    return {"path": path, "heading": heading, "references": rows}


def check(
    state: IndexState, path: str, text: str, taxonomy: Taxonomy, config: LintConfig
) -> dict[str, Any]:
    """Lint findings for a note as the editor holds it: the per-note rules on ``text`` (unsaved),
    the graph rules (orphan, missing inverse, cycles, stale dependencies) from the saved index."""
    parsed = parse_note(path, text, content_hash(text.encode("utf-8")))
    record = NoteRecord.from_parsed(parsed, 0, len(text))
    local = dataclasses.replace(config, only=_only(config, LOCAL_RULES))
    whole = dataclasses.replace(config, only=_only(config, GRAPH_RULES))
    with state.lock:
        edges = resolve_links(path, record.links, state.catalog)
        notes = ChainMap({path: record}, state.notes)
        buffer = lint(notes, Graph([path], edges), taxonomy, local, focus=path,
                      catalog=state.catalog)  # fmt: skip
        saved = [f for f in lint(state.notes, state.graph, taxonomy, whole) if f.note == path]
    findings = sorted([*buffer, *saved], key=lambda f: (f.line, f.rule, f.target or ""))
    return {
        "path": path,
        "findings": [f.to_dict() for f in findings],
        "links": [_link(e) for e in edges],
    }


def _link(e: Edge) -> dict[str, Any]:
    return {"raw": e.raw, "target": e.target, "state": e.state, "relation": e.relation,
            "line": e.line, "candidates": list(e.candidates)}  # fmt: skip


def _only(config: LintConfig, rules: frozenset[str] | tuple[str, ...]) -> frozenset[str]:
    return frozenset(rules) if config.only is None else config.only & frozenset(rules)
