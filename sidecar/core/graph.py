"""The link graph in memory and the pure queries over it.

Built from resolved edges; updated one source note at a time so a single-note edit costs
microseconds, not a rebuild. Self-links are kept apart (reported, never traversed).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass

from sidecar.core.model import Edge
from sidecar.core.resolve import missing_attachment


@dataclass(frozen=True, slots=True)
class Step:
    """A node reached by a walk: its distance and the edge that led there."""

    path: str
    depth: int
    via: Edge | None
    direction: str  # "out" (followed source -> target), "in" (target -> source), "" for root


class Graph:
    def __init__(self, nodes: Iterable[str] = (), edges: Iterable[Edge] = ()) -> None:
        self.nodes: set[str] = set(nodes)
        self.out: dict[str, list[Edge]] = {}
        self.inc: dict[str, list[Edge]] = {}
        self.states: Counter[str] = Counter()  # edges by state, kept as edges come and go
        # Edges of some state that are also shared names or missing files: kept apart from
        # ``states`` so that its sum stays the number of edges.
        self.marks: Counter[str] = Counter()
        for edge in edges:
            self._add(edge)

    def _add(self, edge: Edge) -> None:
        self.states[edge.state] += 1
        self.marks["ambiguous"] += bool(edge.candidates)  # resolved as Obsidian does, but shared
        self.marks["attachment_missing"] += missing_attachment(edge)
        self.out.setdefault(edge.source, []).append(edge)
        if edge.state == "valid" and edge.target is not None:
            self.inc.setdefault(edge.target, []).append(edge)

    def replace_source(self, source: str, edges: Iterable[Edge]) -> None:
        for old in self.out.pop(source, []):
            self.states[old.state] -= 1
            self.marks["ambiguous"] -= bool(old.candidates)
            self.marks["attachment_missing"] -= missing_attachment(old)
            if old.state == "valid" and old.target is not None:
                incoming = self.inc.get(old.target, [])
                if old in incoming:
                    incoming.remove(old)
                if not incoming:
                    self.inc.pop(old.target, None)
        for edge in edges:
            self._add(edge)

    def remove_node(self, path: str) -> None:
        self.replace_source(path, ())
        self.nodes.discard(path)

    # -- queries ------------------------------------------------------------------------------

    def outgoing(self, path: str) -> list[Edge]:
        return [e for e in self.out.get(path, []) if e.state != "self"]

    def incoming(self, path: str) -> list[Edge]:
        return sorted(self.inc.get(path, []), key=lambda e: (e.source, e.line))

    def edges(self) -> Iterable[Edge]:
        for edges in self.out.values():
            yield from edges

    def orphans(self) -> list[str]:
        """Notes with no resolved link in or out (broken links do not connect anything)."""
        linked = {e.source for e in self.edges() if e.state == "valid"}
        linked |= {t for t, edges in self.inc.items() if edges}
        return sorted(self.nodes - linked)

    def dangling(self) -> list[Edge]:
        bad = [e for e in self.edges() if e.state == "broken"]
        return sorted(bad, key=lambda e: (e.source, e.line, e.raw))

    def hubs(self, limit: int = 20) -> list[tuple[str, int, int]]:
        """(path, incoming, outgoing) for the most connected notes."""
        rows = [
            (p, len(self.inc.get(p, [])), sum(1 for e in self.out.get(p, []) if e.state == "valid"))
            for p in self.nodes
        ]
        rows.sort(key=lambda r: (-(r[1] + r[2]), -r[1], r[0]))
        return rows[:limit]

    def _steps(self, path: str, relation: str | None) -> Iterable[tuple[str, Edge, str]]:
        for e in self.out.get(path, []):
            if e.state == "valid" and e.target and (relation is None or e.relation == relation):
                yield e.target, e, "out"
        for e in self.inc.get(path, []):
            if relation is None or e.relation == relation:
                yield e.source, e, "in"

    def neighbors(
        self, root: str, depth: int = 1, relation: str | None = None, limit: int | None = None
    ) -> list[Step]:
        """Breadth-first over links in both directions, each note once at its least depth.

        The root comes first. ``limit`` stops the walk once that many notes besides the root are
        found (nearest first): two hops around a hub of a 100k-note vault reach tens of thousands
        of notes, which no caller reads and which took 250 ms to list (bench/scale.py)."""
        seen = {root}
        order = [Step(root, 0, None, "")]
        frontier = deque(order)
        while frontier:
            step = frontier.popleft()
            if step.depth >= depth:
                continue
            for nxt, edge, direction in self._steps(step.path, relation):
                if nxt not in seen:
                    seen.add(nxt)
                    new = Step(nxt, step.depth + 1, edge, direction)
                    order.append(new)
                    if limit is not None and len(order) > limit:
                        return order
                    frontier.append(new)
        return order

    def shortest_path(self, start: str, goal: str, max_depth: int = 12) -> list[Step] | None:
        """Fewest hops between two notes, following links either way; None when unconnected."""
        parents: dict[str, Step] = {start: Step(start, 0, None, "")}
        frontier = deque([start])
        while frontier:
            cur = frontier.popleft()
            if cur == goal:
                chain = [parents[cur]]
                while chain[-1].via is not None:
                    prev = chain[-1]
                    assert prev.via is not None
                    back = prev.via.source if prev.direction == "out" else prev.via.target
                    assert back is not None
                    chain.append(parents[back])
                return chain[::-1]
            if parents[cur].depth >= max_depth:
                continue
            for nxt, edge, direction in self._steps(cur, None):
                if nxt not in parents:
                    parents[nxt] = Step(nxt, parents[cur].depth + 1, edge, direction)
                    frontier.append(nxt)
        return None
