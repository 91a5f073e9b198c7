"""A deterministic stand-in for the real model, for unit tests of everything that embeds.

Loading the ONNX model costs a second and pins the tests to its numbers; the indexer, store
and queries only need vectors where similar texts land close. Signed feature hashing of
lowercase words and their character trigrams gives exactly that: shared words and shared
spellings (``password`` / ``passwords``) raise the cosine, unrelated texts sit near zero.
Features are hashed with BLAKE2b, not ``hash()``, so vectors are the same in every process.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from hashlib import blake2b

import numpy as np
from numpy.typing import NDArray

from sidecar.embed.base import Vectors, l2_normalise
from sidecar.errors import UsageError

_WORD = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5


class TinyEmbedder:
    """Feature-hashing embedder; ``model_id`` is ``tiny-hash-<dim>``."""

    def __init__(self, dim: int = 64, max_tokens: int = 256) -> None:
        if dim < 2:
            raise UsageError(f"TinyEmbedder needs dim >= 2, got {dim}")
        self.dim = dim
        self.max_tokens = max_tokens
        self.model_id = f"tiny-hash-{dim}"

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            self._featurise(text, out[row])
        return l2_normalise(out)

    def _featurise(self, text: str, row: NDArray[np.float32]) -> None:
        words = _WORD.findall(text.lower())
        if not words:
            # A text with no words still gets a unit vector, the same one for all such texts.
            self._add(row, "empty:", _WORD_WEIGHT)
        for word in words:
            self._add(row, "w:" + word, _WORD_WEIGHT)
            padded = f"<{word}>"
            for i in range(len(padded) - 2):
                self._add(row, "c:" + padded[i : i + 3], _TRIGRAM_WEIGHT)

    def _add(self, row: NDArray[np.float32], feature: str, weight: float) -> None:
        digest = blake2b(feature.encode("utf-8"), digest_size=8).digest()
        h = int.from_bytes(digest, "little")
        row[h % self.dim] += weight if h >> 63 else -weight
