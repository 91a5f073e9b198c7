"""The graph lint checks: one pure function per rule, each yielding ``Hit``s.

A check knows what is wrong and where; it does not know its rule id, severity or the user's
config. ``lint.py`` binds each check to its id and default severity in ``RULES`` and grades the
hits, so re-grading or disabling a rule never touches the checks.
"""

from __future__ import annotations

import difflib
import posixpath
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import quote

from sidecar.core.anchors import anchor_key, heading_key
from sidecar.core.facts import (
    STALE_STATUSES,
    Facts,
    newest,
    shortest_cycle,
    status_of,
    strongly_connected,
)
from sidecar.core.fix import basename_counts, link_name
from sidecar.core.graph import Graph
from sidecar.core.model import Edge, NoteRecord
from sidecar.core.relations import DEPENDS_ON, LINK, SUPERSEDES, Taxonomy
from sidecar.core.resolve import Catalog, NoteKey, missing_attachment


@dataclass(frozen=True, slots=True)
class Hit:
    note: str
    line: int
    detail: str
    target: str | None = None
    relation: str | None = None
    fix: str = ""  # a hint specific to this hit; the rule's generic hint otherwise
    related: tuple[str, ...] = ()


@dataclass
class Context:
    notes: Mapping[str, NoteRecord]
    graph: Graph
    taxonomy: Taxonomy
    focus: str | None = None  # check only this note (an editor's unsaved buffer)
    known_catalog: Catalog | None = None  # the index's catalog, when the caller has one
    _anchors: dict[str, frozenset[str]] = field(default_factory=dict)

    def paths(self) -> list[str]:
        """The notes whose own text the per-note rules read."""
        return [self.focus] if self.focus is not None else sorted(self.notes)

    @cached_property
    def reports(self) -> frozenset[str]:
        """Lint report notes (``sidecar_lint: {report: true}``): their links are not the
        vault's, so they neither create edges here nor get linted."""
        return frozenset(p for p, n in self.notes.items() if _is_report(n.frontmatter))

    def edges(self) -> Iterator[Edge]:
        for path in sorted(self.graph.out):
            if path not in self.reports:
                yield from self.graph.out[path]

    @cached_property
    def facts(self) -> Facts:
        return Facts(self.edges(), self.taxonomy)

    @cached_property
    def catalog(self) -> Catalog:
        if self.known_catalog is not None:
            return self.known_catalog
        return Catalog.build(NoteKey(n.path, n.aliases, n.note_id) for n in self.notes.values())

    @cached_property
    def superseders(self) -> dict[str, list[str]]:
        return self.facts.superseders()

    @cached_property
    def hash_names(self) -> dict[str, str]:
        """Notes whose name holds a ``#``, which a wikilink cannot name, by ``_squashed`` name."""
        named = self.catalog.basenames.items()  # lowercase NFC names, as links are matched
        return {_squashed(name): paths[0] for name, paths in named if "#" in name}

    @cached_property
    def basenames(self) -> Counter[str]:
        return basename_counts(self.notes)

    def link(self, path: str) -> str:
        """How a fix hint writes a link to ``path``: the bare name when it is unique."""
        return f"[[{link_name(path, self.basenames)}]]"

    def status(self, path: str) -> str:
        note = self.notes.get(path)
        return status_of(note.frontmatter) if note else ""

    def is_stale(self, path: str) -> bool:
        return path in self.superseders or self.status(path) in STALE_STATUSES

    def anchors(self, path: str) -> frozenset[str]:
        """Heading keys and block ids of a note and of the notes it embeds (up to 3 levels):
        Dendron's published pages and Obsidian's reading view show embedded headings inline."""
        if path not in self._anchors:
            keys: set[str] = set()
            for node in self._embedded(path, 3):
                keys |= self._own_anchors(node)
            self._anchors[path] = frozenset(keys)
        return self._anchors[path]

    def _embedded(self, path: str, depth: int) -> list[str]:
        order, frontier = [path], [path]
        for _ in range(depth):
            frontier = [
                e.target for node in frontier for e in self.graph.out.get(node, [])
                if e.embed and e.state == "valid" and e.target and e.target not in order
            ]  # fmt: skip
            order += dict.fromkeys(frontier)
        return order

    def _own_anchors(self, path: str) -> set[str]:
        note = self.notes.get(path)
        blocks = {"^" + b.lower() for b in note.block_ids} if note else set()
        return blocks | ({heading_key(h.text) for h in note.headings} if note else set())


