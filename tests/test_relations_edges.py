"""Semantic edges: link contexts embedded, searched (``--mode edge``), clustered and labelled."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sidecar.api import build_registry
from sidecar.core.edge_clusters import cluster_edges, kmeans, tfidf_labels
from sidecar.embed import TinyEmbedder
from sidecar.embed.base import Vectors
from sidecar.services.context import Services
from sidecar.services.edges import EdgeService
from sidecar.services.search import Query
from tests.conftest import VaultFactory

VAULT = {
    "Api.md": "# Api\n\nThe api depends on the [[Db]] for storage and requires the [[Cache]].\n",
    "Web.md": "# Web\n\nThe web front end depends on the [[Api]] and requires it at start.\n",
    "Db.md": "# Db\n\nPostgres database holding every table.\n",
    "Cache.md": "# Cache\n\nRedis cache.\n\nHistory: replaced the old [[Memo]] cache, which was retired.\n",
    "Memo.md": "# Memo\n\nMemcached, retired and replaced in 2024 by the [[Cache]].\n",
    "Jobs.md": "# Jobs\n\nNightly jobs read the [[Db]] tables.\n",
}


class Counting(TinyEmbedder):
    """Counts texts embedded, to see what the cache saves."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += len(texts)
        return super().embed(texts)


def open_vault(root: Path, data: Path, embedder: TinyEmbedder) -> Services:
    s = Services.open(root, data, embedder=embedder)
    s.reindex()
    s.embed_stage.run()
    return s


@pytest.fixture
def vault(make_vault: VaultFactory) -> Path:
    return make_vault(dict(VAULT))


def test_edges_of_a_note_with_context_cluster_and_strength(vault: Path, tmp_path: Path) -> None:
    s = open_vault(vault, tmp_path / "i", TinyEmbedder())
    try:
        out = build_registry().call(s, "note.edges", {"note": "Db"})
    finally:
        s.close()
    assert out["path"] == "Db.md"
    by_source = {e["source"]: e for e in out["edges"]}
    assert set(by_source) == {"Api.md", "Jobs.md"}
    api = by_source["Api.md"]
    assert api["direction"] == "in" and api["target"] == "Db.md" and api["link_text"] == "Db"
    assert "depends on the [[Db]]" in api["context"] and api["line"] == 3
    assert api["approx"] is False and -1.0 <= api["strength"] <= 1.0
    assert isinstance(api["cluster"], int) and api["label"]
    assert out["clusters"] and all(c["label"] and c["size"] for c in out["clusters"])
    assert sum(c["size"] for c in out["clusters"]) == 6  # every body link in the vault


def test_edge_search_mode_ranks_link_contexts(vault: Path, tmp_path: Path) -> None:
    s = open_vault(vault, tmp_path / "i", TinyEmbedder())
    try:
        out = s.search.search(Query("retired memcached replaced", mode="edge", limit=3))
    finally:
        s.close()
    assert out["mode"] == "edge" and out["results"] == []
    top = out["edge_results"][0]
    assert {top["source"], top["target"]} == {"Memo.md", "Cache.md"}
    assert {"id", "link_text", "context", "label", "strength", "score"} <= set(top)
    got = [e["score"] for e in out["edge_results"]]
    assert got == sorted(got, reverse=True) and len(got) == 3


def test_the_budget_bounds_a_first_query_and_the_cache_persists(
    vault: Path, tmp_path: Path
) -> None:
    first = Counting()
    s = open_vault(vault, tmp_path / "i", first)
    chunk_texts = first.texts
    try:
        edges = EdgeService(s.store, s.state, s.vectors, lambda: first, budget=2)
        out = edges.clusters()
        # two contexts embedded; Api's two links share one paragraph, so three edges are exact
        # and the other three use the vector of the chunk their link sits in meanwhile
        assert out["edges"] == 6 and out["approx"] == 3
        assert first.texts - chunk_texts == 2
        assert edges.warm() == 0  # the daemon's idle hook embeds the rest
        assert edges.clusters()["approx"] == 0
    finally:
        s.close()
    again = Counting()
    s = Services.open(vault, tmp_path / "i", embedder=again)
    try:
        assert s.search.edges.clusters()["approx"] == 0
        assert again.texts == 0  # read back from edge-vectors.npz, nothing re-embedded
    finally:
        s.close()


def test_a_vault_with_few_links_has_no_clusters(make_vault: VaultFactory, tmp_path: Path) -> None:
    root = make_vault({"A.md": "# A\n\nSee [[B]].\n", "B.md": "# B\n\nBack to [[A]].\n"})
    s = open_vault(root, tmp_path / "i", TinyEmbedder())
    try:
        out: dict[str, Any] = s.search.edges.for_note("A.md")
    finally:
        s.close()
    assert out["clusters"] == [] and all(e["cluster"] is None for e in out["edges"])


def test_kmeans_is_deterministic_and_separates_groups() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal([5, 0, 0], 0.1, (10, 3))
    b = rng.normal([0, 5, 0], 0.1, (10, 3))
    x = np.vstack([a, b]).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    first, second = kmeans(x, 2), kmeans(x, 2)
    assert first.tolist() == second.tolist()
    assert len(set(first[:10].tolist())) == 1 and len(set(first[10:].tolist())) == 1
    assert first[0] != first[10]


def test_tfidf_labels_pick_words_particular_to_each_group() -> None:
    labels = tfidf_labels(["depends on the api, depends", "replaced the old cache, replaced"])
    assert labels[0][0] == "depends" and labels[1][0] == "replaced"
    vecs = TinyEmbedder().embed(["a b", "a c", "x y", "x z"])
    clusters = cluster_edges(vecs, ["alpha one", "alpha two", "omega one", "omega two"])
    assert clusters is not None and sum(clusters.sizes) == 4
    assert cluster_edges(vecs[:3], ["a", "b", "c"]) is None
