"""Vectors of link contexts, on disk beside the index, keyed by the context's hash.

Edge vectors are derived data (the vault can always recompute them), so they live in one small
``.npz`` file rather than a LanceDB table: they are read whole into RAM anyway (searching a few
thousand rows in numpy takes microseconds), a rewrite is one atomic file replace, and a CLI run
without a daemon does not pay again for what an earlier run embedded. The model id is stored
with them; another model's vectors are ignored.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from sidecar.store.files import Beneath
from sidecar.store.lance import IndexStore, sql_str

FILE = "edge-vectors.npz"


def load_edge_vectors(directory: Path, model_id: str, dim: int) -> dict[str, NDArray[np.float32]]:
    try:
        raw = Beneath(directory).read_bytes(FILE)
        with np.load(io.BytesIO(raw), allow_pickle=False) as data:
            if str(data["model"]) != model_id or data["vectors"].shape[1:] != (dim,):
                return {}
            return dict(zip(data["hashes"].tolist(), data["vectors"], strict=True))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return {}  # missing or damaged: recompute


def save_edge_vectors(
    directory: Path, model_id: str, dim: int, vectors: dict[str, NDArray[np.float32]]
) -> None:
    hashes = sorted(vectors)
    matrix = np.stack([vectors[h] for h in hashes]) if hashes else np.zeros((0, dim), np.float32)
    buf = io.BytesIO()
    np.savez(buf, model=np.array(model_id), hashes=np.array(hashes, dtype=str),
             vectors=matrix.astype(np.float32))  # fmt: skip
    Beneath(directory, create_anchor=True).write(FILE, buf.getvalue())


def chunk_spans(store: IndexStore, paths: list[str]) -> pa.Table:
    """path, seq, start_line and end_line of the chunks of these notes."""
    cols = ["path", "seq", "start_line", "end_line"]
    if not paths:
        return pa.table({c: [] for c in cols})
    where = f"path IN ({', '.join(sql_str(p) for p in paths)})"
    return store.chunks.search().where(where).select(cols).limit(None).to_arrow()
