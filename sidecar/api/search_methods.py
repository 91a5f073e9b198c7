"""The search method: hybrid (default), semantic or lexical, with filters and explanations."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from sidecar.api.registry import Agent, Method, Params, VaultPath
from sidecar.api.relation_methods import graph_options
from sidecar.core.filters import Filter, parse_filters, unknown_scope
from sidecar.core.paging import cursor_at, offset
from sidecar.errors import UsageError
from sidecar.services.context import Services
from sidecar.services.search import Query


class SearchParams(Params):
    query: str = Field(min_length=1, description="What to look for.")
    mode: Literal["hybrid", "semantic", "lexical", "edge"] = Field(
        "hybrid", description="Ranking (default hybrid); edge: text around links."
    )
    limit: int = Field(10, ge=1, le=200, description="Notes per page (best passage each).")
    path: VaultPath = Field("", description="Only notes under this path prefix.")
    tags: list[str] = Field(default_factory=list, description="Only notes with all these tags.")
    filters: list[str] = Field(
        default_factory=list, description="Frontmatter conditions: key=value, key<value, ..."
    )
    half_life: float = Field(0.0, ge=0, description="Time decay half-life in days; 0 is off.")
    min_score: float = Field(0.0, ge=0, le=1, description="Drop results scoring below this.")
    min_confidence: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Drop results whose confidence (evidence that they answer the query at "
        "all) is below this; null: the mode's default, 0: keep everything.",
    )
    explain: bool = Field(False, description="Include each score's parts.")
    include_superseded: bool = Field(False, description="Do not fade superseded/stale notes.")
    boost_links: bool = Field(False, description="Boost link neighbours of the top results.")
    hops: int = Field(1, ge=1, le=3, description="Link boost depth.")
    expand: int = Field(0, ge=0, le=3, description="Graph context depth; 0 is off.")
    cursor: str | None = Field(None, description="From next_cursor.")
    window: int | None = Field(None, ge=1, le=200, description="Rank this many results once "
                               "and page through them: pages then neither repeat nor skip a "
                               "result (a bigger search can rank its first ones differently).")  # fmt: skip


def search(services: Services, p: SearchParams) -> dict[str, Any]:
    """A page is the next ``limit`` results of one ranking. Results are ranked as a whole, and
    a bigger search can order its first results differently, so pages that must neither
    repeat nor skip a result rank a fixed ``window`` each time (the agents' tool does: 50)."""
    start = offset(p.cursor)
    end = start + p.limit
    ranked = p.window if p.window is not None else min(end, MAX_RESULTS)
    out = _search(services, p, ranked)
    found = out["results"]
    more = end < len(found) if p.window is not None else len(found) == end < MAX_RESULTS
    out["results"] = found[start:end]
    if more:
        out["next_cursor"] = cursor_at(end)
    return out


def _search(services: Services, p: SearchParams, limit: int) -> dict[str, Any]:
    filters = parse_filters(p.filters)
    if p.path or p.tags or filters:
        check_scope(services, p.path, p.tags, filters)
    result = services.search.search(
        Query(
            text=p.query,
            mode=p.mode,
            limit=limit,
            path=p.path,
            tags=tuple(p.tags),
            filters=filters,
            half_life_days=p.half_life,
            min_score=p.min_score,
            min_confidence=p.min_confidence,
            explain=p.explain,
            include_superseded=p.include_superseded,
            boost_links=p.boost_links,
            hops=p.hops,
            expand=p.expand,
            graph=graph_options(services),
        )
    )
    if p.mode != "lexical":
        partial = semantic_coverage(services)
        if partial is not None:
            result["semantic_coverage"] = partial
    return result


def semantic_coverage(services: Services) -> dict[str, int] | None:
    """``{embedded, chunks}`` while some chunks still wait for vectors (a cold index being
    embedded by the daemon): semantic results then cover only part of the vault. None when
    every chunk has its vector."""
    with services.state.lock:
        chunks = services.state.chunk_count()
    embedded = min(len(services.vectors), chunks)
    return None if embedded >= chunks else {"embedded": embedded, "chunks": chunks}


def check_scope(
    services: Services, path: str, tags: list[str], filters: tuple[Filter, ...]
) -> None:
    """A filter naming a property, tag or folder no note has is a typo: an error with the close
    names, never an empty result that reads like "nothing matches"."""
    with services.state.lock:
        notes = services.state.notes
        keys = {k for n in notes.values() for k in n.frontmatter} if filters else set()
        known_tags = {t for n in notes.values() for t in n.tags} if tags else set()
        why = unknown_scope(path, tags, filters, notes, known_tags, keys)
    if why is not None:
        raise UsageError(why)


MAX_RESULTS = 200

AGENT = Agent(
    "search", "Search the vault",
    "Find notes by words or meaning (mode lexical for exact identifiers), a passage of each; "
    "read_note gives the whole note.",
    params=("query", "mode", "limit", "path", "filters", "cursor"),
    defaults={"limit": 8, "window": 50},
)  # fmt: skip

METHODS = [
    Method(
        "search",
        SearchParams,
        search,
        "Find notes by words or meaning.",
        needs_vectors=True,
        agent=AGENT,
    ),
]
