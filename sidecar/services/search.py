"""Search: lexical (BM25), semantic (cosine over the in-RAM matrix), hybrid (RRF of both), and
edge (the paragraphs around links, ``services/edges.py``).

Order of operations (DESIGN §4): candidate lists over-fetched 5x, filters (path prefix, tags,
frontmatter) pushed into both lists, fusion, one result per note (its best chunk), optional time
decay, the supersedes/status fade, the link boost, the score floor, the limit, then graph context
expansion. The graph steps live in ``graph_rank.py``. Lexical mode never loads the model.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from sidecar.core import ranking
from sidecar.core.filters import Filter, matches, path_matches, tag_matches
from sidecar.core.query_syntax import SearchQuery, Term, file_holds, parse_query, path_holds
from sidecar.core.ranking import (
    MIN_CONFIDENCE,
    OVERFETCH,
    bm25_normalise,
    confidence,
    decay,
    length_prior,
    rrf,
)
from sidecar.embed.base import Embedder
from sidecar.profiling import profile_as
from sidecar.services.edges import EdgeService
from sidecar.services.graph_rank import Candidate, GraphOptions, Stale
from sidecar.services.search_graph import GraphStage
from sidecar.services.state import IndexState
from sidecar.store.chunk_search import chunk_rows, fts_search, prefix_paths
from sidecar.store.lance import IndexStore, sql_str
from sidecar.store.vectors import VectorIndex

Mode = Literal["hybrid", "semantic", "lexical", "edge"]
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
    # results below this confidence are dropped; None: the mode's default (MIN_CONFIDENCE with
    # vectors, none in lexical mode, where the words asked for are the evidence)
    min_confidence: float | None = None
    explain: bool = False
    include_superseded: bool = False  # True: no fade (results are still labelled)
    boost_links: bool = False
    hops: int = 1  # link boost depth, 1-3
    expand: int = 0  # graph context depth, 0-3 (0: none)
    graph: GraphOptions = field(default_factory=GraphOptions)


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
        self.edges = EdgeService(store, state, vectors, embedder)
        self.graph = GraphStage(store, state, vectors, self._lexical)
        self._recent: OrderedDict[tuple[str, str], Vec] = OrderedDict()
        self._recent_lock = threading.Lock()

    @profile_as("search")
    def search(self, q: Query) -> dict[str, Any]:
        out: dict[str, Any] = {"query": q.text, "mode": q.mode, "results": []}
        if q.mode == "edge":
            return {**out, "graph_context": [], "edge_results": self.edges.search(q.text, q.limit)}
        parsed = parse_query(q.text)
        allowed = self._allowed(q, parsed)
        if parsed.filters and not parsed.rank.strip():  # only filters: list what they keep
            out["results"] = self._listed(allowed, q)
            out["graph_context"], out["edge_results"] = [], []
            return out
        q = replace(q, text=parsed.rank)
        ranked = self._rank(q, allowed)
        out["results"] = self.shape(ranked, ranked.best)
        context = self.graph.expand(ranked.best, q, allowed, ranked.vec) if q.expand else []
        out["graph_context"] = [
            {**{k: v for k, v in c.items() if k != "text"}, "snippet": snippet(c["text"], q.text)}
            for c in context
        ]
        out["edge_results"] = []
        return out

    @profile_as("search")
    def rank(self, q: Query) -> Ranked:
        """What ``search`` ranks (no graph context, nothing for a query of filters alone), with
        the scores and no text yet: ``shape`` reads the rows of those a caller keeps (recall
        keeps at most 4 of its 16 candidates, and for most prompts none)."""
        parsed = parse_query(q.text)
        q = replace(q, text=parsed.rank)
        if parsed.filters and not parsed.rank.strip():
            return Ranked(q, [], {}, {}, None)
        return self._rank(q, self._allowed(q, parsed))

    def _rank(self, q: Query, allowed: set[str] | None) -> Ranked:
        n = max(q.limit * OVERFETCH, 50)
        rows: dict[str, dict[str, Any]] = {}  # chunk rows the lexical search already read
        # The two legs run at once: BM25 in LanceDB's native code on a thread of its own, the
        # query embedding and the matrix product here; each releases the GIL, so hybrid costs
        # about the slower leg, not their sum (bench/scale.py).
        lexical: list[Candidate] = []
        leg = None
        if q.mode != "semantic":
            leg = _Leg(lambda: self._lexical(q.text, n, allowed, rows))
        vec = None if q.mode == "lexical" or len(self.vectors) == 0 else self.query_vector(q.text)
        semantic = [] if vec is None else self._semantic(vec, n, allowed)
        if leg is not None:
            lexical = leg.result()
        named, exact = self._named(q.text, allowed) if q.mode == "hybrid" else ([], [])
        candidates = self._combine(q.mode, lexical, semantic, named, exact)
        best = self._best_per_note(candidates)
        if q.mode == "hybrid":
            self._prior(best)
        self._decay(best, q.half_life_days)
        best, stale = self.graph.rank(best, q, allowed, vec)
        _exact_first(best)
        self._confide(best, q.text, vec)
        floor = q.min_confidence
        if floor is None:
            floor = MIN_CONFIDENCE if vec is not None else 0.0
        best = [c for c in best if c.score >= q.min_score and c.parts["confidence"] >= floor]
        return Ranked(q, best[: q.limit], stale, rows, vec)

    def query_vector(self, text: str) -> Vec:
        """The query's vector, remembered for the last few queries: recall asks for the
        prompt's vector three times (notes, memory, its lines), and an agent repeats prompts."""
        model = self.embedder().model_id
        with self._recent_lock:
            vec = self._recent.get((model, text))
            if vec is not None:
                self._recent.move_to_end((model, text))
                return vec
        vec = np.asarray(self.embedder().embed([text])[0], np.float32)
        vec.flags.writeable = False  # shared by every caller
        with self._recent_lock:
            self._recent[(model, text)] = vec
            while len(self._recent) > RECENT_QUERIES:
                self._recent.popitem(last=False)
        return vec

    # -- candidate lists ----------------------------------------------------------------------

    def _allowed(self, q: Query, parsed: SearchQuery | None = None) -> set[str] | None:
        clauses = parsed.clauses if parsed is not None else ()
        if not (q.path or q.tags or q.filters or clauses):
            return None
        with self.state.lock:
            allowed = {
                p for p, n in self.state.notes.items()
                if path_matches(p, q.path)
                and all(tag_matches(n.tags, t) for t in q.tags)
                and all(matches(n.frontmatter, f) for f in q.filters)
            }  # fmt: skip
            tags = {p: self.state.notes[p].tags for p in allowed}
        for clause in clauses:
            allowed &= self._clause(clause, allowed, tags)
        return allowed

    def _clause(
        self, clause: tuple[Term, ...], notes: set[str], tags: dict[str, tuple[str, ...]]
    ) -> set[str]:
        """The notes among ``notes`` for which any of the clause's terms holds."""
        out: set[str] = set()
        for term in clause:
            if term.kind == "tag":
                hit = {p for p in notes if tag_matches(tags[p], term.value)}
            elif term.kind == "path":
                hit = {p for p in notes if path_holds(p, term.value)}
            elif term.kind == "file":
                hit = {p for p in notes if file_holds(p, term.value)}
            elif term.kind == "prefix":
                hit = prefix_paths(self.store, term.value) & notes
            else:  # a word or a phrase: the notes whose text holds it (FTS, in word order)
                hit = self._holding(term.value) & notes
            out |= (notes - hit) if term.negated else hit
        return out

    def _holding(self, text: str) -> set[str]:
        words = _TERM.findall(text)
        if not words:
            return set()
        query = f'"{" ".join(words)}"' if len(words) > 1 else words[0]
        every = self.store.chunks.count_rows()
        return {h.path for h in fts_search(self.store, query, max(every, 1))}

    def _listed(self, allowed: set[str] | None, q: Query) -> list[dict[str, Any]]:
        """A query of filters alone ranks nothing: its notes in path order, as Obsidian lists."""
        paths = sorted(allowed or ())[: q.limit]
        rows = chunk_rows(self.store, [f"{p}#0" for p in paths])
        return [{"path": p, "chunk_id": f"{p}#0", "heading": r["heading"],
                 "start_line": r["start_line"], "end_line": r["end_line"],
                 "snippet": snippet(r["text"], ""), "score": 0.0, "confidence": 0.0}
                for p in paths if (r := rows.get(f"{p}#0")) is not None]  # fmt: skip

    def _lexical(
        self,
        text: str,
        n: int,
        allowed: set[str] | None,
        rows: dict[str, dict[str, Any]] | None = None,
    ) -> list[Candidate]:
        """BM25 candidates; their chunk rows go into ``rows`` when it is given."""
        if allowed is not None and not allowed:
            return []
        where = None
        if allowed is not None and len(allowed) <= 2000:
            where = f"path IN ({', '.join(sql_str(p) for p in sorted(allowed))})"
        limit = n if where or allowed is None else n * 4
        hits = fts_search(self.store, _fts_safe(text), limit, where, rows=rows is not None)
        if rows is not None:
            rows.update((h.chunk_id, h.row) for h in hits if h.row is not None)
        out = [
            Candidate(h.chunk_id, h.path, bm25_normalise(h.score), {"bm25": round(h.score, 4)})
            for h in hits
            if allowed is None or h.path in allowed
        ]
        return out[:n]

    def _semantic(
        self, vec: np.ndarray[Any, Any], n: int, allowed: set[str] | None
    ) -> list[Candidate]:
        return [
            Candidate(cid, path, score, {"cosine": round(score, 4)})
            for cid, path, score in self.vectors.search(vec, n, allowed)
        ]

    def _named(self, text: str, allowed: set[str] | None) -> tuple[list[str], list[str]]:
        """Notes whose title or alias the query names, as whole words; and those it names
        whole (the query is the note's name, as typed into Obsidian's quick switcher)."""
        with self.state.lock:
            titles = self.state.titles()
            found, exact = titles.find(text), titles.exact(text)
        ok = [p for p in found if allowed is None or p in allowed]
        named = [p for p in exact if allowed is None or p in allowed]
        return ok + [p for p in named if p not in ok], named

    @staticmethod
    def _combine(
        mode: Mode,
        lexical: list[Candidate],
        semantic: list[Candidate],
        named: list[str],
        exact: Sequence[str] = (),
    ) -> list[Candidate]:
        """Hybrid fuses notes, not chunks: each list ranks notes by their best chunk, so a note
        with many matching chunks does not crowd out the others (and results are notes)."""
        if mode == "lexical":
            return lexical
        if mode == "semantic":
            return semantic
        lex, sem = _first_per_note(lexical), _first_per_note(semantic)
        by_path = {c.path: c for c in sem}
        for c in lex:
            by_path.setdefault(c.path, c).parts.update(c.parts)
        k, weights = ranking.HYBRID_K, ranking.HYBRID_WEIGHTS  # read here: bench/ varies them
        fused = rrf(
            [[c.path for c in lex], [c.path for c in sem], named],
            k,
            weights=weights,
            best=(weights[0] + weights[1]) / (k + 1),
        )
        out = []
        for f in fused:
            c = by_path.get(f.key) or Candidate(f"{f.key}#0", f.key, 0.0, {})
            c.score = f.score
            c.parts.update(lexical_rank=f.ranks[0], semantic_rank=f.ranks[1],
                           named_rank=f.ranks[2], rrf=round(f.score, 4))  # fmt: skip
            if f.key in exact:
                c.score, c.parts["named"] = 1.0 + 1e-6, "exact"  # first, whatever the legs say
            out.append(c)
        out.sort(key=lambda c: -c.score)
        return out

    @staticmethod
    def _best_per_note(candidates: list[Candidate]) -> list[Candidate]:
        best: dict[str, Candidate] = {}
        for c in candidates:
            if c.path not in best or c.score > best[c.path].score:
                best[c.path] = c
        return sorted(best.values(), key=lambda c: -c.score)

    def _prior(self, candidates: list[Candidate]) -> None:
        if ranking.LENGTH_PRIOR <= 0:
            return
        with self.state.lock:
            for c in candidates:
                note = self.state.notes.get(c.path)
                factor = length_prior(note.chunk_count if note else 1, ranking.LENGTH_PRIOR)
                c.score *= factor
                c.parts["length_prior"] = round(factor, 4)
        candidates.sort(key=lambda c: -c.score)

    def _confide(self, candidates: list[Candidate], text: str, vec: Vec | None) -> None:
        """Each candidate's ``confidence`` (``core.ranking.confidence``) from its note's best
        cosine and its BM25 score, read from the legs or, for a note one leg missed, the
        matrix."""
        missing = [c.path for c in candidates if "cosine" not in c.parts]
        cosines = self.vectors.best_of(vec, missing) if vec is not None and missing else {}
        terms = len(_TERM.findall(text))
        for c in candidates:
            cosine = float(c.parts.get("cosine", cosines.get(c.path, 0.0)))
            c.parts["confidence"] = confidence(cosine, float(c.parts.get("bm25", 0.0)), terms)

    def _decay(self, candidates: list[Candidate], half_life: float) -> None:
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

    def shape(self, ranked: Ranked, best: Sequence[Candidate]) -> list[dict[str, Any]]:
        """``best`` (some of ``ranked.best``) as results, reading the rows the lexical leg
        did not (one query)."""
        q, known = ranked.query, ranked.rows
        rows = {
            **known,
            **chunk_rows(self.store, [c.chunk_id for c in best if c.chunk_id not in known]),
        }
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
                "confidence": c.parts["confidence"],
            }
            if c.path in ranked.stale:
                item.update(ranked.stale[c.path].labels())
            if q.explain:
                item["explain"] = c.parts
            out.append(item)
        return out


