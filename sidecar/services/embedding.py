"""The embedding stage: vectors for the content hashes the vector index is waiting for.

A note is searchable lexically the moment it is parsed; vectors follow. The re-index hands its
chunks to the vector index, which reuses every vector it holds for a hash and queues the rest
(``VectorIndex.waiting``); the hashes new to it are handed here (``look_up``). ``compute``
first reads the vectors the store holds for those (a copied note, text an undo restored),
then takes a batch from the queue and runs the model (slow, both outside the writer: a save's
turn is not made longer by a lookup that can wait for the embedding); ``commit`` appends the
computed vectors to the store and fills them all in (fast, in the writer). A vector is stored
under the hash of the text it was computed from, so a chunk edited while the model ran cannot
receive it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
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
    stored: int = 0  # the first ``stored`` were read from the store, not computed


class EmbedStage:
    def __init__(self, store: IndexStore, vectors: VectorIndex, embedder: Embedder) -> None:
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self._lock = threading.Lock()
        self._unchecked: set[str] = set()  # waiting hashes not looked up in the store yet

    def look_up(self, hashes: Iterable[str]) -> None:
        """These hashes newly wait for a vector: ``compute`` looks for them in the store before
        the model runs on them."""
        with self._lock:
            self._unchecked.update(hashes)

    def pending(self) -> int:
        """Chunks waiting for a vector."""
        return self.vectors.pending

    @profile_as("embed")
    def compute(self, limit: int) -> Batch | None:
        """The stored vectors of the hashes not looked up yet, if the store has any; else
        vectors for up to ``limit`` waiting hashes from the model. None when there is nothing
        to embed now. A hash whose text is not in the store (yet) stays queued: the re-index
        that is writing it hands it over again."""
        with self._lock:
            unchecked, self._unchecked = self._unchecked, set()
        if unchecked:
            found, vectors = self.store.find_vectors(self.embedder.model_id, sorted(unchecked))
            if found:
                return Batch(found, vectors, stored=len(found))
        texts = texts_by_hash(self.store, self.vectors.waiting(limit))
        if not texts:
            return None
        hashes = list(texts)
        return Batch(hashes, self.embedder.embed([texts[h] for h in hashes]))

    @profile_as("embed-commit")
    def commit(self, batch: Batch) -> int:
        """One append to the store (of the vectors computed); returns how many chunks got
        their vector."""
        computed = batch.hashes[batch.stored :]
        self.store.add_vectors(self.embedder.model_id, computed, batch.vectors[batch.stored :])
        return self.vectors.fill(batch.hashes, batch.vectors)

    def run(self, batch_size: int = 256, progress: Progress | None = None) -> int:
        """Embed everything waiting, in one go (the CLI's path; the daemon interleaves);
        returns how many chunks got a vector from the model (not from the store)."""
        total, done, embedded = self.pending(), 0, 0
        if progress is not None and total:
            progress(0, total)  # the bar shows at once: the first batch may first load the model
        while (batch := self.compute(batch_size)) is not None:
            filled = self.commit(batch)
            done += filled
            embedded += 0 if batch.stored else filled  # a batch is read or computed, not both
            if progress is not None:
                progress(min(done, total), total)
        return embedded
