"""Search: lexical (BM25), semantic (cosine over the in-RAM matrix) and hybrid (RRF of both).

Order of operations (DESIGN §4): candidate lists over-fetched 5x, filters (path prefix, tags,
frontmatter) pushed into both lists, fusion, one result per note (its best chunk), optional time
decay, the score floor, then the limit. Lexical mode never loads the model.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from sidecar.core.filters import Filter, matches, path_matches, tag_matches
from sidecar.core.ranking import OVERFETCH, RRF_K, bm25_normalise, decay, rrf
from sidecar.embed.base import Embedder
from sidecar.services.state import IndexState
from sidecar.store.chunk_search import chunk_rows, fts_search
from sidecar.store.lance import IndexStore, sql_str
from sidecar.store.vectors import VectorIndex

Mode = Literal["hybrid", "semantic", "lexical"]
SNIPPET_CHARS = 240


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    mode: Mode = "hybrid"
    limit: int = 10
    path: str = ""
    tags: tuple[str, ...] = ()
    filters: tuple[Filter, ...] = ()
    half_life_days: float = 0.0  # 0: no time decay
    min_score: float = 0.0
    explain: bool = False


@dataclass(slots=True)
class _Candidate:
    chunk_id: str
    path: str
    score: float = 0.0
    parts: dict[str, Any] = field(default_factory=dict)


class SearchService:
    def __init__(
        self,
        store: IndexStore,
        state: IndexState,
        vectors: VectorIndex,
        embedder: Callable[[], Embedder],
        clock: Callable[[], dt.datetime],
    ) -> None:
        self.store = store
        self.state = state
        self.vectors = vectors
        self.embedder = embedder
        self.clock = clock

    def search(self, q: Query) -> dict[str, Any]:
        allowed = self._allowed(q)
        n = max(q.limit * OVERFETCH, 50)
        lexical = [] if q.mode == "semantic" else self._lexical(q.text, n, allowed)
        semantic = [] if q.mode == "lexical" else self._semantic(q.text, n, allowed)
        candidates = self._combine(q.mode, lexical, semantic)
        best = self._best_per_note(candidates)
        self._decay(best, q.half_life_days)
        best = [c for c in best if c.score >= q.min_score][: q.limit]
        return {"query": q.text, "mode": q.mode, "results": self._shape(best, q)}

    # -- candidate lists ----------------------------------------------------------------------

    def _allowed(self, q: Query) -> set[str] | None:
        if not (q.path or q.tags or q.filters):
            return None
        with self.state.lock:
            return {
                p for p, n in self.state.notes.items()
                if path_matches(p, q.path)
                and all(tag_matches(n.tags, t) for t in q.tags)
                and all(matches(n.frontmatter, f) for f in q.filters)
            }  # fmt: skip

    def _lexical(self, text: str, n: int, allowed: set[str] | None) -> list[_Candidate]:
        if allowed is not None and not allowed:
            return []
        where = None
        if allowed is not None and len(allowed) <= 2000:
            where = f"path IN ({', '.join(sql_str(p) for p in sorted(allowed))})"
        hits = fts_search(
            self.store, _fts_safe(text), n if where or allowed is None else n * 4, where
        )
        out = [
            _Candidate(h.chunk_id, h.path, bm25_normalise(h.score), {"bm25": round(h.score, 4)})
            for h in hits
            if allowed is None or h.path in allowed
        ]
        return out[:n]

    def _semantic(self, text: str, n: int, allowed: set[str] | None) -> list[_Candidate]:
        if len(self.vectors) == 0:
            return []
        vec = self.embedder().embed([text])[0]
        return [
            _Candidate(cid, path, score, {"cosine": round(score, 4)})
            for cid, path, score in self.vectors.search(np.asarray(vec), n, allowed)
        ]

    @staticmethod
    def _combine(
        mode: Mode, lexical: list[_Candidate], semantic: list[_Candidate]
    ) -> list[_Candidate]:
        if mode == "lexical":
            return lexical
        if mode == "semantic":
            return semantic
        by_id = {c.chunk_id: c for c in semantic}
        for c in lexical:
            by_id.setdefault(c.chunk_id, c).parts.update(c.parts)
        fused = rrf([[c.chunk_id for c in lexical], [c.chunk_id for c in semantic]], RRF_K)
        out = []
        for f in fused:
            c = by_id[f.key]
            c.score = f.score
            c.parts.update(lexical_rank=f.ranks[0], semantic_rank=f.ranks[1], rrf=round(f.score, 4))
            out.append(c)
        return out

    @staticmethod
    def _best_per_note(candidates: list[_Candidate]) -> list[_Candidate]:
        best: dict[str, _Candidate] = {}
        for c in candidates:
            if c.path not in best or c.score > best[c.path].score:
                best[c.path] = c
        return sorted(best.values(), key=lambda c: -c.score)

    def _decay(self, candidates: list[_Candidate], half_life: float) -> None:
        if half_life <= 0:
            return
        now = self.clock().timestamp()
        with self.state.lock:
            for c in candidates:
                note = self.state.notes.get(c.path)
                age = (now - note.mtime_ns / 1e9) / 86400 if note else 0.0
                factor = decay(age, half_life)
                c.score *= factor
                c.parts["decay"] = round(factor, 4)
        candidates.sort(key=lambda c: -c.score)

    # -- output -------------------------------------------------------------------------------

    def _shape(self, best: list[_Candidate], q: Query) -> list[dict[str, Any]]:
        rows = chunk_rows(self.store, [c.chunk_id for c in best])
        out = []
        for c in best:
            row = rows.get(c.chunk_id)
            if row is None:
                continue  # the note changed between the search and now
            item: dict[str, Any] = {
                "path": c.path,
                "chunk_id": c.chunk_id,
                "heading": row["heading"],
                "start_line": row["start_line"],
                "end_line": row["end_line"],
                "snippet": snippet(row["text"], q.text),
                "score": round(c.score, 4),
            }
            if q.explain:
                item["explain"] = c.parts
            out.append(item)
        return out


_WORD = re.compile(r"\w+", re.UNICODE)


def _fts_safe(text: str) -> str:
    """Unbalanced quotes would make the FTS parser fail; keep quotes only when they pair up."""
    return text if text.count('"') % 2 == 0 else text.replace('"', " ")


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """A window of the chunk around the first query word it contains, on one line."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lowered = flat.lower()
    hits = [lowered.find(w.lower()) for w in _WORD.findall(query) if len(w) > 2]
    first = min((h for h in hits if h >= 0), default=0)
    start = max(0, first - width // 3)
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")
