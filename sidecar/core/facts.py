"""Typed facts over the resolved graph: each fact once, in its canonical spelling.

``A supersedes B`` (in A) and ``B superseded_by A`` (in B) are one fact; lint, traversal, the
search fade and "current truth" all need that merged view, plus the two derived questions asked
most: which notes are superseded, and what is the newest note along a supersedes chain.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sidecar.core.model import Edge
from sidecar.core.relations import LINK, SUPERSEDES, Taxonomy

# A ``status`` that says the note no longer holds, whatever links say.
STALE_STATUSES = frozenset(
    {"superseded", "deprecated", "archived", "declined", "rejected", "obsolete", "retired",
     "replaced", "abandoned", "withdrawn"}
)  # fmt: skip

Fact = tuple[str, str, str]  # (source, relation, target), canonical


class Facts:
    """Canonical facts from valid, non-self edges; ``edges[fact]`` lists every edge stating it,
    the forward spelling first (so a finding points at the line a reader expects).

    One entry per edge and nothing beside it: at 100k notes (380k edges) a set of the facts as
    written and a (fact, edge) pair per source cost ~60 MB more (estimated from the sizes of
    the tuples and set entries dropped). Both are derived on demand from ``edges`` instead
    (one or two edges state a fact).

    Plain body links (``link``) are left out: they are most of a vault's edges (36k of 38k in
    the generated 10k-note vault), no rule or typed walk reads them, and the graph already
    holds them, so a walk along ``link`` reads the graph (``sidecar.core.traverse``). Kept, they
    cost ~8 MB at 10k notes."""

    def __init__(self, edges: Iterable[Edge], taxonomy: Taxonomy) -> None:
        self.taxonomy = taxonomy
        self.edges: dict[Fact, list[Edge]] = {}
        self._by_source: dict[str, list[Edge]] = {}
        self._steps: dict[tuple[str, bool], dict[str, list[tuple[str, Fact]]]] = {}
        for edge in edges:
            self._add(edge)

    def _add(self, edge: Edge) -> None:
        if (
            edge.relation == LINK
            or edge.state != "valid"
            or edge.target is None
            or edge.target == edge.source
        ):
            return
        fact = self.taxonomy.canonical(edge.source, edge.relation, edge.target)
        stated = self.edges.setdefault(fact, [])
        stated.insert(0 if edge.relation == fact[1] else len(stated), edge)
        self._by_source.setdefault(edge.source, []).append(edge)

    def is_stated(self, source: str, relation: str, target: str) -> bool:
        """Some note states exactly this, as written (not merely its inverse)."""
        fact = self.taxonomy.canonical(source, relation, target)
        return any(
            (e.source, e.relation, e.target) == (source, relation, target)
            for e in self.edges.get(fact, ())
        )

    def replace(self, sources: set[str], edges: Iterable[Edge]) -> None:
        """Forget every edge written in ``sources``, then take ``edges`` (theirs, as they are
        now): what changed in the vault, without rebuilding from every edge."""
        for source in sources:
            for edge in self._by_source.pop(source, ()):
                assert edge.target is not None  # only valid edges are added
                fact = self.taxonomy.canonical(edge.source, edge.relation, edge.target)
                stated = self.edges[fact]
                stated.remove(edge)
                if not stated:
                    del self.edges[fact]
        for edge in edges:
            self._add(edge)
        self._steps.clear()

    def steps(self, relation: str, forward: bool) -> dict[str, list[tuple[str, Fact]]]:
        """note -> [(next note, fact)] along a canonical relation, sorted; symmetric relations
        step both ways. Built once per relation and direction (treat it as read-only)."""
        key = (relation, forward)
        if key not in self._steps:
            symmetric = relation in self.taxonomy.symmetric
            steps: dict[str, list[tuple[str, Fact]]] = {}
            for fact in self.edges:
                source, rel, target = fact
                if rel != relation:
                    continue
                if forward or symmetric:
                    steps.setdefault(source, []).append((target, fact))
                if not forward or symmetric:
                    steps.setdefault(target, []).append((source, fact))
            for hops in steps.values():
                hops.sort()
            self._steps[key] = steps
        return self._steps[key]

    def pairs(self, relation: str) -> Iterator[tuple[str, str]]:
        """(source, target) of every fact with this canonical relation."""
        for source, rel, target in self.edges:
            if rel == relation:
                yield source, target

    def adjacency(self, relation: str) -> dict[str, list[str]]:
        adj: dict[str, list[str]] = {}
        for source, target in sorted(self.pairs(relation)):
            adj.setdefault(source, []).append(target)
        return adj

    def superseders(self) -> dict[str, list[str]]:
        """superseded note -> the notes that supersede it."""
        out: dict[str, list[str]] = {}
        for newer, older in sorted(self.pairs(SUPERSEDES)):
            out.setdefault(older, []).append(newer)
        return out


def status_of(frontmatter: Mapping[str, Any]) -> str:
    """The ``status`` property as a bare lowercase word (``"[[Archived]]"`` -> ``archived``)."""
    value = frontmatter.get("status")
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, str):
        return ""
    return value.strip().strip("[]").strip().lower()


def newest(path: str, superseders: Mapping[str, list[str]]) -> list[str]:
    """The chain from ``path`` to the newest note that nothing supersedes (first superseder in
    path order at each step); stops before repeating a note, so cycles cannot loop."""
    chain = [path]
    seen = {path}
    while chain[-1] in superseders:
        nxt = next((n for n in superseders[chain[-1]] if n not in seen), None)
        if nxt is None:
            break
        chain.append(nxt)
        seen.add(nxt)
    return chain


def strongly_connected(adj: Mapping[str, list[str]]) -> list[list[str]]:
    """Tarjan's SCCs, iteratively (a 1,000-note chain must not hit the recursion limit); only
    components that contain a cycle of two or more notes, each sorted, in path order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(adj):
        if root in index:
            continue
        work = [(root, iter(adj.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    comp = _pop_component(stack, on_stack, node)
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(adj.get(child, ()))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(out)


def _pop_component(stack: list[str], on_stack: set[str], root: str) -> list[str]:
    comp: list[str] = []
    while True:
        node = stack.pop()
        on_stack.discard(node)
        comp.append(node)
        if node == root:
            return comp


def shortest_cycle(start: str, members: set[str], adj: Mapping[str, list[str]]) -> list[str]:
    """The shortest cycle through ``start`` inside one component, as ``[start, ..., start]``:
    the readable witness to print for a cycle, however large the component."""
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for child in adj.get(node, ()):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if child in members and child not in parents:
                    parents[child] = node
                    nxt_frontier.append(child)
        frontier = nxt_frontier
    return [start]
