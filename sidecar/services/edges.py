"""Semantic edges: each body link's paragraph, embedded, searched, clustered into kinds.

Edge vectors are computed on demand from the graph's edges and cached by context hash (in RAM,
and in ``edge-vectors.npz`` beside the index, so a later CLI run does not pay again). The first
query on a big vault must not stall for minutes, so each call embeds at most ``budget`` new
contexts; an edge still waiting uses the vector of the chunk its link sits in (already computed
by the embedding stage) and is marked ``approx``. Each call refines the cache until none remain;
the daemon may call ``warm()`` when idle to get there sooner.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sidecar.core.edge_clusters import Clusters, cluster_edges
from sidecar.core.model import Edge
from sidecar.core.relations import LINK
from sidecar.embed.base import Embedder
from sidecar.services.link_context import edge_contexts
from sidecar.services.state import IndexState
from sidecar.store.edge_cache import chunk_spans, load_edge_vectors, save_edge_vectors
from sidecar.store.lance import IndexStore
from sidecar.store.vectors import VectorIndex

EMBED_BUDGET = 256  # ~5 s of MiniLM on 2 cores at worst; TinyEmbedder: instant

Vec = NDArray[np.float32]


def context_key(context: str) -> str:
    return hashlib.sha1(context.encode("utf-8")).hexdigest()


def edge_id(e: Edge) -> str:
    return f"{e.source}->{e.target}@{e.line}"


class EdgeService:
    def __init__(
        self, store: IndexStore, state: IndexState, vectors: VectorIndex,
        embedder: Callable[[], Embedder], budget: int = EMBED_BUDGET,
    ) -> None:  # fmt: skip
        self.store = store
        self.state = state
        self.vectors = vectors
        self.embedder = embedder
        self.budget = budget
        self._lock = threading.Lock()
        self._cache: dict[str, Vec] | None = None
        self._clustered: tuple[tuple[str, ...], Clusters | None] | None = None

    # -- public -------------------------------------------------------------------------------

    def search(self, text: str, limit: int) -> list[dict[str, Any]]:
        edges, contexts, matrix, approx = self._all()
        if not edges:
            return []
        q = self.embedder().embed([text])[0]
        scores = matrix @ q
        top = [int(i) for i in np.argsort(-scores, kind="stable")[:limit]]
        clusters = self._clusters(edges, contexts, matrix, approx)
        strength = self._strength([edges[i] for i in top], matrix[top])
        return [
            {**self._shape(edges[i], contexts[i], approx[i], clusters, i, strength[j]),
             "score": round(float(scores[i]), 4)}
            for j, i in enumerate(top)
        ]  # fmt: skip

    def for_note(self, path: str) -> dict[str, Any]:
        edges, contexts, matrix, approx = self._all()
        clusters = self._clusters(edges, contexts, matrix, approx)
        mine = [i for i, e in enumerate(edges) if path in (e.source, e.target)]
        strength = self._strength([edges[i] for i in mine], matrix[mine])
        out = []
        for j, i in enumerate(mine):
            item = self._shape(edges[i], contexts[i], approx[i], clusters, i, strength[j])
            item["direction"] = "out" if edges[i].source == path else "in"
            out.append(item)
        return {"path": path, "edges": out, "clusters": self._cluster_list(clusters)}

    def clusters(self) -> dict[str, Any]:
        edges, contexts, matrix, approx = self._all()
        clusters = self._clusters(edges, contexts, matrix, approx)
        return {"edges": len(edges), "approx": int(sum(approx)),
                "clusters": self._cluster_list(clusters)}  # fmt: skip

    def warm(self, budget: int | None = None) -> int:
        """Embed up to ``budget`` (default: all) waiting contexts; returns how many remain."""
        _, contexts = self._body_edges()
        self._vectors(contexts, len(contexts) if budget is None else budget)
        cache = self._load()
        return len({context_key(c) for c in contexts} - set(cache))

    # -- vectors ------------------------------------------------------------------------------

    def _body_edges(self) -> tuple[list[Edge], list[str]]:
        """The body links between two notes with a context, and their contexts."""
        with self.state.lock:
            edges = [
                e for e in self.state.graph.edges()
                if e.relation == LINK and e.state == "valid" and e.target and e.target != e.source
            ]  # fmt: skip
        edges.sort(key=lambda e: (e.source, e.line, e.target or ""))
        said = [(e, c) for e, c in zip(edges, edge_contexts(self.store, edges), strict=True)
                if c.strip()]  # fmt: skip
        return [e for e, _ in said], [c for _, c in said]

    def _all(self) -> tuple[list[Edge], list[str], Vec, list[bool]]:
        edges, contexts = self._body_edges()
        matrix, approx = self._vectors(contexts, self.budget)
        if any(approx):
            self._fill_from_chunks(edges, approx, matrix)
        return edges, contexts, matrix, approx

    def _load(self) -> dict[str, Vec]:
        if self._cache is None:
            e = self.embedder()
            self._cache = load_edge_vectors(self.store.directory, e.model_id, e.dim)
        return self._cache

    def _vectors(self, contexts: Sequence[str], budget: int) -> tuple[Vec, list[bool]]:
        """One unit row per context: its vector, or zeros while it waits (``approx``)."""
        embedder = self.embedder()
        with self._lock:
            cache = self._load()
            todo: dict[str, str] = {}
            for context in contexts:
                key = context_key(context)
                if key not in cache and key not in todo and len(todo) < budget:
                    todo[key] = context
            if todo:
                rows = embedder.embed(list(todo.values()))
                cache.update(zip(todo, rows, strict=True))
                save_edge_vectors(self.store.directory, embedder.model_id, embedder.dim, cache)
            keys = [context_key(c) for c in contexts]
            approx = [k not in cache for k in keys]
            matrix = np.zeros((len(contexts), embedder.dim), np.float32)
            for i, k in enumerate(keys):
                if k in cache:
                    matrix[i] = cache[k]
        return matrix, approx

    def _fill_from_chunks(self, edges: Sequence[Edge], approx: list[bool], matrix: Vec) -> None:
        waiting = [i for i, a in enumerate(approx) if a]
        sources = sorted({edges[i].source for i in waiting})
        vectors = {(p, seq): v for p, seq, v in self.vectors.of_notes(sources)}
        by_path: dict[str, list[dict[str, Any]]] = {}
        for row in chunk_spans(self.store, sources).to_pylist():
            by_path.setdefault(row["path"], []).append(row)
        for i in waiting:
            e = edges[i]
            for row in by_path.get(e.source, ()):
                vec = vectors.get((e.source, row["seq"]))
                if vec is not None and row["start_line"] <= e.line <= row["end_line"]:
                    matrix[i] = vec
                    break

    def _strength(self, edges: Sequence[Edge], rows: Vec) -> list[float | None]:
        """cosine(edge, target note), the note as the normalised mean of its chunk vectors."""
        sums: dict[str, Vec] = {}
        for path, _, v in self.vectors.of_notes(sorted({e.target for e in edges if e.target})):
            sums[path] = sums.get(path, np.zeros_like(v)) + v
        out: list[float | None] = []
        for e, row_vec in zip(edges, rows, strict=True):
            total = sums.get(e.target or "")
            if total is None or not float(np.linalg.norm(total)):
                out.append(None)
                continue
            unit = total / np.linalg.norm(total)
            out.append(round(float(unit @ row_vec), 4))
        return out

    # -- clusters and output ------------------------------------------------------------------

    def _clusters(
        self, edges: Sequence[Edge], contexts: Sequence[str], matrix: Vec, approx: list[bool]
    ) -> Clusters | None:
        signature = tuple(
            f"{edge_id(e)}:{context_key(c)}:{a}"
            for e, c, a in zip(edges, contexts, approx, strict=True)
        )
        with self._lock:
            if self._clustered is not None and self._clustered[0] == signature:
                return self._clustered[1]
        result = cluster_edges(matrix, list(contexts))
        with self._lock:
            self._clustered = (signature, result)
        return result

    @staticmethod
    def _cluster_list(c: Clusters | None) -> list[dict[str, Any]]:
        if c is None:
            return []
        return [
            {
                "cluster": j,
                "label": c.labels[j],
                "keywords": list(c.keywords[j]),
                "size": c.sizes[j],
            }
            for j in range(len(c.labels))
        ]

    @staticmethod
    def _shape(
        e: Edge, context: str, approx: bool, c: Clusters | None, index: int,
        strength: float | None,
    ) -> dict[str, Any]:  # fmt: skip
        cluster = c.assignment[index] if c is not None else None
        return {
            "id": edge_id(e), "source": e.source, "target": e.target, "link_text": e.text,
            "line": e.line, "context": context, "cluster": cluster,
            "label": c.labels[cluster] if c is not None and cluster is not None else None,
            "strength": strength, "approx": approx,
        }  # fmt: skip
