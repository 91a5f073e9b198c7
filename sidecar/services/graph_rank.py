"""The graph's say in search ranking (DESIGN §4): supersedes/status fade, link boost, expansion.

All three read the in-memory graph under the state lock and never LanceDB, so they cost
microseconds per candidate. They run on the over-fetched candidate list, before the limit cuts
it: a neighbour at rank 30 can climb into the top 10, which a boost applied after the cut (as
mdvdb does) could never do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sidecar.core.facts import STALE_STATUSES, status_of
from sidecar.core.graph import Graph, Step
from sidecar.core.model import NoteRecord
from sidecar.core.relations import LINK, Taxonomy
from sidecar.core.traverse import current_of, local_superseders

EXPAND_MAX_ITEMS = 10


@dataclass(frozen=True, slots=True)
class GraphOptions:
    """Plain values from the vault's settings; the defaults are what an unconfigured vault gets.

    ``fade``: a stale note's score is multiplied by it: a top hybrid match (1.0; rank 5 scores
    ~0.6) steps back a place or two rather than out of sight, and its current note inherits its
    score and leads.

    ``link_weight``/``typed_weight``: a note one link from a top result is lifted to that
    result's score times the weight, two links away times its square (closer = larger). Tuned
    on the first 50 questions of musique- and hotpotqa-hipporag-100 (bench/graph_retrieval.py,
    docs/benchmarks.md, graph-aware retrieval), where this beat mdvdb's flat ``x(1 + 0.15 / 2^(d-1))``; a declared
    relation says more than a passing mention, so typed edges carry more (not tuned: the
    benchmark vaults have none)."""

    taxonomy: Taxonomy = field(default_factory=Taxonomy.default)
    stale_statuses: frozenset[str] = STALE_STATUSES
    fade: float = 0.85
    link_weight: float = 0.8
    typed_weight: float = 0.9
    seeds: int = 3  # link boost: BFS from the top 3 (DESIGN §4)
    expand_seeds: int = 2  # graph context: from the top 2 (tuned: better than 3 on both sets)


class Scored(Protocol):
    path: str
    score: float
    parts: dict[str, Any]


@dataclass(slots=True)
class Candidate:
    """A note's best chunk while ranking; ``parts`` explains the score (``--explain``)."""

    chunk_id: str
    path: str
    score: float = 0.0
    parts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Stale:
    """Why a note steps back: a status that says so, or newer notes that supersede it."""

    status: str
    superseded_by: tuple[str, ...]
    current: str | None  # the newest note along the chain (None: the chain is a cycle)

    @property
    def ahead(self) -> set[str]:
        """Notes this one must rank behind when both are listed."""
        return {*self.superseded_by, *([self.current] if self.current else [])}

    def labels(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.status:
            out["status"] = self.status
        if self.superseded_by:
            out["superseded_by"] = list(self.superseded_by)
            out["current"] = self.current
        return out


def staleness(
    graph: Graph, notes: Mapping[str, NoteRecord], paths: Iterable[str], opts: GraphOptions
) -> dict[str, Stale]:
    """The stale notes among ``paths`` (call under the state lock)."""
    lookup = local_superseders(graph, opts.taxonomy)
    out: dict[str, Stale] = {}
    for path in paths:
        note = notes.get(path)
        status = status_of(note.frontmatter) if note else ""
        newer = tuple(lookup(path))
        if newer:
            out[path] = Stale(status, newer, current_of(path, lookup).current)
        elif status in opts.stale_statuses:
            out[path] = Stale(status, (), None)
    return out


def fade(candidates: Sequence[Scored], stale: Mapping[str, Stale], factor: float) -> None:
    for c in candidates:
        if c.path in stale:
            c.score *= factor
            c.parts["fade"] = factor


def keep_behind(candidates: list[Candidate], stale: Mapping[str, Stale]) -> None:
    """Sort by score, then move each stale note just behind the newer notes that replace it,
    whatever the scores say, until nothing moves (chains settle in at most len(stale) passes)."""
    candidates.sort(key=lambda c: -c.score)
    for _ in range(len(stale) + 1):
        moved = False
        pos = {c.path: i for i, c in enumerate(candidates)}
        for c in list(candidates):
            info = stale.get(c.path)
            ahead = [pos[p] for p in (info.ahead if info else ()) if p in pos]
            if ahead and max(ahead) > pos[c.path]:
                candidates.remove(c)
                candidates.insert(max(ahead), c)
                c.score = candidates[max(ahead) - 1].score
                pos = {x.path: i for i, x in enumerate(candidates)}
                moved = True
        if not moved:
            return


def replacements(candidates: Sequence[Scored], stale: Mapping[str, Stale]) -> dict[str, float]:
    """The current note of each superseded candidate, with the best score among the notes it
    replaces: the current note inherits their relevance (before any fade)."""
    out: dict[str, float] = {}
    for c in candidates:
        info = stale.get(c.path)
        if info and info.current:
            out[info.current] = max(out.get(info.current, 0.0), c.score)
    return out


def inherit(candidates: Sequence[Scored], wanted: Mapping[str, float]) -> dict[str, float]:
    """Lift listed current notes to the score they inherit; return those not listed, which the
    caller pulls in (a query worded like the old decision still finds the new one)."""
    listed = {c.path: c for c in candidates}
    for path, score in wanted.items():
        c = listed.get(path)
        if c is not None and score > c.score:
            c.parts["inherited"] = round(score, 4)
            c.score = score
    return {p: s for p, s in wanted.items() if p not in listed}


def reach(graph: Graph, seeds: Sequence[str], hops: int) -> dict[str, Step]:
    """Each note within ``hops`` links (either direction) of a seed: its least-depth step."""
    best: dict[str, Step] = {}
    for seed in seeds:
        for step in graph.neighbors(seed, hops)[1:]:
            old = best.get(step.path)
            if old is None or step.depth < old.depth:
                best[step.path] = step
    for seed in seeds:
        best.pop(seed, None)
    return best


def carry(step: Step, opts: GraphOptions) -> float:
    """The share of a seed's score a neighbour is lifted to: ``weight ** hops``."""
    relation = step.via.relation if step.via else LINK
    typed = relation != LINK and opts.taxonomy.is_typed(relation)
    return (opts.typed_weight if typed else opts.link_weight) ** step.depth


def boost(
    candidates: Sequence[Scored], graph: Graph, opts: GraphOptions, hops: int,
    skip: Iterable[str] = (),
) -> None:  # fmt: skip
    """Carry relevance along links: a note within ``hops`` links of a top result scores at least
    that result's score times ``carry`` (closer notes keep more), plus 1% of its own score so
    neighbours of one seed keep their own order. Faded notes (``skip``) are not lifted: the
    supersedes edge to their replacement would undo the fade."""
    seeds = sorted(candidates, key=lambda c: -c.score)[: opts.seeds]
    best: dict[str, tuple[float, str, Step]] = {}
    for seed in seeds:
        for step in graph.neighbors(seed.path, hops)[1:]:
            value = seed.score * carry(step, opts)
            if value > best.get(step.path, (0.0, "", step))[0]:
                best[step.path] = (value, seed.path, step)
    excluded = {c.path for c in seeds} | set(skip)
    for c in candidates:
        if c.path in best and c.path not in excluded:
            value, seed_path, step = best[c.path]
            lifted = value + 0.01 * c.score
            if lifted > c.score:
                c.parts.update(link_boost=round(lifted, 4), linked_from=seed_path, hops=step.depth)
                c.score = lifted


def linked_from(step: Step) -> str:
    via = step.via
    if via is None:
        return ""
    return (via.source if step.direction == "out" else via.target) or ""


def expansion(
    graph: Graph, results: Sequence[str], hops: int, seeds: int
) -> list[tuple[str, Step]]:
    """Notes near the top results that are not results themselves, nearest first."""
    near = reach(graph, list(results[:seeds]), hops)
    listed = set(results)
    return sorted(
        ((p, s) for p, s in near.items() if p not in listed), key=lambda ps: (ps[1].depth, ps[0])
    )


def context_item(step: Step, row: Mapping[str, Any], score: float) -> dict[str, Any]:
    via = step.via
    return {
        "path": step.path,
        "chunk_id": row["chunk_id"],
        "heading": row["heading"],
        "start_line": row["start_line"],
        "end_line": row["end_line"],
        "score": round(score, 4),
        "hops": step.depth,
        "linked_from": linked_from(step),
        "relation": via.relation if via else LINK,
        "link_text": via.text if via else "",
        "direction": step.direction,
    }
