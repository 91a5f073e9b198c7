"""Graph queries through the registry: bounded neighbourhoods around a hub."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sidecar.api import build_registry
from sidecar.services.context import Services
from tests.conftest import VaultFactory

# Hub links to 30 spokes; each spoke links to two leaves of its own: 30 notes at depth 1 and
# 60 at depth 2.
HUB = {
    "Hub.md": "# Hub\n\n" + "\n".join(f"- [[S{i}]]" for i in range(30)) + "\n",
    **{f"S{i}.md": f"# S{i}\n\n[[L{i}a]] and [[L{i}b]]\n" for i in range(30)},
    **{f"L{i}{x}.md": f"# L{i}{x}\n" for i in range(30) for x in "ab"},
}


def test_neighbors_stop_at_the_limit_nearest_first(
    make_vault: VaultFactory, open_services: Callable[[Path], Services]
) -> None:
    s = open_services(make_vault(HUB))
    s.reindex()
    call = build_registry().call

    whole = call(s, "graph.neighbors", {"note": "Hub", "depth": 2})
    assert len(whole["nodes"]) == 90 and whole["truncated"] is False
    assert [n["depth"] for n in whole["nodes"]] == [1] * 30 + [2] * 60

    some = call(s, "graph.neighbors", {"note": "Hub", "depth": 2, "limit": 40})
    assert some["truncated"] is True
    assert [n["depth"] for n in some["nodes"]] == [1] * 30 + [2] * 10
    assert some["nodes"] == whole["nodes"][:40]

    exact = call(s, "graph.neighbors", {"note": "Hub", "depth": 2, "limit": 90})
    assert exact["truncated"] is False and len(exact["nodes"]) == 90

    links = call(s, "note.links", {"note": "Hub", "depth": 2, "limit": 5})
    assert len(links["outgoing"]) == 30  # the note's own links are never cut
    assert len(links["neighbors"]) == 5 and links["neighbors_truncated"] is True
