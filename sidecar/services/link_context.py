"""Link contexts, read from the notes' rows when a query shows them.

The in-memory index keeps each link's target, line and columns but not its context (the
paragraph or property around it): contexts were the largest part of the state, and only the
queries that list links show them (backlinks, LSP references, a note's incoming links, dangling
links, semantic edges). Each note's row stores its links with their contexts, so those queries
read the rows of the notes they list, outside the state lock. A row is written just after its
note's state changes: a link the row does not hold yet shows "" until the write lands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sidecar.core.model import Edge, LinkRef
from sidecar.store.lance import IndexStore

Stored = Mapping[str, Sequence[LinkRef]]  # a note's links as its row holds them


def link_context(stored: Stored, source: str, i: int, link: LinkRef) -> str:
    """The context of ``link``, the ``i``-th link of ``source``'s in-memory record."""
    links = stored.get(source, ())
    if i < len(links) and replace(links[i], context=link.context) == link:
        return links[i].context
    return ""


def edge_context(stored: Stored, e: Edge) -> str:
    """An edge's context is its first link's: the first at its line and of its relation that
    writes its target (a long paragraph gives each link its own window of text)."""
    here = [x for x in stored.get(e.source, ()) if x.line == e.line and x.relation == e.relation]
    for x in here:
        name, _, anchor = x.label.partition("#")
        if e.raw in (_raw(x.target, x.anchor), _raw(name, anchor)):
            return x.context
    return here[0].context if here else ""


def edge_contexts(store: IndexStore, edges: Sequence[Edge]) -> list[str]:
    stored = store.stored_links({e.source for e in edges})
    return [edge_context(stored, e) for e in edges]


def _raw(name: str, anchor: str) -> str:
    return name + (f"#{anchor}" if anchor else "")
