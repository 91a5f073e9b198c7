"""Search respects supersedes and status: stale notes step back, labelled; current notes lead."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.api import build_registry
from sidecar.embed import TinyEmbedder
from sidecar.services.context import Services
from sidecar.services.graph_rank import Candidate, GraphOptions, Stale, keep_behind
from sidecar.services.search import Query
from tests.conftest import VaultFactory

# A chain of three decisions about the same topic. The oldest matches the query best, word for
# word; the newest talks about it least. Written in both styles.
CHAIN = {
    "adr/ADR-1 Sessions in Postgres.md": (
        "---\nstatus: superseded\nsuperseded_by: '[[ADR-2 Sessions in Memcached]]'\n---\n"
        "# ADR-1 Sessions in Postgres\n\nWe store user sessions in Postgres, one session row "
        "per login. Session storage in Postgres is simple.\n"
    ),
    "adr/ADR-2 Sessions in Memcached.md": (
        "# ADR-2 Sessions in Memcached\n\nMove user sessions from Postgres to Memcached; "
        "session storage there is faster.\n"
    ),
    "adr/ADR-3 Session storage.md": (
        "---\nstatus: accepted\nrelations:\n  supersedes: ['[[ADR-2 Sessions in Memcached]]']\n"
        "---\n# ADR-3 Session storage\n\nKeys live in Redis with a 14 day expiry.\n"
    ),
    "notes/Redis.md": "# Redis\n\nAn in-memory key value store.\n",
    "notes/Postgres tuning.md": "# Postgres tuning\n\nVacuum settings for busy tables.\n",
    "notes/Archive plan.md": (
        "---\nstatus: Archived\n---\n# Archive plan\n\nSessions in Postgres for the archive.\n"
    ),
}
QUERY = "user sessions storage in Postgres"


@pytest.fixture
def services(make_vault: VaultFactory, tmp_path: Path) -> Iterator[Services]:
    s = Services.open(make_vault(dict(CHAIN)), tmp_path / "idx", embedder=TinyEmbedder())
    s.reindex()
    s.embed_stage.run()
    yield s
    s.close()


def ranked(result: dict[str, Any]) -> list[str]:
    return [r["path"].rsplit("/", 1)[-1].removesuffix(".md") for r in result["results"]]


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "semantic"])
def test_chain_of_three_puts_the_current_note_first(services: Services, mode: str) -> None:
    flat = services.search.search(Query(QUERY, mode=mode, include_superseded=True))  # type: ignore[arg-type]
    assert ranked(flat)[0] == "ADR-1 Sessions in Postgres"  # the old note matches best
    out = services.search.search(Query(QUERY, mode=mode))  # type: ignore[arg-type]
    order = ranked(out)
    assert order[0] == "ADR-3 Session storage"
    assert order.index("ADR-2 Sessions in Memcached") < order.index("ADR-1 Sessions in Postgres")
    by_name = {r["path"]: r for r in out["results"]}
    adr1 = by_name["adr/ADR-1 Sessions in Postgres.md"]
    assert adr1["status"] == "superseded"
    assert adr1["superseded_by"] == ["adr/ADR-2 Sessions in Memcached.md"]
    assert adr1["current"] == "adr/ADR-3 Session storage.md"
    assert "status" not in by_name["adr/ADR-3 Session storage.md"]


def test_include_superseded_keeps_flat_order_but_still_labels(services: Services) -> None:
    out = services.search.search(Query(QUERY, include_superseded=True, explain=True))
    first = out["results"][0]
    assert first["superseded_by"] == ["adr/ADR-2 Sessions in Memcached.md"]
    assert "fade" not in first["explain"]


def test_a_stale_status_alone_fades_and_is_configurable(services: Services) -> None:
    q = "archive sessions Postgres"
    plan = "notes/Archive plan.md"
    out = services.search.search(Query(q, mode="lexical", explain=True))
    hit = next(r for r in out["results"] if r["path"] == plan)
    assert hit["status"] == "archived" and hit["explain"]["fade"] == 0.85
    assert "superseded_by" not in hit
    custom = GraphOptions(stale_statuses=frozenset({"draft"}))
    out = services.search.search(Query(q, mode="lexical", graph=custom))
    assert "status" not in next(r for r in out["results"] if r["path"] == plan)


def test_current_note_is_pulled_in_when_the_query_misses_it(services: Services) -> None:
    q = "Memcached faster"  # only ADR-2 has these words; ADR-3 (current) has neither
    out = services.search.search(Query(q, mode="lexical", explain=True))
    order = ranked(out)
    assert order[:2] == ["ADR-3 Session storage", "ADR-2 Sessions in Memcached"]
    assert out["results"][0]["explain"]["replaces_a_match"] is True
    only_notes = services.search.search(Query(q, mode="lexical", path="notes/"))
    assert all(r["path"].startswith("notes/") for r in only_notes["results"])


def test_search_method_takes_the_graph_params(services: Services) -> None:
    registry = build_registry()
    out = registry.call(services, "search", {"query": QUERY, "boost_links": True, "hops": 2,
                                             "expand": 1, "include_superseded": False})  # fmt: skip
    assert ranked(out)[0] == "ADR-3 Session storage"
    assert set(out) >= {"query", "mode", "results", "graph_context", "edge_results"}


def test_keep_behind_settles_chains_whatever_the_scores() -> None:
    cands = [Candidate("a#0", "a", 0.9), Candidate("b#0", "b", 0.8), Candidate("c#0", "c", 0.1)]
    stale = {"a": Stale("", ("b",), "c"), "b": Stale("", ("c",), "c")}
    keep_behind(cands, stale)
    assert [c.path for c in cands] == ["c", "b", "a"]
