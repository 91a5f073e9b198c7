"""What recall says about a note beyond its text: whether it still holds (superseded notes are
swapped for the note that replaced them) and its typed edges, as short hints an agent can act on
("supersedes ADR-6", "depends_on Session Store", "memory decision X supports it")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sidecar.core.facts import STALE_STATUSES, Facts, newest, status_of
from sidecar.core.memory import target_name
from sidecar.core.relations import SUPERSEDED_BY, SUPERSEDES, Taxonomy
from sidecar.services.memory_index import Record
from sidecar.services.state import IndexState

MAX_HINTS = 6


@dataclass(frozen=True, slots=True)
class Currency:
    """Which notes no longer hold, and who superseded whom; built once per recall."""

    stale: frozenset[str]
    superseders: dict[str, list[str]]

    def current(self, path: str) -> str | None:
        """``path`` itself when it holds, else the newest note along its supersedes chain that
        does, else None."""
        if path not in self.stale:
            return path
        chain = newest(path, self.superseders)
        return next((p for p in chain[1:] if p not in self.stale), None)


def currency(state: IndexState, taxonomy: Taxonomy) -> Currency:
    with state.lock:
        edges = [e for e in state.graph.edges() if e.relation in (SUPERSEDES, SUPERSEDED_BY)]
        statuses = {p: status_of(n.frontmatter) for p, n in state.notes.items()}
    superseders = Facts(edges, taxonomy).superseders()
    stale = {p for p, s in statuses.items() if s in STALE_STATUSES} | set(superseders)
    return Currency(frozenset(stale), superseders)


def note_hints(state: IndexState, taxonomy: Taxonomy, path: str) -> list[dict[str, Any]]:
    """Typed edges of the note, both directions, each stated from this note's side."""
    hints: list[dict[str, Any]] = []
    with state.lock:
        out = state.graph.outgoing(path)
        inc = state.graph.incoming(path)
    for e in out:
        if e.state == "valid" and e.target and taxonomy.is_typed(e.relation):
            hints.append({"relation": e.relation, "note": e.target})
    for e in inc:
        inverse = taxonomy.inverse(e.relation)
        if inverse and e.source != path:
            hints.append({"relation": inverse, "note": e.source})
    unique = {(h["relation"], h["note"]): h for h in hints}
    return list(unique.values())[:MAX_HINTS]


def memory_hints(records: Iterable[Record], note_path: str, resolve: Any) -> list[dict[str, Any]]:
    """Active memory entries whose typed edges point at this note."""
    out = []
    for r in records:
        if not r.entry.active:
            continue
        for rel, targets in r.entry.relations:
            if any(resolve(target_name(t)) == note_path for t in targets):
                out.append({"relation": rel, "memory": r.entry.id, "title": r.entry.title,
                            "entry_type": r.entry.entry_type})  # fmt: skip
    return out[:MAX_HINTS]
