"""The real all-MiniLM-L6-v2 model from its PyPI package, offline, on the example vault."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sidecar.embed import load_embedder
from sidecar.services.context import Services
from sidecar.services.search import Query
from tests.conftest import EXAMPLE_VAULT


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("real")
    shutil.copytree(EXAMPLE_VAULT, root / "vault")
    s = Services.open(root / "vault", root / "idx", embedder=load_embedder("minilm"))
    s.reindex()
    yield s
    s.close()


def test_lexical_works_before_any_vector(services: Services) -> None:
    assert services.embed_stage.pending() == services.status()["chunks"] > 0
    r = services.search.search(Query("evictions", mode="lexical"))
    assert r["results"][0]["path"] == "services/Session Store.md"


def test_meaning_without_the_words(services: Services) -> None:
    services.embed_stage.run()
    assert services.embed_stage.pending() == 0
    assert services.status()["model"].startswith("all-MiniLM-L6-v2")
    # none of these words appear in the notes that answer it
    r = services.search.search(Query("who is responsible for logins", mode="semantic", limit=3))
    assert "services/Auth Service.md" in [x["path"] for x in r["results"]]
    r = services.search.search(Query("how long do refresh tokens last", limit=1))
    top = r["results"][0]
    assert (top["path"], top["heading"]) == (
        "services/Auth Service.md",
        "Auth Service > Token lifetime",
    )


def test_reopen_loads_vectors_without_re_embedding(services: Services, tmp_path: Path) -> None:
    vault, data = services.vault.root, services.data_dir
    n = len(services.vectors)
    services.close()
    again = Services.open(vault, data, embedder=load_embedder("minilm"))
    try:
        assert len(again.vectors) == n > 0
        assert again.embed_stage.run() == 0
    finally:
        again.close()  # the fixture's close afterwards is a no-op: release is idempotent
