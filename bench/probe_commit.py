"""What the embedding stage's store calls cost on a big store: the writer's share of a save.

    python bench/probe_commit.py /tmp/sidecar-scale/state-100000/data

On a store kept by ``scale.py --keep`` (no daemon running on it), times: finding pending
chunks, counting them, reading chunk hashes by id, and writing one vector both ways
``write_vectors`` can (one ``merge_insert``, one ``update``). Each write puts back the vector
the row already holds (the store's content is unchanged; it gains versions); a row without
one gets a random vector, so probe only a store you can throw away or re-embed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sidecar.store.chunk_search import UPDATE_ROWS, chunk_hashes, pending_chunks, write_vectors
from sidecar.store.lance import IndexStore


def timed(label: str, fn: Callable[[int], Any], runs: int) -> None:
    out = []
    for i in range(runs):
        t0 = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t0) * 1000)
    print(f"{label:<34} " + " ".join(f"{ms:6.0f}" for ms in out) + "  ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", type=Path, help="a store's data directory (SIDECAR_DATA_DIR)")
    ap.add_argument("--runs", type=int, default=4)
    args = ap.parse_args()
    store = IndexStore(args.data)
    print(f"{store.chunks.count_rows():,} chunks, table version {store.chunks.version}")
    rows = (
        store.chunks.search()
        .select(["chunk_id", "content_hash", "vector"])
        .limit(2 * args.runs + UPDATE_ROWS + 1)
        .to_list()
    )
    rng = np.random.default_rng(0)

    def row(i: int) -> tuple[str, str, Any]:
        r = rows[i]
        vector = r["vector"] if r["vector"] is not None else rng.standard_normal(store.dim)
        return r["chunk_id"], r["content_hash"], np.asarray(vector, np.float32)

    timed("pending_chunks(64)", lambda i: pending_chunks(store, 64), args.runs)
    timed("count_pending", lambda i: store.count_pending(), args.runs)
    timed("chunk_hashes, one id", lambda i: chunk_hashes(store, [rows[i]["chunk_id"]]), args.runs)
    # write_vectors merges from UPDATE_ROWS + 1 rows up and updates row by row below that
    merge_batch = [row(2 * args.runs + k) for k in range(UPDATE_ROWS + 1)]
    timed(f"merge_insert, {UPDATE_ROWS + 1} rows", lambda i: write_vectors(store, merge_batch),
          args.runs)  # fmt: skip
    timed("update, one row", lambda i: write_vectors(store, [row(args.runs + i)]), args.runs)


if __name__ == "__main__":
    main()
