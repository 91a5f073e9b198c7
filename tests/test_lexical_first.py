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