def _is_report(frontmatter: Mapping[str, object]) -> bool:
    spec = frontmatter.get("sidecar_lint")
    return isinstance(spec, dict) and spec.get("report") is True


def unknown_relation(ctx: Context) -> Iterator[Hit]:
    seen: set[tuple[str, str]] = set()
    names = ctx.taxonomy.names()
    for e in ctx.edges():
        key = (e.source, e.relation)
        if key in seen or e.state == "attachment" or missing_attachment(e):
            continue  # a property naming a file (``cover: [[poster.jpg]]``) is no relation
        if ctx.taxonomy.is_known(e.relation):
            continue
        seen.add(key)
        close = difflib.get_close_matches(e.relation, names, n=1, cutoff=0.75)
        fix = f"did you mean '{close[0]}'? " if close else ""
        fix += "rename the key, or declare it in relations.pairs or relations.known"
        yield Hit(e.source, e.line, f"relation '{e.relation}' is not in the taxonomy", e.raw,
                  e.relation, fix)  # fmt: skip


def dangling_target(ctx: Context) -> Iterator[Hit]:
    for e in ctx.edges():
        if e.state != "broken":
            continue
        if missing_attachment(e):
            yield Hit(e.source, e.line, f"{e.relation} target '{e.raw}' is a missing attachment "
                      "(no such file)", e.raw, e.relation,
                      "add the file to the vault, or correct the link")  # fmt: skip
        else:
            named = ctx.hash_names.get(_squashed(e.raw)) if e.wikilink and e.anchor else None
            fix = ""
            if named is not None:
                name = posixpath.splitext(posixpath.basename(named))[0]
                fix = (f"Obsidian reads '#' in a wikilink as a heading; link the note "
                       f"'{named}' as [{name}]({quote(named)}).")  # fmt: skip
            yield Hit(e.source, e.line, f"{e.relation} target '{e.raw}' matches no note",
                      e.raw, e.relation, fix)  # fmt: skip


def _squashed(name: str) -> str:
    """A name as a wikilink's ``#`` split leaves it: spaces around the ``#`` dropped."""
    return "".join(unicodedata.normalize("NFC", name).lower().split())


def ambiguous_link(ctx: Context) -> Iterator[Hit]:
    for e in ctx.edges():
        if len(e.candidates) > 1:
            names = ", ".join(e.candidates)
            opens = f"; Obsidian opens {e.target}" if e.target else ""
            if e.state == "attachment":  # files share the name; ctx.link knows only notes
                kind, example = "files", f"[[{e.candidates[0]}]]"
            else:
                kind, example = "notes", ctx.link(e.candidates[0])
            yield Hit(e.source, e.line, f"'{e.raw}' matches {len(e.candidates)} {kind}: {names}{opens}",
                      e.raw, e.relation, f"write the path, e.g. {example}",
                      e.candidates)  # fmt: skip


def self_edge(ctx: Context) -> Iterator[Hit]:
    """A body link to the note's own heading is navigation, not a self-edge."""
    for e in ctx.edges():
        if e.state == "self" and (e.relation != LINK or not e.anchor):
            yield Hit(e.source, e.line, f"{e.relation} points at the note itself ('{e.raw}')",
                      e.source, e.relation)  # fmt: skip


def broken_anchor(ctx: Context) -> Iterator[Hit]:
    """Over every link as written (the graph keeps one edge per target, so one anchor)."""
    for path in ctx.paths():
        if path in ctx.reports:
            continue
        for link in ctx.notes[path].links:
            if not link.anchor and "#" not in link.label:
                continue
            res = ctx.catalog.resolve(link, path)
            name, anchor = link.target, link.anchor
            if res.swapped:  # Dendron's label-first [[Label|note#anchor]]
                name, _, anchor = link.label.partition("#")
                name = re.sub(r"^dendron://[^/]*/", "", name.strip())
            wanted = anchor_key(anchor) if anchor else None
            if not wanted or not res.target or res.state not in ("valid", "self"):
                continue
            if wanted not in ctx.anchors(res.target):
                kind = "block" if wanted.startswith("^") else "heading"
                yield Hit(path, link.line, f"'{name}#{anchor}': {res.target} has no {kind} "
                          f"'{anchor}'", res.target, link.relation)  # fmt: skip


