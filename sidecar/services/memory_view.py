"""Entries as the JSON the methods return, with each typed edge resolved to a memory entry or a
note, and the edges other entries point at this one (so ``B supersedes A`` shows on A too)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sidecar.core.memory import SYMMETRIC, confidence, iso, target_name
from sidecar.core.model import LinkRef
from sidecar.services.memory_index import Record
from sidecar.services.state import IndexState

SNIPPET_CHARS = 240
_INVERSE = {"supports": "supported_by", "supersedes": "superseded_by",
            "derived_from": "derives"}  # fmt: skip


class Viewer:
    def __init__(self, state: IndexState, vault_root: Path) -> None:
        self.state = state
        self.vault_root = vault_root

    def entry(
        self, record: Record, records: dict[str, Record], *, body: bool = True
    ) -> dict[str, Any]:
        e, c = record.entry, record.counters
        out: dict[str, Any] = {
            "id": e.id, "title": e.title, "entry_type": e.entry_type,
            "source_type": e.source_type, "status": e.status, "tags": list(e.tags),
            "created_at": iso(e.created_at), "updated_at": iso(e.updated_at),
        }  # fmt: skip
        for key in ("due_at", "expires_at"):
            value = getattr(e, key)
            if value is not None:
                out[key] = iso(value)
        if e.superseded_by:
            out["superseded_by"] = e.superseded_by
        if e.agent:
            out["agent"] = e.agent
        out["relations"] = e.relation_map()
        out["links"] = self.links(record, records.values())
        out["confidence"] = confidence(e, c)
        out.update(confirmations=c.confirmations, refutations=c.refutations)
        if c.last_confirmed_at:
            out["last_confirmed_at"] = c.last_confirmed_at
        out["path"] = self._display_path(record.file.path)
        out["archived"] = record.file.archived
        if body:
            out["body"] = e.body
        else:
            out["snippet"] = " ".join(e.body.split())[:SNIPPET_CHARS]
        return out

    def links(self, record: Record, records: Iterable[Record]) -> list[dict[str, Any]]:
        """Outgoing typed edges, resolved, then incoming ones from other entries."""
        ids = {r.entry.id for r in records} | {record.entry.id}
        out = []
        for rel, targets in record.entry.relations:
            for target in targets:
                out.append({"relation": rel, "direction": "out", **self.resolve(target, ids)})
        for other in records:
            if other.entry.id == record.entry.id:
                continue
            for rel, targets in other.entry.relations:
                if any(target_name(t) == record.entry.id for t in targets):
                    name = rel if rel in SYMMETRIC else _INVERSE.get(rel, f"{rel}_inverse")
                    out.append({"relation": name, "direction": "in", "kind": "memory",
                                "id": other.entry.id, "title": other.entry.title})  # fmt: skip
        return out

    def resolve(self, target: str, memory_ids: set[str]) -> dict[str, Any]:
        """A link target: a memory entry's id first, else a note the way a wikilink resolves."""
        name = target_name(target)
        if name in memory_ids:
            return {"kind": "memory", "id": name, "target": target}
        link = LinkRef(name, "", "link", name, "", True, False, False, 0, "")
        with self.state.lock:
            res = self.state.catalog.resolve(link, "")
        if res.state == "valid" and res.target:
            return {"kind": "note", "path": res.target, "target": target}
        return {"kind": "missing", "target": target}

    def _display_path(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.vault_root).as_posix()
        except ValueError:
            return str(path)
