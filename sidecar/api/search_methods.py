"""The search method: hybrid (default), semantic or lexical, with filters and explanations."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from sidecar.api.registry import Method, Params, VaultPath
from sidecar.api.relation_methods import graph_options
from sidecar.core.filters import parse_filters
from sidecar.services.context import Services
from sidecar.services.search import Query


class SearchParams(Params):
    query: str = Field(min_length=1, description="What to look for.")
    mode: Literal["hybrid", "semantic", "lexical", "edge"] = Field(
        "hybrid", description="Ranking mode; edge searches the paragraphs around links."
    )
    limit: int = Field(10, ge=1, le=200, description="Notes to return (best chunk each).")
    path: VaultPath = Field("", description="Only notes under this vault-relative path prefix.")
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


def search(services: Services, p: SearchParams) -> dict[str, Any]:
    return services.search.search(
        Query(
            text=p.query,
            mode=p.mode,
            limit=p.limit,
            path=p.path,
            tags=tuple(p.tags),
            filters=parse_filters(p.filters),
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


METHODS = [
    Method("search", SearchParams, search, "Find notes by words or meaning.", needs_vectors=True),
]
