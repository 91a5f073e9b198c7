"""Stores built by earlier layouts open with their vectors copied, not computed again: schema
version 2 (``tests/store_v2``: vectors in a column of ``chunks``, edges in a table of their
own; the rest is rebuilt from the vault) and version 3 (``tests/store_v3``: float32 vectors,
converted to float16; the notes and chunks are kept)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lancedb
import numpy as np

from sidecar.core.chunks import ChunkOptions
from sidecar.core.note import parsed_by
from sidecar.services import doctor
from sidecar.services.context import Services
from sidecar.services.search import Query
from sidecar.store.lance import SCHEMA_VERSION
from tests.test_store import Counting

FIXTURE = Path(__file__).parent / "store_v2"


def copy_fixture(to: Path, fixture: Path = FIXTURE) -> tuple[Path, Path]:
    shutil.copytree(fixture / "vault", to / "vault")
    shutil.copytree(fixture / "data", to / "data")
    return to / "vault", to / "data"


def old_vectors(data: Path, table: str = "chunks") -> dict[str, list[float]]:
    """Each hash's vector as stored, as float16 (what the copy must hold)."""
    chunks = lancedb.connect(str(data / "lance")).open_table(table)
    rows = chunks.search().select(["content_hash", "vector"]).limit(None).to_list()
    return {r["content_hash"]: np.float16(r["vector"]).tolist() for r in rows}


def stored_vectors(s: Services) -> dict[str, list[float]]:
    rows = s.store.vectors.search().select(["content_hash", "vector"]).limit(None).to_list()
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
        for name in ("notes", "chunks", "vectors"):
            meta = getattr(s.store, name).schema.metadata
            assert meta[b"schema_version"] == SCHEMA_VERSION[name].encode()
        report = s.reindex()  # the rest is rebuilt from the vault
        # this parser adds two chunks (properties' chunks) the old one did not make: only
        # those are embedded; every other chunk has its copied vector, which the embedding
        # stage reads before it runs the model
        assert report.notes == 33 and report.chunks == 96
        assert s.embed_stage.pending() == 96 and len(s.vectors) == 0
        assert s.embed_stage.run() == 2 and embedder.texts == 2 and len(s.vectors) == 96
        stored = stored_vectors(s)
        assert len(stored) == 96 and {h: stored[h] for h in old} == old
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


def test_a_version_3_store_opens_with_its_vectors_converted_and_its_notes_kept(
    tmp_path: Path,
) -> None:
    """``tests/store_v3`` (built by ``34d5bc3``, float32 vectors): the vectors become float16
    in place, none is computed again, and the notes and chunks need no re-index."""
    vault, data = copy_fixture(tmp_path, Path(__file__).parent / "store_v3")
    old = old_vectors(data, "vectors")
    meta = lancedb.connect(str(data / "lance")).open_table("vectors").schema.metadata
    assert len(old) == 96 and meta[b"schema_version"] == b"3"
    embedder = Counting()
    s = Services.open(vault, data, embedder=embedder)
    try:
        assert s.store.vectors.schema.field("vector").type.value_type == "halffloat"
        assert s.store.vectors.schema.metadata[b"schema_version"] == b"4"
        assert stored_vectors(s) == old and len(s.vectors) == 96 and s.embed_stage.pending() == 0
        # a parser newer than the fixture's reads the notes again once; its chunks, the same
        # text, keep their vectors
        made_by = json.loads((data / "meta.json").read_text("utf-8"))["parsed_by"]
        report = s.reindex()
        assert report.parsed == (0 if made_by == parsed_by(ChunkOptions()) else report.notes)
        assert embedder.texts == 0
        assert doctor.check(s)["problems"] == []
        hit = s.search.search(Query("SQLite is enough", mode="semantic"))["results"][0]
        assert hit["path"] == "ADR-2 Use SQLite.md"
    finally:
        s.close()
