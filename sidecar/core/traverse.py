"""Typed traversal and "current truth" over the merged facts, pure.

Both walk *facts*, not edges as written: ``A supersedes B`` in A and ``superseded_by: A`` in B
are one step, whichever note states it, so a vault half-written in each style walks the same as
one written consistently. Every walk keeps a visited set: vaults do contain cycles (lint reports
them), and a query must answer, not loop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sidecar.core.facts import Facts
from sidecar.core.graph import Graph
from sidecar.core.links import normalise_relation
from sidecar.core.model import Edge
from sidecar.core.relations import LINK, SUPERSEDES, Taxonomy

MAX_DEPTH = 5


@dataclass(frozen=True, slots=True)
class Hop:
    """A note reached by a typed walk: read as ``source --relation--> path``; ``stated`` lists
    every edge that states the fact (either spelling), so the user sees where it is written."""

    path: str
    depth: int
    source: str
    relation: str
    stated: tuple[Edge, ...]

    def to_dict(self) -> dict[str, Any]:
        via = {"source": self.source, "relation": self.relation, "target": self.path,
               "stated": [{"path": e.source, "relation": e.relation, "line": e.line}
                          for e in self.stated]}  # fmt: skip
        return {"path": self.path, "depth": self.depth, "via": via}


def orientation(taxonomy: Taxonomy, relation: str, inverse: bool) -> tuple[str, bool, str]:
    """(canonical relation, walk forward?, name to read each step by) for a requested relation.

    ``superseded_by`` walks ``supersedes`` facts backwards; ``--inverse`` flips the walk.
    Untyped and unknown names walk the edges as written."""
    name = normalise_relation(relation)
    forward = True
    canonical = name
    if taxonomy.is_backward(name):
        canonical, forward = taxonomy.backward[name], False
    if inverse:
        forward = not forward
        name = taxonomy.inverse(name) or name
    return canonical, forward, name


Neighbours = Callable[[str], list[tuple[str, tuple[Edge, ...]]]]
"""A note -> the notes one step away, sorted, each with the edges stating that step."""


def neighbours(facts: Facts, graph: Graph, canonical: str, forward: bool) -> Neighbours:
    """Steps along one canonical relation: from the facts, or for plain body links (which the
    facts leave out) from the graph's own edge lists. Read the graph under the state lock."""
    if canonical != LINK:
        steps = facts.steps(canonical, forward)
        return lambda node: [(nxt, tuple(facts.edges[f])) for nxt, f in steps.get(node, ())]

    def along_links(node: str) -> list[tuple[str, tuple[Edge, ...]]]:
        by_next: dict[str, list[Edge]] = {}
        for e in (graph.out if forward else graph.inc).get(node, ()):
            target = e.target
            if e.relation != LINK or e.state != "valid" or target is None or target == e.source:
                continue
            by_next.setdefault(target if forward else e.source, []).append(e)
        return [(nxt, tuple(by_next[nxt])) for nxt in sorted(by_next)]

    return along_links


def traverse(
    facts: Facts,
    graph: Graph,
    root: str,
    relation: str,
    *,
    inverse: bool = False,
    depth: int = 1,
) -> list[Hop]:
    """Breadth-first along one relation, each note once at its least depth (cycle-safe)."""
    canonical, forward, name = orientation(facts.taxonomy, relation, inverse)
    step = neighbours(facts, graph, canonical, forward)
    seen = {root}
    out: list[Hop] = []
    frontier = deque([(root, 0)])
    while frontier:
        node, d = frontier.popleft()
        if d >= min(depth, MAX_DEPTH):
            continue
        for nxt, stated in step(node):
            if nxt not in seen:
                seen.add(nxt)
                out.append(Hop(nxt, d + 1, node, name, stated))
                frontier.append((nxt, d + 1))
    return out


Superseders = Callable[[str], list[str]]


@dataclass(frozen=True, slots=True)
class Current:
    """Where a supersedes chain ends. ``current`` is None when every way forward runs into a
    cycle; ``alternatives`` are other newest notes when the chain forks."""

    path: str
    current: str | None
    chain: tuple[str, ...]
    cycle: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "current": self.current,
                               "chain": list(self.chain)}  # fmt: skip
        if self.cycle:
            out["cycle"] = list(self.cycle)
        if self.alternatives:
            out["alternatives"] = list(self.alternatives)
        return out


def current_of(path: str, superseders: Superseders) -> Current:
    """Follow "superseded by" to a note nothing supersedes, by the fewest steps (ties in path
    order). When no such note is reachable, the walk is caught in a cycle: report it."""
    parents: dict[str, str | None] = {path: None}
    frontier = deque([path])
    sinks: list[str] = []
    while frontier:
        node = frontier.popleft()
        nxt = sorted(superseders(node))
        if not nxt:
            sinks.append(node)
            continue
        for n in nxt:
            if n not in parents:
                parents[n] = node
                frontier.append(n)
    if sinks:
        best = min(sinks, key=lambda s: (_depth(s, parents), s))
        others = tuple(sorted(s for s in sinks if s != best))
        return Current(path, best, _chain(best, parents), (), others)
    walk, cycle = _walk_into_cycle(path, superseders)
    return Current(path, None, walk, cycle)


def _depth(node: str, parents: Mapping[str, str | None]) -> int:
    return len(_chain(node, parents))


def _chain(node: str, parents: Mapping[str, str | None]) -> tuple[str, ...]:
    out = [node]
    while (up := parents[out[-1]]) is not None:
        out.append(up)
    return tuple(reversed(out))


def _walk_into_cycle(
    path: str, superseders: Superseders
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The greedy walk (first superseder in path order) and the cycle it closes."""
    walk = [path]
    index = {path: 0}
    while True:
        nxt = min(superseders(walk[-1]))
        if nxt in index:
            return tuple(walk), (*walk[index[nxt] :], nxt)
        index[nxt] = len(walk)
        walk.append(nxt)


def superseders_in(facts: Facts) -> Superseders:
    """The whole-vault lookup, for ``graph.current``."""
    table = facts.superseders()
    return lambda p: table.get(p, [])


def local_superseders(graph: Graph, taxonomy: Taxonomy) -> Superseders:
    """The same answer from one note's own edges (its out- and in-edges), for ranking: a search
    asks about a few dozen notes, so this avoids building the vault's facts per query."""

    def lookup(path: str) -> list[str]:
        out: set[str] = set()
        for e in (*graph.out.get(path, ()), *graph.inc.get(path, ())):
            if e.state != "valid" or e.target is None or e.target == e.source:
                continue
            newer, rel, older = taxonomy.canonical(e.source, e.relation, e.target)
            if rel == SUPERSEDES and older == path:
                out.add(newer)
        return sorted(out)

    return lookup
