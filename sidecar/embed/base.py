"""The contract every embedder meets, so the rest of the sidecar never knows which one it has.

The indexer and the queries take an ``Embedder``: the real ONNX model in the daemon, a tiny
hashing embedder in unit tests, an HTTP server for people who already run one. Three facts
travel with the vectors: ``model_id`` (stored beside them, so a changed model means re-embed),
``dim`` (the width of the vector column) and ``max_tokens`` (the longest input it reads).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

Vectors = NDArray[np.float32]
"""Shape (n, dim), float32, every row of unit length."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors; the cosine of two rows is their dot product."""

    @property
    def model_id(self) -> str:
        """Stable id of the weights (name plus a short file hash); changes mean re-embed."""
        ...

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int:
        """Longest input the model reads, in its tokens; the rest is cut."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text, in order; ``[]`` gives shape (0, dim)."""
        ...


def l2_normalise(matrix: NDArray[Any]) -> Vectors:
    """Rows scaled to unit length as float32; an all-zero row stays zero instead of NaN."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.ascontiguousarray(out / np.maximum(norms, 1e-12), dtype=np.float32)
