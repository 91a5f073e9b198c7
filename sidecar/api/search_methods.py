"""The search method: hybrid (default), semantic or lexical, with filters and explanations."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from sidecar.api.registry import Method, Params
from sidecar.core.filters import parse_filters
from sidecar.services.context import Services
from sidecar.services.search import Query


class SearchParams(Params):
    query: str = Field(min_length=1, description="What to look for.")
    mode: Literal["hybrid", "semantic", "lexical"] = Field("hybrid", description="Ranking mode.")
    limit: int = Field(10, ge=1, le=200, description="Notes to return (best chunk each).")
    path: str = Field("", description="Only notes under this vault-relative path prefix.")
    tags: list[str] = Field(default_factory=list, description="Only notes with all these tags.")
    filters: list[str] = Field(
        default_factory=list, description="Frontmatter conditions: key=value, key<value, ..."
    )
    half_life: float = Field(0.0, ge=0, description="Time decay half-life in days; 0 is off.")
    min_score: float = Field(0.0, ge=0, le=1, description="Drop results scoring below this.")
    explain: bool = Field(False, description="Include each score's parts.")


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
            explain=p.explain,
        )
    )


METHODS = [
    Method("search", SearchParams, search, "Find notes by words or meaning.", needs_vectors=True),
]
