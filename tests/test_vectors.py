"""The in-RAM vector index: chunks by content hash, brute-force cosine, the queue of hashes
waiting for a vector, holes reused, sized for every chunk it knows."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pyarrow as pa
import pytest

from sidecar.store.vectors import VectorIndex


def unit(i: int, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, np.float32)
    v[i % dim] = 1.0
    return v


def test_search_filters_and_reuses_the_rows_of_removed_notes() -> None:
    v = VectorIndex(8)
    assert v.replace({"a.md": ["h0", "h1"], "b #1.md": ["h2"]}) == ["h0", "h1", "h2"]
    assert v.pending == 3 and len(v) == 0
    assert v.fill(["h0", "h1", "h2"], np.stack([unit(0), unit(1), unit(2)])) == 3
    assert v.search(unit(2), 1) == [("b #1.md#0", "b #1.md", 1.0)]  # a '#' in a note's name
    assert [h[0] for h in v.search(unit(1), 3, allowed={"a.md"})] == ["a.md#1", "a.md#0"]
    v.replace({}, gone=["a.md"])
    assert len(v) == 1 and [h[0] for h in v.search(unit(0), 5)] == ["b #1.md#0"]
    v.replace({"c.md": ["h3"]})
    v.fill(["h3"], unit(3)[None])
    assert v.search(unit(3), 1)[0][:2] == ("c.md#0", "c.md")
    assert len(v._path) == 3  # the new row took a hole; nothing grew
    v.replace({"p.md": ["h4", "h5"]}, named={"p.md"})  # its last chunk: its properties'
    v.fill(["h4", "h5"], np.stack([unit(4), unit(5)]))
    assert [v.search(unit(i), 1)[0][0] for i in (4, 5)] == ["p.md#0", "p.md#properties"]
    v.replace({"p.md": ["h4"]})  # the properties' chunk gone: its row is numbered again
    assert v.search(unit(4), 1)[0][0] == "p.md#0"


def test_a_search_among_a_few_notes_scores_their_rows_alone_and_ranks_as_a_full_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(3)
    v = VectorIndex(8)
    v.replace({f"n{i}.md": [f"h{i}a", f"h{i}b"] for i in range(200)})
    hashes = [h for i in range(200) for h in (f"h{i}a", f"h{i}b") if h != "h7b"]
    v.fill(hashes, rng.normal(size=(len(hashes), 8)).astype(np.float32))  # h7b still waits
    few = {"n3.md", "n7.md", "n150.md", "gone.md"}
    query = rng.normal(size=8).astype(np.float32)
    monkeypatch.setattr("sidecar.store.vectors.SUBSET_NOTES", 10**9, raising=False)  # all rows
    full = v.search(query, 4, allowed=few)
    monkeypatch.undo()
    assert len(full) == 4 and "n7.md#1" not in [h[0] for h in full]  # no vector: not a hit

    def whole_matrix(*_: object) -> None:
        raise AssertionError("the whole matrix was scored for four notes")

    monkeypatch.setattr(v, "_scores", whole_matrix)
    few_rows = v.search(query, 4, allowed=few)
    assert [h[:2] for h in few_rows] == [h[:2] for h in full]
    assert np.allclose([h[2] for h in few_rows], [h[2] for h in full], atol=1e-6)
    assert v.search(query, 10, allowed={"gone.md"}) == []


def test_a_hash_keeps_its_vector_through_a_rename_and_an_edit_that_leaves_it() -> None:
    v = VectorIndex(8)
    v.replace({"old.md": ["h0", "h1"]})
    v.fill(["h0", "h1"], np.stack([unit(0), unit(1)]))
    assert v.replace({"new.md": ["h1", "h0"]}, gone=["old.md"]) == []  # renamed, reordered
    assert v.pending == 0 and v.search(unit(1), 1)[0][0] == "new.md#0"
    assert v.replace({"new.md": ["h1", "h9"]}) == ["h9"]  # one chunk edited
    assert v.pending == 1 and len(v) == 1


def test_the_queue_gives_the_newest_hashes_first_and_fills_every_chunk_waiting() -> None:
    v = VectorIndex(8)
    v.replace({f"n{i}.md": [f"h{i}"] for i in range(5)})  # a backlog
    v.replace({"saved.md": ["hs", "h2"]})  # a save; h2 is also a backlog note's
    assert v.waiting(3) == ["h2", "hs", "h4"]  # h2 waited for again: it is the newest
    assert v.fill(["h2"], unit(2)[None]) == 2  # both chunks with it
    assert v.pending == 5 and "h2" not in v.waiting(10)
    v.replace({}, gone=["n0.md"])  # a waiting note deleted: its hash no longer waited for
    assert v.waiting(10) == ["hs", "h4", "h3", "h1"] and v.pending == 4
    assert v.fill(["gone"], unit(1)[None]) == 0  # a vector nobody waits for changes nothing


def test_a_backlog_waits_in_the_arrays_not_as_a_python_object_per_chunk() -> None:
    """A cold start's backlog is every chunk; objects made per chunk and freed a batch at a
    time pinned the allocator's arenas."""
    n = 5000
    chunks = pa.table({"chunk_id": [f"n{i // 2:04}.md#{i % 2}" for i in range(n)],
                       "path": [f"n{i // 2:04}.md" for i in range(n)], "seq": [i % 2 for i in range(n)],
                       "content_hash": [f"{i:040x}" for i in range(n)],
                       "start_line": [0] * n, "end_line": [1] * n})  # fmt: skip
    v = VectorIndex(8)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        v.load(chunks, iter([]))
        grown = tracemalloc.take_snapshot().compare_to(before, "filename")
    finally:
        tracemalloc.stop()
    assert v.pending == n and v.waiting(2) == [f"{n - 1:040x}", f"{n - 2:040x}"]
    # each note's range of rows and its path string stay; nothing more per chunk
    assert sum(s.count_diff for s in grown) < 2 * n  # a note's range, path, bound: 3 a note


