"""The embedding stage: vectors for the content hashes the vector index is waiting for.

A note is searchable lexically the moment it is parsed; vectors follow. The re-index hands its
chunks to the vector index, which reuses every vector it or the store already has for a hash
and queues the rest (``VectorIndex.waiting``). ``compute`` takes a batch from that queue and
runs the model (slow, outside the writer); ``commit`` appends the vectors to the store and
fills them in (fast, in the writer). A vector is stored under the hash of the text it was
computed from, so a chunk edited while the model ran cannot receive it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sidecar.embed.base import Embedder
from sidecar.profiling import profile_as
from sidecar.store.chunk_search import texts_by_hash
from sidecar.store.lance import IndexStore
from sidecar.store.vectors import VectorIndex

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Batch:
    hashes: list[str]
    vectors: NDArray[np.float32]


class EmbedStage:
    def __init__(self, store: IndexStore, vectors: VectorIndex, embedder: Embedder) -> None:
        self.store = store
        self.vectors = vectors
        self.embedder = embedder

    def pending(self) -> int:
        """Chunks waiting for a vector."""
        return self.vectors.pending

    @profile_as("embed")
    def compute(self, limit: int) -> Batch | None:
        """Vectors for up to ``limit`` waiting hashes; None when there is nothing to embed
        now. A hash whose text is not in the store (yet) stays queued: the re-index that is
        writing it hands it over again."""
        texts = texts_by_hash(self.store, self.vectors.waiting(limit))
        if not texts:
            return None
        hashes = list(texts)
        return Batch(hashes, self.embedder.embed([texts[h] for h in hashes]))

    @profile_as("embed-commit")
    def commit(self, batch: Batch) -> int:
        """One append to the store; returns how many chunks got their vector."""
        self.store.add_vectors(self.embedder.model_id, batch.hashes, batch.vectors)
        return self.vectors.fill(batch.hashes, batch.vectors)

    def run(self, batch_size: int = 256, progress: Progress | None = None) -> int:
        """Embed everything waiting, in one go (the CLI's path; the daemon interleaves)."""
        total, done = self.pending(), 0
        if progress is not None and total:
            progress(0, total)  # the bar shows at once: the first batch may first load the model
        while (batch := self.compute(batch_size)) is not None:
            done += self.commit(batch)
            if progress is not None:
                progress(min(done, total), total)
        return done
