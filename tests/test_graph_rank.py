"""Link boost and graph context expansion (DESIGN §4, mdvdb's multi-hop search) on small vaults."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.core.graph import Graph, Step
from sidecar.core.model import Edge
from sidecar.embed import TinyEmbedder
from sidecar.services.context import Services
from sidecar.services.graph_rank import GraphOptions, carry, reach
from sidecar.services.search import Query
from tests.conftest import VaultFactory

SAME = "A paragraph on beta particles and their decay.\n"
LEAVES = {f"leaf/Leaf {i:02d}.md": f"# Leaf {i:02d}\n\nNothing here matches.\n" for i in range(12)}
VAULT = {
    "Alpha.md": (
        "---\ndepends_on: ['[[Typed]]']\n---\n# Alpha\n\nAlpha beta gamma, alpha beta: see "
        "[[Linked|the linked note]] and [[Mid]].\n\n"
        + " ".join(f"[[Leaf {i:02d}]]" for i in range(12))
        + "\n"
    ),
    "Linked.md": "# Linked\n\n" + SAME,
    "Loose.md": "# Loose\n\n" + SAME,
    "Typed.md": "# Typed\n\n" + SAME,
    "Mid.md": "# Mid\n\nA stepping stone to [[Far]].\n",
    "Far.md": "# Far\n\nA far away note that names beta once among many other unrelated words, "
    "written long on purpose so that its own match stays weak.\n",
    "Twin one.md": "# Twin one\n\nAlpha beta, alpha beta, alpha.\n",  # unlinked seeds 2 and 3
    "Twin two.md": "# Twin two\n\nAlpha beta, alpha beta, alpha.\n",
    **LEAVES,
}


@pytest.fixture
def services(make_vault: VaultFactory, tmp_path: Path) -> Iterator[Services]:
    s = Services.open(make_vault(dict(VAULT)), tmp_path / "idx", embedder=TinyEmbedder())
    s.reindex()
    s.embed_stage.run()
    yield s
    s.close()


def search(s: Services, **kw: Any) -> dict[str, Any]:
    return s.search.search(Query("alpha beta", mode="lexical", explain=True, **kw))


def scores(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["path"]: r for r in out["results"]}


def test_without_boost_linked_and_unlinked_tie(services: Services) -> None:
    flat = scores(search(services))
    assert flat["Linked.md"]["score"] == flat["Loose.md"]["score"]
    assert "link_boost" not in flat["Linked.md"]["explain"]


def test_boost_lifts_neighbours_of_the_top_results(services: Services) -> None:
    res = scores(search(services, boost_links=True))
    alpha = res["Alpha.md"]["score"]
    linked = res["Linked.md"]
    assert linked["score"] > res["Loose.md"]["score"]
    assert linked["explain"]["linked_from"] == "Alpha.md" and linked["explain"]["hops"] == 1
    own = res["Loose.md"]["score"]  # the same text, unlinked: what Linked scored before
    assert linked["score"] == pytest.approx(0.8 * alpha + 0.01 * own, abs=2e-4)
    assert res["Typed.md"]["score"] > linked["score"]  # typed edges carry more
    assert "link_boost" not in res["Alpha.md"]["explain"]  # a seed does not boost itself
    assert "link_boost" not in res["Far.md"]["explain"]  # two hops away, hops=1


def test_more_hops_reach_further_with_less(services: Services) -> None:
    res = scores(search(services, boost_links=True, hops=2))
    far = res["Far.md"]
    assert far["explain"]["hops"] == 2
    before = scores(search(services))["Far.md"]["score"]
    assert res["Linked.md"]["score"] > far["score"] > before  # lifted, less than one hop
    assert far["score"] == pytest.approx(0.64 * res["Alpha.md"]["score"] + 0.01 * before, abs=2e-4)


def test_carry_shrinks_per_hop_and_weighs_typed_edges() -> None:
    opts = GraphOptions()
    link = Edge("a", "b", "b", "link", "b", True, False, 1, "", "valid")
    typed = Edge("a", "b", "b", "depends_on", "b", True, False, 0, "", "valid")
    assert carry(Step("b", 1, link, "out"), opts) == 0.8
    assert carry(Step("b", 3, link, "out"), opts) == pytest.approx(0.512)
    assert carry(Step("b", 1, typed, "in"), opts) == 0.9
    g = Graph(["a", "b", "c"], [link, Edge("c", "b", "b", "link", "b", True, False, 1, "",
                                          "valid")])  # fmt: skip
    near = reach(g, ["a"], 2)
    assert {p: s.depth for p, s in near.items()} == {"b": 1, "c": 2}  # backlinks count too


def test_expansion_adds_linked_notes_with_hop_and_link_text(services: Services) -> None:
    out = services.search.search(Query("gamma alpha gamma", mode="lexical", limit=1, expand=1))
    assert [r["path"] for r in out["results"]] == ["Alpha.md"]
    ctx = out["graph_context"]
    assert len(ctx) == 10  # at most 10 extra items
    assert all(c["hops"] == 1 and c["linked_from"] == "Alpha.md" for c in ctx)
    linked = next(c for c in ctx if c["path"] == "Linked.md")
    assert linked["link_text"] == "the linked note" and linked["relation"] == "link"
    assert linked["chunk_id"] == "Linked.md#0" and linked["snippet"]
    assert {"heading", "start_line", "end_line", "score", "direction"} <= set(linked)
    assert ctx[0]["score"] >= ctx[-1]["score"]  # best-fitting first within a hop


def test_expansion_depth_two_and_filters(services: Services) -> None:
    out = services.search.search(Query("stepping stone", mode="lexical", limit=1, expand=2))
    assert out["results"][0]["path"] == "Mid.md"
    hops = {c["path"]: c["hops"] for c in out["graph_context"]}
    assert hops["Far.md"] == 1 and hops["Alpha.md"] == 1 and hops["Linked.md"] == 2
    far_only = services.search.search(
        Query("stepping stone", mode="lexical", limit=1, expand=2, path="Mid")
    )
    assert far_only["graph_context"] == []  # Far, Alpha... are outside the path filter
    none = services.search.search(Query("stepping stone", mode="lexical", limit=1))
    assert none["graph_context"] == []


def test_hybrid_expansion_uses_the_query_vector(services: Services) -> None:
    out = services.search.search(Query("gamma alpha gamma", limit=3, expand=1))
    assert "Alpha.md" in [r["path"] for r in out["results"]]
    assert len(out["graph_context"]) == 10
    got = [c["score"] for c in out["graph_context"]]
    assert got == sorted(got, reverse=True) and max(got) > 0  # cosine of each note's best chunk