def test_a_load_joins_chunks_to_stored_vectors_and_reserves_a_row_for_every_chunk() -> None:
    n = 5000
    chunks = pa.table({
        "chunk_id": [f"n{i // 2}.md#{'properties' if i % 2 else 0}" for i in range(n)],
        "path": [f"n{i // 2}.md" for i in range(n)],
        "seq": [i % 2 for i in range(n)],
        "content_hash": [f"h{i}" for i in range(n)],
        "start_line": list(range(n)),
        "end_line": [i + 1 for i in range(n)],
    })  # fmt: skip
    stored = [
        (pa.array([f"h{i}" for i in range(0, n, 2)]), np.stack([unit(i) for i in range(0, n, 2)]))
    ]
    v = VectorIndex(8)
    v.load(chunks, iter(stored))
    assert v._matrix.shape == (n, 8)  # room for the waiting half too: the backlog never grows it
    assert len(v) == n // 2 and v.pending == n // 2
    v.fill([f"h{i}" for i in range(1, n, 2)], np.stack([unit(i) for i in range(1, n, 2)]))
    assert v._matrix.shape == (n, 8) and len(v) == n and v.pending == 0
    top = v.search(unit(7), 1)[0]  # an odd row: its note's properties' chunk
    assert top[0] == f"{top[1]}#properties" and top[2] == 1.0
    assert v.search(unit(6), 1)[0][0].endswith("#0")
    assert list(v.of_notes(["n3.md"]))[1][:2] == ("n3.md", 1)
    # what the chunks table holds for a note, for its next save's writer
    assert v.chunk_keys(["n3.md"]) == {
        "n3.md": [("n3.md#0", "h6", 6, 7, 0), ("n3.md#properties", "h7", 7, 8, 1)]
    }