def orphan(ctx: Context) -> Iterator[Hit]:
    """``Graph.orphans`` but blind to links from lint reports, which link every offender."""
    linked = {
        p for e in ctx.edges() if e.state == "valid" and e.target for p in (e.source, e.target)
    }
    for path in sorted(set(ctx.notes) - linked - ctx.reports):
        yield Hit(path, 0, "no resolved link in or out")


def invalid_frontmatter(ctx: Context) -> Iterator[Hit]:
    for path in ctx.paths():
        error = ctx.notes[path].frontmatter_error
        if error:
            marks = re.findall(r"line (\d+)", error)
            line = int(marks[-1]) + 1 if marks else 1  # YAML counts from the line after ---
            why = " ".join(_YAML_MARK.sub("", error).split())  # the file line says where
            yield Hit(path, line, f"frontmatter ignored: {why}")


_YAML_MARK = re.compile(r'(?: in "<unicode string>")?, line \d+, column \d+:?')


def missing_inverse(ctx: Context) -> Iterator[Hit]:
    """Findings sit on the note that lacks the inverse: that is the file a fix edits."""
    tax = ctx.taxonomy
    for e in ctx.edges():
        inverse = tax.inverse(e.relation)
        if inverse is None or e.state != "valid" or not e.target or e.target == e.source:
            continue
        if not ctx.facts.is_stated(e.target, inverse, e.source):
            at = f" (line {e.line})" if e.line else ""
            yield Hit(e.target, 0, f"{e.source} states '{e.relation}' to this note{at}; this "
                      f"note has no '{inverse}' back", e.source, inverse,
                      f"add {inverse}: {ctx.link(e.source)} to {e.target}")  # fmt: skip


def contradictory_pair(ctx: Context) -> Iterator[Hit]:
    facts = ctx.facts
    for a, b in sorted(facts.pairs(SUPERSEDES)):
        if a < b and (b, SUPERSEDES, a) in facts.edges:
            e = facts.edges[(a, SUPERSEDES, b)][0]
            back = facts.edges[(b, SUPERSEDES, a)][0]
            yield Hit(e.source, e.line, f"{a} supersedes {b} and {b} supersedes {a} "
                      f"(stated in {e.source}:{e.line} and {back.source}:{back.line})",
                      e.target, e.relation, related=(a, b))  # fmt: skip


def supersedes_cycle(ctx: Context) -> Iterator[Hit]:
    """Components of three or more notes; two-note loops are ``contradictory_pair``."""
    adj = ctx.facts.adjacency(SUPERSEDES)
    for comp in strongly_connected(adj):
        if len(comp) < 3:
            continue
        cycle = shortest_cycle(comp[0], set(comp), adj)
        e = ctx.facts.edges[(cycle[0], SUPERSEDES, cycle[1])][0]
        shown = " -> ".join(cycle)
        yield Hit(e.source, e.line, f"supersedes cycle through {len(comp)} notes: {shown}",
                  e.target, e.relation, related=tuple(comp))  # fmt: skip


def stale_dependency(ctx: Context) -> Iterator[Hit]:
    for a, b in sorted(ctx.facts.pairs(DEPENDS_ON)):
        if ctx.is_stale(a) or not ctx.is_stale(b):
            continue
        e = ctx.facts.edges[(a, DEPENDS_ON, b)][0]
        chain = newest(b, ctx.superseders)
        why = f"superseded by {chain[1]}" if len(chain) > 1 else f"status '{ctx.status(b)}'"
        fix = f"depend on {ctx.link(chain[-1])} instead" if len(chain) > 1 else ""
        yield Hit(e.source, e.line, f"{a} depends on {b}, which is {why}", b, e.relation, fix)
