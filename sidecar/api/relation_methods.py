"""Typed relations and the graph's richer views: traverse, current truth, unlinked mentions,
semantic edges, and the HTML export.

The taxonomy (``[relations]``) and the stale statuses (``search.stale_statuses``) come from the
vault's settings when the composition root put them on ``services``; otherwise the defaults,
so these methods work in tests and before a config file exists.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from pydantic import Field

from sidecar.api.lint_methods import setup as lint_setup
from sidecar.api.registry import NOTE_FIELD_HELP, Agent, Method, NoteParams, Params, VaultPath
from sidecar.core.graph_html import graph_data
from sidecar.core.links import normalise_relation
from sidecar.core.paging import page
from sidecar.core.relations import Taxonomy
from sidecar.errors import UsageError
from sidecar.services.graph_page import graph_page
from sidecar.services.graph_rank import GraphOptions
from sidecar.services.lint import run_lint
from sidecar.services.relations import current_for, mentions_of, traverse_from

if TYPE_CHECKING:
    from sidecar.services.context import Services

Note = Field(description=NOTE_FIELD_HELP)


def _values(services: Services) -> Any:
    return getattr(getattr(services, "settings", None), "values", {})


def taxonomy_of(services: Services) -> Taxonomy:
    values = _values(services)
    try:
        return Taxonomy.from_config(
            dict(values.get("relations.pairs", {})),
            list(values.get("relations.symmetric", [])),
            list(values.get("relations.known", [])),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def graph_options(services: Services) -> GraphOptions:
    """What search needs from the settings: the taxonomy and which statuses mean "stale"."""
    statuses = _values(services).get("search.stale_statuses")
    base = GraphOptions(taxonomy=taxonomy_of(services))
    if statuses is None:
        return base
    stale = frozenset(str(s).strip().lower() for s in statuses)
    return GraphOptions(taxonomy=base.taxonomy, stale_statuses=stale)


def _note(services: Services, arg: str) -> str:
    with services.state.lock:
        return services.graph.note(arg)


class TraverseParams(Params):
    note: VaultPath = Note
    relation: str = Field(min_length=1, description="Relation to follow, either spelling.")
    depth: int = Field(1, ge=1, le=5, description="Hops to follow.")
    inverse: bool = Field(False, description="Walk the relation backwards.")
    limit: int | None = Field(None, ge=1, le=10000, description="Most per page (none: all).")
    cursor: str | None = Field(None, description="From next_cursor.")


class EdgesParams(Params):
    note: VaultPath | None = Field(None, description="Only this note's edges; none: the clusters.")


class HtmlParams(Params):
    title: str = Field("Vault graph", description="Page title.")


def traverse(services: Services, p: TraverseParams) -> dict[str, Any]:
    taxonomy = taxonomy_of(services)
    check_relation(services, taxonomy, p.relation)
    root = _note(services, p.note)
    out = traverse_from(services.state, taxonomy, root, p.relation, p.inverse, p.depth)
    if p.limit is None and p.cursor is None:
        return out
    return {**out, **page(out["nodes"], p.limit or len(out["nodes"]), p.cursor).fields("nodes")}


def check_relation(services: Services, taxonomy: Taxonomy, relation: str) -> None:
    """A relation neither in the taxonomy nor on any edge of the vault is a typo, not a query
    with no answer: say so, with the close names, instead of "0 notes"."""
    name = normalise_relation(relation)
    if taxonomy.is_known(name):
        return
    with services.state.lock:
        used = {e.relation for e in services.state.graph.edges()}
    if name in used:
        return
    names = sorted(used | set(taxonomy.names()))
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    in_vault = ", ".join(sorted(used)) or "none"
    raise UsageError(f"unknown relation '{relation}'{hint} (relations in this vault: {in_vault})",
                     {"relation": relation, "close": close, "used": sorted(used)})  # fmt: skip


def current(services: Services, p: NoteParams) -> dict[str, Any]:
    return current_for(services.state, taxonomy_of(services), _note(services, p.note))


def mentions(services: Services, p: NoteParams) -> dict[str, Any]:
    return mentions_of(services.state, services.vault, _note(services, p.note))


def edges(services: Services, p: EdgesParams) -> dict[str, Any]:
    if p.note is None:
        return services.search.edges.clusters()
    return services.search.edges.for_note(_note(services, p.note))


def html(services: Services, p: HtmlParams) -> dict[str, Any]:
    taxonomy, config = lint_setup(services)
    findings = run_lint(services.state, taxonomy, config).to_dict()["findings"]
    with services.state.lock:
        data = graph_data(services.state.notes, list(services.state.graph.edges()), taxonomy,
                          findings)  # fmt: skip
    return {"html": graph_page(data, p.title), "nodes": len(data["nodes"]),
            "edges": len(data["edges"]), "problems": len(findings)}  # fmt: skip


METHODS = [
    Method("graph.traverse", TraverseParams, traverse,
           "Notes reached along one typed relation, either direction, with depth and edge.",
           agent=Agent("traverse", "Follow a relation",
                       "Notes reached along one relation (depends_on, supersedes, ... or link), "
                       "several hops, either direction.", defaults={"limit": 50})),
    Method("graph.current", NoteParams, current,
           "Follow supersedes to the newest note; reports a cycle instead of looping.",
           agent=Agent("current", "Current version",
                       "Whether a note still holds: follows supersedes to the newest note, "
                       "e.g. the decision in force.")),
    Method("note.mentions", NoteParams, mentions,
           "Notes that name this note (title, file name, aliases) without linking it."),
    Method("note.edges", EdgesParams, edges,
           "Semantic edges of a note: link context, cluster label, strength.", needs_vectors=True),
    Method("graph.html", HtmlParams, html,
           "The graph as a self-contained HTML page (typed edges coloured, lint marked)."),
]  # fmt: skip
