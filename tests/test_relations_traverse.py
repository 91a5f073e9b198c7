"""Typed traversal and "current truth" over small vaults written here, both relation styles."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.api import build_registry
from sidecar.core.facts import Facts
from sidecar.core.relations import Taxonomy
from sidecar.core.traverse import current_of, local_superseders, superseders_in, traverse
from sidecar.embed import TinyEmbedder
from sidecar.errors import UsageError
from sidecar.services.context import Services
from tests.conftest import VaultFactory

Call = Callable[[str, dict[str, Any]], dict[str, Any]]

# depends_on written three ways: a relations block, a top-level key, and the inverse key on the
# other end (Db says it is required_by Api; nobody writes "Api depends_on Db").
DEPENDS = {
    "App.md": "---\nrelations:\n  depends_on: ['[[Api]]']\n---\n# App\n",
    "Api.md": "---\ntitle: Api\n---\n# Api\n",
    "Db.md": "---\nrequired_by: '[[Api]]'\n---\n# Db\n",
    "Cache.md": "---\ndepends_on: ['[[Db]]']\n---\n# Cache\n",
}

FORWARD = {  # every supersedes fact written on the newer note
    "A1.md": "# A1\n\nSessions in Postgres.\n",
    "A2.md": "---\nrelations: {supersedes: ['[[A1]]']}\n---\n# A2\n\nSessions in Memcached.\n",
    "A3.md": "---\nsupersedes: '[[A2]]'\n---\n# A3\n\nSessions in Redis.\n",
}
BACKWARD = {  # the same facts written on the older note, as superseded_by
    "A1.md": "---\nsuperseded_by: '[[A2]]'\n---\n# A1\n\nSessions in Postgres.\n",
    "A2.md": "---\nrelations:\n  superseded_by: [A3]\n---\n# A2\n\nSessions in Memcached.\n",
    "A3.md": "# A3\n\nSessions in Redis.\n",
}
MIXED = {  # half and half, and one fact stated from both ends
    "A1.md": "---\nsuperseded_by: '[[A2]]'\n---\n# A1\n\nSessions in Postgres.\n",
    "A2.md": "---\nsupersedes: '[[A1]]'\n---\n# A2\n\nSessions in Memcached.\n",
    "A3.md": "---\nrelations: {supersedes: ['[[A2]]']}\n---\n# A3\n\nSessions in Redis.\n",
}

CYCLE = {  # C1 -> C2 -> C3 -> C1, in three different spellings
    "C1.md": "---\nsupersedes: '[[C2]]'\n---\n# C1\n",
    "C2.md": "---\nrelations: {supersedes: ['[[C3]]']}\n---\n# C2\n",
    "C3.md": "---\nsupersedes: '[[C1]]'\n---\n# C3\n",
    "Old.md": "---\nsuperseded_by: '[[C1]]'\n---\n# Old\n",
}


@pytest.fixture
def call(make_vault: VaultFactory, tmp_path: Path) -> Iterator[Callable[[dict[str, str]], Call]]:
    opened: list[Services] = []
    registry = build_registry()

    def open_(files: dict[str, str]) -> Call:
        s = Services.open(make_vault(dict(files)), tmp_path / f"d{len(opened)}",
                          embedder=TinyEmbedder())  # fmt: skip
        s.reindex()
        opened.append(s)
        return lambda method, params: registry.call(s, method, params)

    yield open_
    for s in opened:
        s.close()


def paths(result: dict[str, Any]) -> list[tuple[str, int]]:
    return [(n["path"], n["depth"]) for n in result["nodes"]]


def test_typed_traversal_forward_follows_every_spelling(call: Callable[..., Call]) -> None:
    c = call(DEPENDS)
    out = c("graph.traverse", {"note": "App", "relation": "depends_on", "depth": 3})
    assert out["root"] == "App.md" and out["relation"] == "depends_on"
    assert paths(out) == [("Api.md", 1), ("Db.md", 2)]
    db = out["nodes"][1]["via"]
    assert db["source"] == "Api.md" and db["relation"] == "depends_on"
    assert db["stated"] == [{"path": "Db.md", "relation": "required_by", "line": 2}]


def test_typed_traversal_backward_by_inverse_flag_or_inverse_name(
    call: Callable[..., Call],
) -> None:
    c = call(DEPENDS)
    flag = c("graph.traverse", {"note": "Db", "relation": "depends_on", "inverse": True,
                                "depth": 5})  # fmt: skip
    name = c("graph.traverse", {"note": "Db", "relation": "required_by", "depth": 5})
    assert paths(flag) == paths(name) == [("Api.md", 1), ("Cache.md", 1), ("App.md", 2)]
    assert flag["relation"] == name["relation"] == "required_by"
    assert name["direction"] == "backward" and name["canonical"] == "depends_on"
    # depth limits the walk; the walk of the inverse name with --inverse goes forward again
    assert paths(c("graph.traverse", {"note": "Db", "relation": "required_by"})) == [
        ("Api.md", 1), ("Cache.md", 1)]  # fmt: skip
    fwd = c("graph.traverse", {"note": "Api", "relation": "required_by", "inverse": True})
    assert paths(fwd) == [("Db.md", 1)]


@pytest.mark.parametrize("files", [FORWARD, BACKWARD, MIXED], ids=["forward", "backward", "mixed"])
def test_both_styles_give_the_same_facts(call: Callable[..., Call], files: dict[str, str]) -> None:
    c = call(files)
    down = c("graph.traverse", {"note": "A3", "relation": "supersedes", "depth": 5})
    up = c("graph.traverse", {"note": "A1", "relation": "superseded_by", "depth": 5})
    assert paths(down) == [("A2.md", 1), ("A1.md", 2)]
    assert paths(up) == [("A2.md", 1), ("A3.md", 2)]
    cur = c("graph.current", {"note": "A1"})
    assert cur == {"path": "A1.md", "current": "A3.md", "chain": ["A1.md", "A2.md", "A3.md"],
                   "status": None}  # fmt: skip
    assert c("graph.current", {"note": "A3"})["chain"] == ["A3.md"]


def test_a_fact_stated_from_both_ends_lists_both_edges(call: Callable[..., Call]) -> None:
    out = call(MIXED)("graph.traverse", {"note": "A2", "relation": "supersedes"})
    assert out["nodes"][0]["via"]["stated"] == [
        {"path": "A2.md", "relation": "supersedes", "line": 2},
        {"path": "A1.md", "relation": "superseded_by", "line": 2},
    ]


def test_three_note_supersedes_cycle_is_reported_not_looped(call: Callable[..., Call]) -> None:
    c = call(CYCLE)
    out = c("graph.current", {"note": "Old"})
    assert out["current"] is None
    assert out["chain"] == ["Old.md", "C1.md", "C3.md", "C2.md"]
    assert out["cycle"] == ["C1.md", "C3.md", "C2.md", "C1.md"]
    for note in ("C1", "C2", "C3"):
        res = c("graph.current", {"note": note})
        assert res["current"] is None and len(res["cycle"]) == 4
    walk = c("graph.traverse", {"note": "C1", "relation": "supersedes", "depth": 5})
    assert paths(walk) == [("C2.md", 1), ("Old.md", 1), ("C3.md", 2)]  # each once: cycle-safe


def test_current_prefers_a_way_out_of_a_cycle_and_reports_forks() -> None:
    sup = {"a": ["b", "x"], "b": ["a"], "x": ["y", "z"]}
    res = current_of("a", lambda p: sup.get(p, []))
    assert res.current == "y" and res.chain == ("a", "x", "y") and res.alternatives == ("z",)
    assert res.cycle == ()


def test_traverse_core_on_plain_edges() -> None:
    from sidecar.core.model import Edge

    def edge(src: str, rel: str, dst: str) -> Edge:
        return Edge(src, dst, dst, rel, dst, True, False, 0, "", "valid")

    from sidecar.core.graph import Graph

    tax = Taxonomy.default()
    edges = [edge("a", "contradicts", "b"), edge("c", "contradicts", "b"), edge("a", "owner", "p")]
    facts, graph = Facts(edges, tax), Graph("abcp", edges)
    assert [h.path for h in traverse(facts, graph, "b", "contradicts", depth=2)] == ["a", "c"]
    assert [h.path for h in traverse(facts, graph, "a", "owner")] == ["p"]  # untyped: as written
    assert [h.path for h in traverse(facts, graph, "p", "owner", inverse=True)] == ["a"]

    g = Graph(["a", "b"], [edge("b", "superseded_by", "a")])
    assert local_superseders(g, tax)("b") == ["a"] == superseders_in(Facts(g.edges(), tax))("b")


def test_a_walk_along_plain_links_reads_the_graph_not_the_facts() -> None:
    """Body links are no typed facts (most edges of a vault; kept out to save memory), yet a
    walk along ``link`` still finds each note once, with every edge stating each step, forward
    and backward; broken and self links lead nowhere; typed edges are not followed."""
    from sidecar.core.graph import Graph
    from sidecar.core.model import Edge

    def edge(src: str, dst: str | None, line: int, rel: str = "link", state: str = "valid") -> Edge:
        return Edge(src, dst, dst or "gone", rel, "", True, False, line, "", state)  # type: ignore[arg-type]

    edges = [
        edge("a", "b", 1), edge("a", "b", 4), edge("a", "c", 2), edge("b", "d", 1),
        edge("c", "d", 3), edge("a", "a", 5, state="self"), edge("a", None, 6, state="broken"),
        edge("d", "e", 1, rel="depends_on"),
    ]  # fmt: skip
    tax = Taxonomy.default()
    facts, graph = Facts(edges, tax), Graph("abcde", edges)
    assert all(rel != "link" for _, rel, _ in facts.edges)
    hops = traverse(facts, graph, "a", "link", depth=3)
    assert [(h.path, h.depth, h.source) for h in hops] == [
        ("b", 1, "a"),
        ("c", 1, "a"),
        ("d", 2, "b"),
    ]
    assert [e.line for e in hops[0].stated] == [1, 4]  # both lines that link a to b
    back = traverse(facts, graph, "d", "link", inverse=True, depth=2)
    assert [(h.path, h.depth) for h in back] == [("b", 1), ("c", 1), ("a", 2)]
    assert [h.path for h in traverse(facts, graph, "d", "depends_on")] == ["e"]


def test_bad_params_are_usage_errors(call: Callable[..., Call]) -> None:
    c = call(DEPENDS)
    with pytest.raises(UsageError):
        c("graph.traverse", {"note": "App", "relation": "depends_on", "depth": 6})
    with pytest.raises(UsageError):
        c("graph.traverse", {"note": "App", "relation": ""})


def test_facts_kept_up_to_date_equal_facts_built_afresh(
    make_vault: VaultFactory, tmp_path: Path
) -> None:
    """The daemon patches its facts per change; after edits, renames of relations, a new note
    and a deleted one, they must be what a fresh build from every edge gives."""
    vault = make_vault({**DEPENDS, **FORWARD})
    s = Services.open(vault, tmp_path / "data", embedder=TinyEmbedder())
    try:
        s.reindex()
        taxonomy = Taxonomy.default()
        kept = s.state.facts(taxonomy)  # built now, patched from here on
        assert traverse(kept, s.state.graph, "Api.md", "depends_on", inverse=True)
        (vault / "Cache.md").write_text("---\ndepends_on: ['[[Api]]', '[[App]]']\n---\n# Cache\n")
        (vault / "A2.md").unlink()  # A3 supersedes a note that is gone: its edge breaks
        (vault / "Db.md").write_text("# Db\n\nNo relations any more.\n")
        (vault / "New.md").write_text("---\nsupersedes: '[[A1]]'\nrequired_by: '[[Cache]]'\n---\n")
        s.reindex()
        assert s.state.facts(taxonomy) is kept
        fresh = Facts(s.state.graph.edges(), taxonomy)
        written = {(e.source, e.relation, e.target) for es in fresh.edges.values() for e in es}
        assert written and all(kept.is_stated(*t) for t in written)
        assert {f: sorted(map(repr, es)) for f, es in kept.edges.items()} == {
            f: sorted(map(repr, es)) for f, es in fresh.edges.items()
        }
        assert [h.path for h in traverse(kept, s.state.graph, "Cache.md", "depends_on")] == [
            "Api.md", "App.md", "New.md",
        ]  # fmt: skip
    finally:
        s.close()
