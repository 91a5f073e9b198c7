"""The in-RAM vector matrix: brute-force cosine, holes reused, sized to what it holds."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sidecar.store.vectors import VectorIndex


def unit(i: int, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, np.float32)
    v[i % dim] = 1.0
    return v


def test_search_filters_and_reuses_the_rows_of_removed_notes() -> None:
    v = VectorIndex(8)
    ids = ["a.md#0", "a.md#1", "b #1.md#0"]  # a '#' in a note's name
    v.upsert(ids, ["a.md", "a.md", "b #1.md"], np.stack([unit(0), unit(1), unit(2)]))
    assert v.search(unit(2), 1) == [("b #1.md#0", "b #1.md", 1.0)]
    assert [h[0] for h in v.search(unit(1), 3, allowed={"a.md"})] == ["a.md#1", "a.md#0"]
    v.remove_paths(["a.md"])
    assert len(v) == 1 and [h[0] for h in v.search(unit(0), 5)] == ["b #1.md#0"]
    v.upsert(["c.md#0"], ["c.md"], unit(3)[None])
    assert v.search(unit(3), 1)[0][:2] == ("c.md#0", "c.md")
    assert len(v._ids) == 3  # the new row took a hole; nothing grew
    v.upsert(["c.md#0"], ["c.md"], unit(4)[None])  # a new vector for the same chunk
    assert v.search(unit(4), 1)[0][0] == "c.md#0" and len(v) == 2


def test_a_load_reserves_exactly_and_growth_is_by_a_quarter() -> None:
    n = 5000
    table = pa.table({
        "chunk_id": [f"n{i}.md#0" for i in range(n)],
        "path": [f"n{i}.md" for i in range(n)],
        "vector": pa.array([unit(i).tolist() for i in range(n)], pa.list_(pa.float32(), 8)),
    })  # fmt: skip
    v = VectorIndex(8)
    v.load(table)
    assert v._matrix.shape == (n, 8) and len(v) == n
    v.remove_paths(["n7.md"])  # a note re-indexed: its rows go, then come back from the store
    v.load(table.slice(7, 1))
    assert v._matrix.shape == (n, 8) and len(v) == n  # the hole was reused, no copy
    v.upsert(["x.md#0"], ["x.md"], unit(1)[None])
    assert v._matrix.shape == (n + n // 4, 8)
    assert v.search(unit(7), 1)[0][2] == 1.0


def test_shrink_gives_back_the_rows_growth_reserved_and_keeps_every_vector() -> None:
    v = VectorIndex(8)
    for i in range(1500):  # one batch at a time, as through a cold embedding
        v.upsert([f"n{i}.md#0"], [f"n{i}.md"], unit(i)[None])
    assert v._matrix.shape[0] > 1500
    before = v.search(unit(3), 5)
    v.shrink()
    assert v._matrix.shape == (1500, 8) and v._alive.shape == (1500,)
    assert v.search(unit(3), 5) == before
    new = (unit(1) + unit(2)) / np.sqrt(2)
    v.upsert(["new.md#0"], ["new.md"], new[None])  # and it grows again after
    assert v.search(new, 1)[0][0] == "new.md#0" and len(v) == 1501
