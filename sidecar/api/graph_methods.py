"""Link-graph methods: links, backlinks, orphans, neighbours, paths, hubs, dangling, export."""

from __future__ import annotations

from pydantic import Field

from sidecar.api.registry import (
    NOTE_FIELD_HELP,
    Method,
    NoParams,
    NoteParams,
    Params,
    VaultPath,
)

Note = Field(description=NOTE_FIELD_HELP)


class LinksParams(Params):
    note: VaultPath = Note
    depth: int = Field(1, ge=1, le=3, description="Also list notes up to this many hops away.")
    limit: int = Field(
        500, ge=1, le=100_000,
        description="At most this many notes within `depth`, nearest first (`truncated`, or "
        "`neighbors_truncated` in `note.links`, says more were in reach).",
    )  # fmt: skip


class PathParams(Params):
    source: VaultPath = Field(description="Start note.")
    target: VaultPath = Field(description="End note.")


class HubsParams(Params):
    limit: int = Field(20, ge=1, le=1000)


METHODS = [
    Method("note.links", LinksParams, lambda s, p: s.graph.links(p.note, p.depth, p.limit),
           "Outgoing links (valid or broken) and incoming links of a note."),
    Method("note.backlinks", NoteParams, lambda s, p: s.graph.backlinks(p.note),
           "Every link here, one row per occurrence (line, context, the link's span in it); "
           "`sources` groups them per linking note with a count."),
    Method("graph.orphans", NoParams, lambda s, p: s.graph.orphans(),
           "Notes with no resolved link in or out."),
    Method("graph.neighbors", LinksParams, lambda s, p: s.graph.neighbors(p.note, p.depth, p.limit),
           "Notes within N hops, following links either way."),
    Method("graph.path", PathParams, lambda s, p: s.graph.path(p.source, p.target),
           "Shortest chain of links between two notes."),
    Method("graph.hubs", HubsParams, lambda s, p: s.graph.hubs(p.limit),
           "The most connected notes."),
    Method("graph.dangling", NoParams, lambda s, p: s.graph.dangling(),
           "Links whose target is missing or ambiguous, with source and line."),
    Method("graph.export", NoParams, lambda s, p: s.graph.export(),
           "The whole graph: nodes and edges."),
]  # fmt: skip
