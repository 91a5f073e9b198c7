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
from sidecar.store.chunk_search import UPDATE_ROWS, write_vectors
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

    def count_tokens(self, text: str) -> int:
        return len(text.split())


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
        assert s.store.count_pending() == 1
        assert s.embed_stage.run() == 1
        assert len(s.vectors) == 3
        assert paths(s.search.search(Query("now changed", mode="semantic")))[0] == "long.md"
    finally:
        s.close()


@pytest.mark.parametrize("sections", [3, UPDATE_ROWS + 4])  # row by row; one merge
def test_a_vector_lands_only_on_the_text_it_was_computed_from(
    make_vault: VaultFactory, tmp_path: Path, sections: int
) -> None:
    """An edit can land between the model's run and the commit: that chunk's vector is dropped,
    the others land, whichever way the batch is written."""
    body = "".join(f"# Part {i}\n\nsection {i} words\n\n" for i in range(sections))
    s = Services.open(make_vault({"long.md": body}), tmp_path / "idx5", embedder=TinyEmbedder())
    try:
        s.reindex()
        batch = s.embed_stage.compute(100)
        assert batch is not None and len(batch.chunk_ids) == sections
        hashes = ["edited-meanwhile", *batch.hashes[1:]]
        rows = list(zip(batch.chunk_ids, hashes, batch.vectors, strict=True))
        assert write_vectors(s.store, rows) == sections - 1
        stored = s.store.chunks.search().select(["chunk_id", "vector"]).limit(None).to_list()
        got = {r["chunk_id"]: r["vector"] for r in stored}
        assert got[batch.chunk_ids[0]] is None
        for cid, vec in zip(batch.chunk_ids[1:], batch.vectors[1:], strict=True):
            assert np.allclose(got[cid], vec)
        assert s.store.count_pending() == 1
    finally:
        s.close()


def test_a_save_looks_for_pending_chunks_in_its_own_note_only(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Across all notes, finding chunks without vectors scans the vector column (150 ms and
    ~300 MiB of buffers at 100k notes): after the first pass, only re-parsed notes are asked."""
    import sidecar.services.embedding as embedding

    looks: list[list[str] | None] = []
    real = embedding.pending_chunks

    def recorded(store, limit, paths=None):  # type: ignore[no-untyped-def]
        looks.append(None if paths is None else sorted(paths))
        return real(store, limit, paths)

    monkeypatch.setattr(embedding, "pending_chunks", recorded)
    stage = services.embed_stage
    # The fixture's run scanned everything; the notes its index parsed are looked at once more
    assert stage.compute(64) is None
    everything = sorted(services.state.notes)
    assert looks == [everything]
    assert stage.compute(64) is None and stage.pending() == 0
    assert looks == [everything]  # now nothing is asked
    note = services.vault.root / "cats.md"
    note.write_text("# Cats\n\nThe cat now sleeps on the sofa.\n")
    os.utime(note, ns=(note.stat().st_atime_ns, note.stat().st_mtime_ns + 10**9))
    services.reindex(paths=["cats.md"])
    batch = stage.compute(64)
    assert batch is not None and [c.split("#")[0] for c in batch.chunk_ids] == ["cats.md"]
    stage.commit(batch)
    assert stage.compute(64) is None  # looked again, found none: the hint goes
    assert stage.compute(64) is None and stage.pending() == 0
    assert looks == [everything, ["cats.md"], ["cats.md"]]
    assert paths(services.search.search(Query("sleeps sofa", mode="semantic")))[0] == "cats.md"
    stage.rescan()
    assert stage.compute(64) is None and looks[-1] is None


def test_pending_is_counted_in_the_hinted_notes_only(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Editors ask ``index.status`` after every change; counting over all notes scanned the
    vector column each time."""
    stage = services.embed_stage
    assert stage.compute(64) is None  # the fixture's hints looked at and dropped
    counted: list[list[str] | None] = []
    real = services.store.count_pending

    def recorded(paths=None):  # type: ignore[no-untyped-def]
        counted.append(None if paths is None else sorted(paths))
        return real(paths)

    monkeypatch.setattr(services.store, "count_pending", recorded)
    assert stage.pending() == 0 and counted == [[]]
    note = services.vault.root / "cats.md"
    note.write_text("# Cats\n\nThe cat now sleeps on the sofa.\n")
    os.utime(note, ns=(note.stat().st_atime_ns, note.stat().st_mtime_ns + 10**9))
    services.reindex(paths=["cats.md"])
    assert services.status()["pending"] == 1 and counted[-1] == ["cats.md"]
    stage.rescan()
    assert stage.pending() == 1 and counted[-1] is None


def test_a_note_re_parsed_while_its_hint_is_looked_at_keeps_its_hint(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sidecar.services.embedding as embedding

    stage = services.embed_stage
    assert stage.compute(64) is None  # the fixture's notes looked at: no hints left
    stage.refresh(["cats.md"])
    real = embedding.pending_chunks
    looks: list[list[str] | None] = []

    def racing(store, limit, paths=None):  # type: ignore[no-untyped-def]
        looks.append(paths)
        if len(looks) == 1:
            stage.refresh(["cats.md"])  # its re-index commits right after this look
            return []
        return real(store, limit, paths)

    monkeypatch.setattr(embedding, "pending_chunks", racing)
    assert stage.compute(64) is None
    assert stage.compute(64) is None
    assert looks == [["cats.md"], ["cats.md"]]  # kept after the first look, gone after the next
    assert stage.compute(64) is None and len(looks) == 2


def test_model_change_clears_vectors(make_vault: VaultFactory, tmp_path: Path) -> None:
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
        assert s.store.model_id == "other-tiny"
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


def test_settle_lets_go_of_the_caches_a_burst_of_commits_filled(services: Services) -> None:
    """A cold embedding commits batch after batch; LanceDB caches entries for each version.
    ``settle`` (the daemon's step after a backlog) reopens every table in a new session."""
    from sidecar.services.memory_search import search_memory

    cats = services.vault.root / "cats.md"
    for i in range(25):  # a burst of commits
        cats.write_text(f"# Cats\n\nThe cat sat on mat number {i} all afternoon.\n")
        services.reindex(paths=["cats.md"])
        services.embed_stage.run()
        services.search.search(Query("cat mat"))
    filled = services.store.cache_bytes()
    services.settle()
    assert services.store.cache_bytes() < filled / 2
    # Every table still reads and writes through the new session.
    assert paths(services.search.search(Query("cat sat on the mat")))[0] == "cats.md"
    cats.write_text("# Cats\n\nThe cat now sleeps on the sofa.\n")
    services.reindex(paths=["cats.md"])
    services.embed_stage.run()
    assert paths(services.search.search(Query("sofa", mode="lexical"))) == ["cats.md"]
    services.memory.write(title="Cats sleep on the sofa", entry_type="decision", content="Yes.")
    assert [h.record.entry.title for h in search_memory(services.memory, "sofa")] == [
        "Cats sleep on the sofa"
    ]
