"""Lexical first, then vectors (issue 23): a saved note is found the moment its chunks are
written, by lexical search and by hybrid on its lexical leg, before its vector is computed."""

from __future__ import annotations

import shutil
from pathlib import Path

from sidecar.api import build_registry
from sidecar.embed import TinyEmbedder
from sidecar.services.context import Services
from tests.conftest import EXAMPLE_VAULT


def test_a_saved_note_is_found_by_hybrid_on_its_lexical_leg_until_its_vector_lands(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    services = Services.open(vault, tmp_path / "data", embedder=TinyEmbedder())
    try:
        services.reindex()
        services.embed_stage.run()
        registry = build_registry()

        def hits(mode: str, word: str) -> list[str]:
            spec, model = registry.validate("search", {"query": word, "mode": mode, "limit": 5})
            return [h["path"] for h in spec.handler(services, model)["results"]]

        for rel in ("Welcome.md", "people/Alice.md", "services/Session Store.md"):
            word = f"qqsaved{len(rel)}word"
            note = vault / rel
            note.write_text(note.read_text("utf-8") + f"\nNow with {word}.\n", "utf-8")
            services.reindex(paths=[rel])
            assert services.embed_stage.pending() > 0  # its vector has not landed
            assert hits("lexical", word)[0] == rel
            assert hits("hybrid", word)[0] == rel
            services.embed_stage.run()
            assert hits("hybrid", word)[0] == rel
    finally:
        services.close()


def test_a_save_is_announced_once_search_finds_it_before_its_row_is_written(
    tmp_path: Path,
) -> None:
    """``index.changed`` goes out from the writer's turn when the chunks and the in-memory
    state are written (``searchable``); the note's row, which search never reads, comes
    after."""
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    services = Services.open(vault, tmp_path / "data", embedder=TinyEmbedder())
    try:
        services.reindex()
        registry = build_registry()

        def hits(mode: str, word: str) -> list[str]:
            spec, model = registry.validate("search", {"query": word, "mode": mode, "limit": 5})
            return [h["path"] for h in spec.handler(services, model)["results"]]

        def row_hash(rel: str) -> str:
            q = services.store.notes.search().where(f"path = '{rel}'").select(["content_hash"])
            return str(q.to_list()[0]["content_hash"])

        rel, word = "people/Alice.md", "qqannouncedword"
        before = row_hash(rel)
        note = vault / rel
        note.write_text(note.read_text("utf-8") + f"\nNow with {word}.\n", "utf-8")
        told: list[tuple[list[str], list[str], list[str], list[str], str]] = []
        services.reindex(
            paths=[rel],
            searchable=lambda changed, deleted: told.append(
                (changed, deleted, hits("lexical", word), hits("hybrid", word), row_hash(rel))
            ),
        )
        assert told == [([rel], [], [rel], [rel], before)]  # found; its row not written yet
        assert row_hash(rel) == services.state.notes[rel].content_hash != before
        unchanged: list[object] = []
        services.reindex(paths=[rel], searchable=lambda *a: unchanged.append(a))
        assert unchanged == []  # nothing changed: nothing to announce
    finally:
        services.close()
