"""Searching memory entries: BM25 from the ``memory`` table fused (RRF, as for notes) with the
cosine of each entry's vector, which for a few thousand entries is one small matrix product.

Each hit keeps both raw signals (``cosine``, ``bm25``) beside the fused score, because recall's
abstention floor needs evidence on an absolute scale, which a rank-based score is not.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sidecar.core.ranking import RRF_K, bm25_normalise, rrf
from sidecar.errors import SidecarError
from sidecar.services.memory import MemoryService, wanted
from sidecar.services.memory_index import Record

_log = logging.getLogger(__name__)


@dataclass(slots=True)
class MemoryHit:
    record: Record
    score: float
    cosine: float = 0.0
    bm25: float = 0.0  # normalised s/(s+1.5)
    parts: dict[str, Any] = field(default_factory=dict)


def search_memory(
    service: MemoryService,
    query: str,
    limit: int = 10,
    types: Sequence[str] = (),
    status: str = "active",
    mode: str = "hybrid",
    query_vector: Callable[[str], Any] | None = None,
) -> list[MemoryHit]:
    """``query_vector``: how to embed the query, when the caller has a better way than the
    model (recall: the search's, which remembers the prompt it just embedded)."""
    index = service.index
    records = {r.entry.id: r for r in index.snapshot() if wanted(r.entry, types, (), status)}
    if not records or not query.strip():
        return []
    n = max(limit * 5, 50)
    lexical: list[tuple[str, float]] = []
    if mode != "semantic":
        hits = index.table.search(query, n * 2)
        lexical = [(h.id, h.score) for h in hits if h.id in records][:n]
    semantic: list[tuple[str, float]] = []
    if mode != "lexical":
        index.ensure_vectors()
        vec = index.embed([query]) if query_vector is None else _embedded(query_vector, query)
        if vec is not None:
            semantic = sorted(index.cosines(vec[0], list(records.values())), key=lambda x: -x[1])
            semantic = semantic[:n]
    return _fuse(records, lexical, semantic)[:limit]


def _embedded(query_vector: Callable[[str], Any], query: str) -> list[Any] | None:
    try:
        return [query_vector(query)]
    except SidecarError as exc:  # as ``MemoryIndex.embed``: words alone without the model
        _log.warning("memory: no vectors (%s); lexical matching only", exc.message)
        return None


def _fuse(
    records: dict[str, Record],
    lexical: list[tuple[str, float]],
    semantic: list[tuple[str, float]],
) -> list[MemoryHit]:
    bm25 = dict(lexical)
    cosine = dict(semantic)
    if not semantic or not lexical:  # one signal only: its own scale is the score
        only = semantic or [(i, bm25_normalise(s)) for i, s in lexical]
        return [_hit(records[i], s, cosine, bm25) for i, s in only]
    fused = rrf([[i for i, _ in lexical], [i for i, _ in semantic]], RRF_K)
    return [_hit(records[f.key], f.score, cosine, bm25) for f in fused]


def _hit(
    record: Record, score: float, cosine: dict[str, float], bm25: dict[str, float]
) -> MemoryHit:
    i = record.entry.id
    raw = bm25.get(i, 0.0)
    parts = {"cosine": round(cosine.get(i, 0.0), 4), "bm25": round(raw, 4)}
    return MemoryHit(record, round(score, 4), cosine.get(i, 0.0), bm25_normalise(raw), parts)


def search(service: MemoryService, query: str, limit: int, types: Sequence[str], status: str,
           mode: str = "hybrid") -> dict[str, Any]:  # fmt: skip
    hits = search_memory(service, query, limit, types, status, mode)
    results = []
    for h in hits:
        item = service.view(h.record, body=False)
        item["score"] = h.score
        item["explain"] = h.parts
        results.append(item)
    return {"query": query, "results": results}
