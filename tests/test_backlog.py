"""The backlog child: a real child process does a backlog's scans, vector writes and
compactions on the real store, while the daemon's side keeps the RAM index and falls back to
doing the work itself when the child fails."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest

from sidecar.daemon.backlog import BacklogChild
from sidecar.embed import TinyEmbedder
from sidecar.services import embedding
from sidecar.services.context import Services
from sidecar.services.search import Query
from tests.conftest import VaultFactory

NOTES = {
    f"n{i}.md": f"# Note {i}\n\nword{i} about topic {i % 3}\n\n## More\n\nmore on {i}\n"
    for i in range(12)
}


@pytest.fixture
def cold(make_vault: VaultFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Parsed, nothing embedded, and every batch big enough to go to the child."""
    monkeypatch.setattr(embedding, "BULK_ROWS", 2)
    s = Services.open(make_vault(NOTES), tmp_path / "idx", embedder=TinyEmbedder())
    s.reindex()
    s.embed_stage.prepare()
    child = BacklogChild(s.store)
    s.embed_stage.bulk = child
    yield s, child
    child.close()
    s.close()


def embed_all(s: Services, size: int = 5) -> int:
    done = 0
    while (batch := s.embed_stage.compute(size)) is not None:
        s.embed_stage.commit(batch)
        done += len(batch.chunk_ids)
    return done


def test_a_backlog_is_written_by_the_child_and_searchable_here(cold) -> None:  # type: ignore[no-untyped-def]
    s, child = cold
    assert s.store.count_pending() == 24
    assert embed_all(s) == 24
    assert child.running  # the writes went there (and the scans, once it ran)
    pid = child._proc.pid  # type: ignore[union-attr]
    assert s.store.count_pending() == 0  # this process sees what the child wrote
    assert len(s.vectors) == 24
    hit = s.search.search(Query("word7", mode="semantic"))["results"][0]
    assert hit["path"] == "n7.md"
    child.optimize()
    s.store.see_latest()
    assert s.store.count("chunks") == 24
    child.close()
    assert not child.running
    with pytest.raises(ProcessLookupError):  # gone, its memory with it
        os.kill(pid, 0)
    assert s.embed_stage.bulk is child  # it never failed


def test_a_vector_from_an_edited_chunk_is_refused_by_the_child(cold) -> None:  # type: ignore[no-untyped-def]
    s, child = cold
    batch = s.embed_stage.compute(4)
    assert batch is not None
    edited = embedding.Batch(
        batch.chunk_ids, ["edited-meanwhile", *batch.hashes[1:]], batch.vectors
    )
    assert s.embed_stage.commit(edited) == 3
    assert child.running
    assert batch.chunk_ids[0] not in s.vectors._rows
    stored = s.store.chunks.search().select(["chunk_id", "vector"]).limit(None).to_list()
    got = {r["chunk_id"]: r["vector"] for r in stored}
    assert got[batch.chunk_ids[0]] is None
    assert np.allclose(got[batch.chunk_ids[1]], batch.vectors[1])


def test_a_dead_child_leaves_the_work_to_this_process(cold) -> None:  # type: ignore[no-untyped-def]
    s, child = cold
    first = s.embed_stage.compute(5)
    assert first is not None
    s.embed_stage.commit(first)
    assert child.running
    os.kill(child._proc.pid, signal.SIGKILL)  # type: ignore[union-attr]
    child._proc.wait()  # type: ignore[union-attr]
    assert embed_all(s) == 19
    assert s.embed_stage.bulk is None  # given up on, with a warning
    assert not child.running
    assert s.store.count_pending() == 0
    assert len(s.vectors) == 24


def test_the_child_reports_a_failed_request_and_stays_usable_after_a_restart(cold) -> None:  # type: ignore[no-untyped-def]
    _, child = cold
    with pytest.raises(RuntimeError, match="unknown request"):
        child._ask({"op": "nonsense"})
    assert not child.running  # a failure stops it
    assert child.pending(100) is None  # a lookup alone never starts one
    child.optimize()  # a write does
    assert child.running
    assert len(child.pending(100)) == 24
