"""Search on small vaults with the deterministic tiny embedder (the real model: test_search_real)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from sidecar.embed import TinyEmbedder
from sidecar.errors import ModelError
from sidecar.services.context import Services
from sidecar.services.search import Query
from tests.conftest import VaultFactory

NOTES: dict[str, str | bytes] = {
    "setup.md": "# Setup\n\nPut OPENAI_API_KEY in your shell profile before running.\n",
    "config.md": "---\ntags: [config]\npriority: 2\n---\n# Config\n\nEdit dendron.yml to change the vault list.\n",
    "tasks.md": "---\ntags: [tasks/query]\npriority: 5\n---\n# Queries\n\nUse due before tomorrow to list urgent tasks.\n",
    "cats.md": "# Cats\n\nThe cat sat on the warm mat all afternoon.\n",
    "deep/dogs.md": "# Dogs\n\nDogs enjoy long walks in the park.\n",
}


class Exploding:
    """An embedder that must never be called: lexical mode may not load the model."""

    model_id = "exploding"
    dim = 64
    max_tokens = 256

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise ModelError("the model was loaded")


@pytest.fixture
def services(make_vault: VaultFactory, tmp_path: Path):  # type: ignore[no-untyped-def]
    s = Services.open(make_vault(NOTES), tmp_path / "idx", embedder=TinyEmbedder())
    s.reindex()
    s.embed_stage.run()
    yield s
    s.close()


def paths(result: dict) -> list[str]:  # type: ignore[type-arg]
    return [r["path"] for r in result["results"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [("OPENAI_API_KEY", "setup.md"), ("dendron.yml", "config.md"), ('"due before"', "tasks.md")],
)
def test_identifiers_are_found_exactly(services: Services, query: str, expected: str) -> None:
    for mode in ("lexical", "hybrid"):
        assert paths(services.search.search(Query(query, mode=mode)))[0] == expected  # type: ignore[arg-type]


def test_result_shape_and_explain(services: Services) -> None:
    r = services.search.search(Query("cat on the mat", explain=True))
    assert r["mode"] == "hybrid" and r["query"] == "cat on the mat"
    top = r["results"][0]
    assert top["path"] == "cats.md" and top["chunk_id"] == "cats.md#0"
    assert (top["heading"], top["start_line"], top["end_line"]) == ("Cats", 3, 3)
    assert "warm mat" in top["snippet"] and 0 < top["score"] <= 1
    assert {"bm25", "cosine", "lexical_rank", "semantic_rank", "rrf"} <= set(top["explain"])
    assert len(set(paths(r))) == len(paths(r))  # one result per note


def test_semantic_mode_uses_vectors(services: Services) -> None:
    r = services.search.search(Query("dogs walking in a park", mode="semantic", limit=2))
    assert paths(r)[0] == "deep/dogs.md"
    assert (
        "bm25"
        not in services.search.search(Query("dogs", mode="semantic", explain=True))["results"][0][
            "explain"
        ]
    )


def test_filters_tags_and_path(services: Services) -> None:
    def hits(**kw: object) -> list[str]:
        return paths(services.search.search(Query("the", mode="hybrid", limit=10, **kw)))  # type: ignore[arg-type]

    from sidecar.core.filters import parse_filters

    assert set(hits(path="deep")) == {"deep/dogs.md"}
    assert set(hits(tags=("tasks",))) == {"tasks.md"}
    assert set(hits(filters=parse_filters(["priority>=2"]))) == {"config.md", "tasks.md"}
    assert set(hits(filters=parse_filters(["priority<3"]))) == {"config.md"}
    assert hits(tags=("nope",)) == []


def test_min_score_and_decay(services: Services, tmp_path: Path) -> None:
    assert services.search.search(Query("cat", min_score=1.01))["results"] == []
    old = services.vault.root / "cats.md"
    os.utime(old, (0, 0))  # touched in 1970
    services.reindex()
    now = dt.datetime.now(dt.UTC)
    services.search.clock = lambda: now
    decayed = services.search.search(Query("cat mat", half_life_days=30, explain=True))
    top = {r["path"]: r for r in decayed["results"]}
    assert top["cats.md"]["explain"]["decay"] < 0.001


def test_lexical_mode_never_loads_the_model(make_vault: VaultFactory, tmp_path: Path) -> None:
    s = Services.open(make_vault(NOTES), tmp_path / "idx2", embedder=Exploding())  # type: ignore[arg-type]
    try:
        s.reindex()
        r = s.search.search(Query("dendron.yml", mode="lexical"))
        assert paths(r)[0] == "config.md"
        with pytest.raises(ModelError):
            s.embed_stage.run()
    finally:
        s.close()


def test_an_edit_re_embeds_only_the_changed_chunk(make_vault: VaultFactory, tmp_path: Path) -> None:
    root = make_vault({"long.md": "# A\n\nalpha text\n\n# B\n\nbeta text\n\n# C\n\ngamma text\n"})
    s = Services.open(root, tmp_path / "idx3", embedder=TinyEmbedder())
    try:
        s.reindex()
        assert s.embed_stage.run() == 3
        note = root / "long.md"
        note.write_text("# A\n\nalpha text\n\n# B\n\nbeta text, now changed\n\n# C\n\ngamma text\n")
        st = note.stat()
        os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        s.reindex()
        assert s.embed_stage.pending() == 1
        assert s.embed_stage.run() == 1
        assert len(s.vectors) == 3
        assert paths(s.search.search(Query("now changed", mode="semantic")))[0] == "long.md"
    finally:
        s.close()


def test_another_model_embeds_anew_and_the_first_keeps_its_vectors(
    make_vault: VaultFactory, tmp_path: Path
) -> None:
    """Vectors are stored per (model, content hash): switching models never clears any, and
    switching back finds the first model's again."""
    root = make_vault(NOTES)
    s = Services.open(root, tmp_path / "idx4", embedder=TinyEmbedder(64))
    s.reindex()
    assert s.embed_stage.run() == 7  # five notes, two with properties (their own chunk)
    s.close()

    other = TinyEmbedder(64)
    other.model_id = "other-tiny"
    s = Services.open(root, tmp_path / "idx4", embedder=other)
    try:
        assert len(s.vectors) == 0  # not loaded: they belong to another model
        assert s.embed_stage.run() == 7
        assert s.status()["model"] == "other-tiny"
        assert s.store.count("vectors") == 14
    finally:
        s.close()
    s = Services.open(root, tmp_path / "idx4", embedder=TinyEmbedder(64))
    try:
        assert len(s.vectors) == 7 and s.embed_stage.pending() == 0
    finally:
        s.close()


def test_reads_by_path_go_through_a_btree_added_to_older_stores(services: Services) -> None:
    """Re-indexing a note reads, deletes and reloads its chunks by path; without an index each
    of those scans the whole chunks table (the cost of a save at 100k notes)."""
    chunks = services.store.chunks

    def plan() -> str:
        q = chunks.search().where("path IN ('cats.md', 'deep/dogs.md')").select(["chunk_id"])
        return str(q.explain_plan(True))

    services.search.search(Query("cat", mode="lexical"))
    assert "path_idx" in plan()
    chunks.drop_index("path_idx")  # a store an older version built
    services.store.fts_ready = False  # as after a restart
    assert "path_idx" not in plan()
    assert paths(services.search.search(Query("cat", mode="lexical")))[0] == "cats.md"
    assert "path_idx" in plan()
