"""What recall's gate (``core/relevance.py``) needs to know about one vault, measured once and
kept: its background similarity and how common each word is in it.

The background is remeasured when the number of vectors drifts by a tenth (a vault that grew,
a model that changed); word counts are dropped whenever the index changes, since one FTS query
per word (all of a prompt's at once) is cheaper than keeping them right. The daemon measures the
background at start-up, so the first prompt does not pay for embedding the generic prompts.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sidecar.core.relevance import BACKGROUND_PROMPTS, Background
from sidecar.store.chunk_search import term_chunks

if TYPE_CHECKING:
    from sidecar.services.context import Services

MAX_CACHED_WORDS = 4096


class Relevance:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._background: Background | None = None
        self._probes: tuple[str, np.ndarray] | None = None  # (model id, vectors)
        self._words: dict[str, WordHits] = {}
        self._version = -1

    def background(self, services: Services) -> Background:
        n = len(services.vectors)
        with self._lock:
            bg = self._background
            if bg is not None and abs(n - bg.vectors) <= bg.vectors / 10:
                return bg
        probes = self._probe_vectors(services)
        best = services.vectors.best(probes)
        bg = Background(float(best.mean()), float(best.std()), n)
        with self._lock:
            self._background = bg
        return bg

    def _probe_vectors(self, services: Services) -> np.ndarray:
        model = services.embedder.model_id
        with self._lock:
            if self._probes is not None and self._probes[0] == model:
                return self._probes[1]
        vectors = np.asarray(services.embedder.embed(list(BACKGROUND_PROMPTS)), np.float32)
        with self._lock:
            self._probes = (model, vectors)
        return vectors

    def word_notes(self, services: Services, words: Iterable[str]) -> dict[str, WordHits]:
        """Per word, how many chunks hold it and in which notes; ``notes`` is None when the
        word is in so many chunks (a twentieth) that it says nothing about a note."""
        cap = max(50, len(services.vectors) // 20)
        with services.state.lock:
            version = services.state.version
        with self._lock:
            if version != self._version or len(self._words) > MAX_CACHED_WORDS:
                self._words, self._version = {}, version
            known = dict(self._words)
        words = list(words)
        found = term_chunks(services.store, [w for w in words if w not in known], cap)
        for word, rows in found.items():
            if len(rows) >= cap:
                known[word] = WordHits(len(rows), None, None)
            else:
                chunks = frozenset(c for c, _ in rows)
                known[word] = WordHits(len(rows), frozenset(p for _, p in rows), chunks)
        out = {word: known[word] for word in words}
        with self._lock:
            if version == self._version:
                self._words.update(out)
        return out


@dataclass(frozen=True, slots=True)
class WordHits:
    count: int  # chunks holding the word (at most the cap)
    notes: frozenset[str] | None
    chunks: frozenset[str] | None

    def in_note(self, path: str) -> bool:
        return self.notes is None or path in self.notes
