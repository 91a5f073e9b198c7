"""A store built by the previous layout (schema version 2, ``tests/store_v2``: vectors in a
column of ``chunks``, edges in a table of their own) opens: its vectors are copied into the
``vectors`` table, not computed again, and the rest is rebuilt from the vault."""

from __future__ import annotations

import shutil
from pathlib import Path

import lancedb

from sidecar.services import doctor
from sidecar.services.context import Services
from sidecar.services.search import Query
from sidecar.store.lance import SCHEMA_VERSION
from tests.test_store import Counting

FIXTURE = Path(__file__).parent / "store_v2"


def copy_fixture(to: Path) -> tuple[Path, Path]:
    shutil.copytree(FIXTURE / "vault", to / "vault")
    shutil.copytree(FIXTURE / "data", to / "data")
    return to / "vault", to / "data"


def old_vectors(data: Path) -> dict[str, list[float]]:
    chunks = lancedb.connect(str(data / "lance")).open_table("chunks")
    rows = chunks.search().select(["content_hash", "vector"]).limit(None).to_list()
    return {r["content_hash"]: r["vector"] for r in rows}


def test_a_version_2_store_opens_with_its_vectors_copied_not_recomputed(tmp_path: Path) -> None:
    vault, data = copy_fixture(tmp_path)
    old = old_vectors(data)
    assert (
        len(old) == 94
        and lancedb.connect(str(data / "lance"))
        .open_table("notes")
        .schema.metadata.get(b"schema_version")
        == b"2"
    )
    embedder = Counting()
    s = Services.open(vault, data, embedder=embedder)
    try:
        assert s.store.count("vectors") == len(old)
        tables = set(s.store.db.list_tables().tables)
        assert "edges" not in tables and {"notes", "chunks", "vectors"} <= tables
        for table in (s.store.notes, s.store.chunks, s.store.vectors):
            assert table.schema.metadata[b"schema_version"] == SCHEMA_VERSION.encode() == b"3"
        report = s.reindex()  # the rest is rebuilt from the vault
        # this parser adds two chunks (properties' chunks) the old one did not make: only
        # those are embedded; every other chunk has its copied vector, which the embedding
        # stage reads before it runs the model
        assert report.notes == 33 and report.chunks == 96
        assert s.embed_stage.pending() == 96 and len(s.vectors) == 0
        assert s.embed_stage.run() == 2 and embedder.texts == 2 and len(s.vectors) == 96
        stored = s.store.vectors.search().select(["content_hash", "vector"]).limit(None).to_list()
        assert len(stored) == 96
        assert {r["content_hash"]: r["vector"] for r in stored if r["content_hash"] in old} == old
        assert doctor.check(s)["problems"] == []
        hit = s.search.search(Query("SQLite is enough", mode="semantic"))["results"][0]
        assert hit["path"] == "ADR-2 Use SQLite.md"
        current = s.graph.export()
    finally:
        s.close()
    again = Services.open(vault, data, embedder=embedder)  # and it stays migrated
    try:
        assert again.reindex().parsed == 0 and again.graph.export() == current
        assert len(again.vectors) == 96 and embedder.texts == 3  # and the query above
    finally:
        again.close()
