"""Typed-relation queries over the open index: traverse, current truth, unlinked mentions.

Traversal and "current" read the in-memory graph under the state lock (no LanceDB, no disk).
Mentions must read note text, which the index does not keep whole: they read the vault's files,
skipping any file that does not contain a name at all before parsing it (a substring test), so
a 1,000-note vault costs one pass of reads, measured in tens of milliseconds.
"""

from __future__ import annotations

import posixpath
from typing import Any

from sidecar.core.facts import Facts, status_of
from sidecar.core.mentions import find_mentions, name_pattern, names_for
from sidecar.core.relations import Taxonomy
from sidecar.core.traverse import MAX_DEPTH, current_of, orientation, superseders_in, traverse
from sidecar.services.state import IndexState
from sidecar.store.vaultfs import Vault


def facts_of(state: IndexState, taxonomy: Taxonomy) -> Facts:
    """The typed facts of every edge, built once per state version (call under the lock)."""
    return state.facts(taxonomy)


def traverse_from(
    state: IndexState, taxonomy: Taxonomy, root: str, relation: str, inverse: bool, depth: int
) -> dict[str, Any]:
    with state.lock:  # a walk along plain links reads the graph, which the writer changes
        facts = facts_of(state, taxonomy)
        hops = traverse(
            facts, state.graph, root, relation, inverse=inverse, depth=min(depth, MAX_DEPTH)
        )
    canonical, forward, name = orientation(taxonomy, relation, inverse)
    return {
        "root": root,
        "relation": name,
        "canonical": canonical,
        "direction": "forward" if forward else "backward",
        "typed": taxonomy.is_typed(canonical),
        "nodes": [h.to_dict() for h in hops],
    }


def current_for(state: IndexState, taxonomy: Taxonomy, path: str) -> dict[str, Any]:
    with state.lock:
        facts = facts_of(state, taxonomy)
        result = current_of(path, superseders_in(facts)).to_dict()
        note = state.notes.get(result["current"] or "")
        result["status"] = (status_of(note.frontmatter) or None) if note else None
    return result


def mentions_of(state: IndexState, vault: Vault, path: str) -> dict[str, Any]:
    """Other notes that name ``path`` in prose without linking it there, line by line."""
    with state.lock:
        note = state.notes[path]
        stem = posixpath.splitext(posixpath.basename(path))[0]
        names = names_for(note.title, stem, note.aliases)
        others = sorted(p for p in state.notes if p != path)
        linking = {e.source for e in state.graph.incoming(path)}
    pattern = name_pattern(names)
    found: list[dict[str, Any]] = []
    if pattern is not None:
        lowered = [n.lower() for n in names]
        for other in others:
            text = vault.read(other).text
            if text is None or not any(n in text.lower() for n in lowered):
                continue
            for m in find_mentions(text, pattern):
                found.append({"source": other, **m.to_dict(), "links_elsewhere": other in linking})
    return {"path": path, "names": names, "mentions": found}
