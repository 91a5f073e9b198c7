"""The graph stage of a search: what ``graph_rank`` decides, applied to live candidates.

Kept apart from ``search.py`` so the flat ranking reads on its own; this is the part that needs
the in-memory graph (under the state lock) and, for notes the query did not reach by itself
(a pulled-in current note, an expansion neighbour), a way to pick the chunk that fits the query.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from sidecar.services.graph_rank import (
    EXPAND_MAX_ITEMS,
    Candidate,
    Stale,
    boost,
    context_item,
    expansion,
    fade,
    inherit,
    keep_behind,
    replacements,
    staleness,
)  # fmt: skip
from sidecar.services.state import IndexState
from sidecar.store.chunk_search import chunk_rows
from sidecar.store.lance import IndexStore
from sidecar.store.vectors import VectorIndex

if TYPE_CHECKING:
    from sidecar.services.search import Query

Vec = np.ndarray[Any, Any]
Lexical = Callable[[str, int, "set[str] | None"], list[Candidate]]


class GraphStage:
    def __init__(
        self, store: IndexStore, state: IndexState, vectors: VectorIndex, lexical: Lexical
    ) -> None:
        self.store = store
        self.state = state
        self.vectors = vectors
        self.lexical = lexical

    def rank(
        self, best: list[Candidate], q: Query, allowed: set[str] | None, vec: Vec | None
    ) -> tuple[list[Candidate], dict[str, Stale]]:
        """Fade stale notes (pulling in the notes that replace them), boost link neighbours,
        and keep each superseded note behind its replacement."""
        opts = q.graph
        with self.state.lock:
            graph, notes = self.state.graph, self.state.notes
            stale = staleness(graph, notes, [c.path for c in best], opts)
        if not q.include_superseded:
            wanted = inherit(best, replacements(best, stale))
            best += self._pull_in(wanted, allowed, vec, q.text)
            with self.state.lock:
                stale.update(staleness(graph, notes, wanted, opts))
            fade(best, stale, opts.fade)
        if q.boost_links:
            faded = () if q.include_superseded else stale
            with self.state.lock:
                boost(best, graph, opts, q.hops, faded)
        if q.include_superseded:
            best.sort(key=lambda c: -c.score)
        else:
            keep_behind(best, stale)
        return best, stale

    def _pull_in(
        self, wanted: dict[str, float], allowed: set[str] | None, vec: Vec | None, text: str
    ) -> list[Candidate]:
        ok = {p: s for p, s in wanted.items() if allowed is None or p in allowed}
        chunks = self.best_chunks(set(ok), vec, text)
        return [
            Candidate(chunks[p][0], p, score, {"replaces_a_match": True})
            for p, score in ok.items()
            if p in chunks
        ]

    def best_chunks(
        self, paths: set[str], vec: Vec | None, text: str
    ) -> dict[str, tuple[str, float]]:
        """The chunk of each note nearest the query (by vector, else BM25, else its first)."""
        if not paths:
            return {}
        out: dict[str, tuple[str, float]] = {}
        if vec is not None:
            for cid, path, score in self.vectors.search(vec, len(paths) * 20, paths):
                out.setdefault(path, (cid, score))
        else:
            for c in self.lexical(text, len(paths) * 20, paths):
                out.setdefault(c.path, (c.chunk_id, c.score))
        with self.state.lock:
            for p in paths - set(out):
                note = self.state.notes.get(p)
                if note is not None and note.chunk_count:
                    out[p] = (f"{p}#0", 0.0)
        return out

    def expand(
        self, best: list[Candidate], q: Query, allowed: set[str] | None, vec: Vec | None
    ) -> list[dict[str, Any]]:
        """Up to 10 notes near the top results, each with its chunk that best fits the query,
        nearest hop first and best-fitting first within a hop; ``text`` is the chunk's text."""
        with self.state.lock:
            near = expansion(
                self.state.graph, [c.path for c in best], q.expand, q.graph.expand_seeds
            )
        near = [(p, s) for p, s in near if allowed is None or p in allowed]
        chunks = self.best_chunks({p for p, _ in near}, vec, q.text)
        near = [(p, s) for p, s in near if p in chunks]
        near.sort(key=lambda ps: (ps[1].depth, -chunks[ps[0]][1], ps[0]))
        near = near[:EXPAND_MAX_ITEMS]
        rows = chunk_rows(self.store, [chunks[p][0] for p, _ in near])
        with self.state.lock:
            stale = staleness(self.state.graph, self.state.notes, [p for p, _ in near], q.graph)
        out = []
        for p, step in near:
            row = rows.get(chunks[p][0])
            if row is not None:
                labels = stale[p].labels() if p in stale else {}
                out.append({**context_item(step, row, chunks[p][1]), **labels, "text": row["text"]})
        return out