_WORD = re.compile(r"\w+", re.UNICODE)
_TERM = re.compile(r"[^\W_]+", re.UNICODE)  # what the FTS tokenizer splits a query into
Vec = np.ndarray[Any, Any]
RECENT_QUERIES = 32


@dataclass(frozen=True, slots=True)
class Ranked:
    """A ranking before its text is read: the query (its rank text), the notes' best chunks in
    order, their staleness labels, the rows the lexical leg read, and the query's vector."""

    query: Query
    best: list[Candidate]
    stale: dict[str, Stale]
    rows: dict[str, dict[str, Any]]
    vec: Vec | None


class _Leg:
    """A call run on a short-lived thread of its own (a pool would outlive its service)."""

    def __init__(self, fn: Callable[[], list[Candidate]]) -> None:
        self._fn = fn
        self._out: list[Candidate] = []
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="sidecar-lexical")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._out = self._fn()
        except BaseException as exc:  # re-raised in the caller's thread
            self._error = exc

    def result(self) -> list[Candidate]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._out


def _exact_first(candidates: list[Candidate]) -> None:
    """A note the query names whole comes first even when superseded: typing its name asks for
    it, as Obsidian's quick switcher opens it (it keeps its label; its replacement follows)."""
    exact = [c for c in candidates if c.parts.get("named") == "exact"]
    if not exact:
        return
    top = max(c.score for c in candidates)
    for c in exact:
        c.score = top
    candidates.sort(key=lambda c: (c.parts.get("named") != "exact", -c.score))


def _first_per_note(candidates: list[Candidate]) -> list[Candidate]:
    seen: dict[str, Candidate] = {}
    for c in candidates:
        seen.setdefault(c.path, c)
    return list(seen.values())


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
