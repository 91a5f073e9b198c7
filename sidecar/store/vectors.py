"""Every chunk's content hash and vector, one matrix row per chunk, in RAM.

Semantic search is a brute-force cosine over the matrix: measured (DESIGN §9) at 4 ms for 50k
rows and 20 ms for 200k, against 65-95 ms at 50k for LanceDB's own brute force; and IVF
indexes need retraining as a vault changes. Rows are L2 normalised, so cosine is a dot product.
A row is held as int16 with its own scale (its largest component is 32767): half of float32,
and scored a block of rows at a time in float32 (numpy has no fast float16 arithmetic; int8
changed a real recall test's first answer).

A vector belongs to the text it was computed from (its content hash), so it cannot go stale:
a chunk whose hash has no vector yet waits for one, and the hashes waited for, newest first,
are the embedding stage's queue. The queue is the rows themselves (no vector, a hash, the
order they began to wait in), not a Python object per hash: a cold start's backlog is every
chunk, and that many small objects freed one batch at a time, among allocations that stay,
leave the allocator's arenas pinned. A removed note's rows become holes the next chunks reuse.
Each row also keeps its chunk's lines, so that a save's writer knows what the chunks table
holds for the note without reading it (``IndexStore.put_chunks``).
"""

from __future__ import annotations

import itertools
import mmap
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from sidecar.core.chunks import PROPERTIES_ID
from sidecar.core.model import ChunkKey

Vectors = NDArray[np.float32]
HASH = "S40"  # a chunk's content hash: sha1 in hex (``sidecar.core.chunks``), 40 bytes a row
BLOCK = 512  # rows scored at a time: 768 KiB of float32 at 384 dimensions, kept in cache
# A search among fewer notes than a 32nd of the rows scores only their rows: most notes have a
# few chunks, so that is at most a few thousand rows, a small part of a full pass.
SUBSET_NOTES = 32


class VectorIndex:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        # per row: the vector, whether it is known, the chunk's hash, note and seq (its id is
        # "path#seq"); no Python string per row (the paths are each note's)
        self._matrix: NDArray[np.int16] = _zeros(0, self.dim)
        self._scale: Vectors = np.zeros(0, np.float32)
        self._alive: NDArray[np.bool_] = np.zeros(0, bool)
        self._seq: NDArray[np.int32] = np.zeros(0, np.int32)
        self._lines: NDArray[np.int32] = np.zeros((0, 2), np.int32)  # start and end line
        self._named: NDArray[np.bool_] = np.zeros(0, bool)  # the note's properties' chunk
        self._hash: NDArray[np.bytes_] = np.zeros(0, HASH)
        self._path: list[str] = []
        self._free: list[int] = []
        self._rows: dict[str, Sequence[int]] = {}  # note -> its chunks' rows, by seq
        # a row waits for its vector when it has a hash and no vector; ``_since`` orders them
        self._since: NDArray[np.int64] = np.zeros(0, np.int64)
        self._clock = 0  # the ``_since`` of the next row to wait

    def __len__(self) -> int:
        """Chunks with a vector."""
        with self._lock:
            return int(np.count_nonzero(self._alive[: len(self._path)]))

    @property
    def pending(self) -> int:
        """Chunks waiting for a vector."""
        with self._lock:
            return len(self._waiting_rows())

    @property
    def nbytes(self) -> int:
        """Bytes the matrix holds, spare rows included."""
        return int(self._matrix.nbytes + self._scale.nbytes)

    # -- what the store holds -----------------------------------------------------------------

    def load(
        self,
        chunks: pa.Table,
        vectors: Iterable[tuple[pa.Array, Vectors]],
        same: Callable[[str], str] = str,
    ) -> None:
        """Every chunk (``path``, ``seq``, ``content_hash``, ``start_line``, ``end_line``),
        then the model's stored vectors in batches (hashes, matrix), joined by hash in Arrow;
        chunks without one wait. ``same(path)``: an equal string already held, to keep."""
        chunks = chunks.sort_by([("path", "ascending"), ("seq", "ascending")])
        hashes = chunks["content_hash"].combine_chunks()
        n = len(hashes)
        with self._lock:
            self._reset()
            self._reserve(n)
            self._hash[:n] = hashes.to_numpy(zero_copy_only=False)
            self._seq[:n] = chunks["seq"].to_numpy()
            self._lines[:n, 0] = chunks["start_line"].to_numpy()
            self._lines[:n, 1] = chunks["end_line"].to_numpy()
            named = pc.ends_with(chunks["chunk_id"].combine_chunks(), "#" + PROPERTIES_ID)
            self._named[:n] = named.to_numpy(zero_copy_only=False)
            # one string per note, not per chunk: the paths dictionary-encoded; each note's rows
            # are a run (sorted by path), kept as a range until the note changes
            paths = pc.dictionary_encode(chunks["path"].combine_chunks())
            names = [same(name) for name in paths.dictionary.to_pylist()]
            index = paths.indices.to_numpy()
            bounds = [*np.flatnonzero(np.diff(index, prepend=-1)).tolist(), n]
            for start, end in itertools.pairwise(bounds):
                self._rows[names[index[start]]] = range(start, end)
            self._path = [names[i] for i in index.tolist()]
            del chunks, paths, index
            for stored, batch in vectors:
                at = pc.index_in(hashes, value_set=stored)  # each row's vector in this batch
                found = np.flatnonzero(at.is_valid().to_numpy(zero_copy_only=False))
                self._put(found, batch[at.drop_null().to_numpy()])
                self._alive[found] = True
            self._wait(np.flatnonzero(~self._alive[:n]))

    # -- changes ------------------------------------------------------------------------------

    def replace(
        self,
        notes: Mapping[str, Sequence[str]],
        gone: Iterable[str] = (),
        named: Collection[str] = (),
        lines: Mapping[str, Sequence[tuple[int, int]]] | None = None,
    ) -> list[str]:
        """These notes now have chunks with these hashes (by seq); ``gone`` notes have none;
        the last chunk of each ``named`` note is its properties' chunk (``path#properties``);
        ``lines``: each chunk's start and end line, by seq (-1 where not given).
        A hash one of their old chunks had keeps its vector (an edit that leaves a chunk as
        it was, a move to another folder). Returns the hashes these notes now wait for, for the
        caller to look up in the store before they are embedded (a copied note, text an undo
        restored)."""
        with self._lock:
            kept: dict[str, tuple[NDArray[np.int16], np.float32]] = {}
            for path in [*notes, *gone]:
                for row in self._rows.pop(path, ()):
                    if self._alive[row]:
                        kept.setdefault(self._hash[row].decode(),
                                        (self._matrix[row].copy(), self._scale[row]))  # fmt: skip
                    self._alive[row] = False
                    self._hash[row], self._path[row] = b"", ""
                    self._free.append(row)
            self._reserve(len(self._path) - len(self._free) + sum(map(len, notes.values())))
            fresh: dict[str, None] = {}
            waits: list[int] = []
            for path, hashes in notes.items():
                rows: list[int] = []
                self._rows[path] = rows
                last = len(hashes) - 1 if path in named else -1
                spans = (lines or {}).get(path, ())
                for seq, h in enumerate(hashes):
                    row = self._free.pop() if self._free else self._append()
                    self._hash[row], self._path[row], self._seq[row] = h, path, seq
                    self._lines[row] = spans[seq] if seq < len(spans) else (-1, -1)
                    self._named[row] = seq == last
                    rows.append(row)
                    same = kept.get(h)
                    if same is not None:
                        self._matrix[row], self._scale[row] = same
                        self._alive[row] = True
                        continue
                    fresh[h] = None
                    waits.append(row)
            self._wait(np.array(waits, np.intp))
            return list(fresh)

    def fill(self, hashes: Sequence[str], vectors: Vectors) -> int:
        """Vectors for these hashes: every chunk waiting for one gets it. Returns how many
        chunks got one."""
        if len(hashes) == 0:
            return 0
        with self._lock:
            rows = self._waiting_rows()
            given = np.array(hashes, HASH)
            order = np.argsort(given)
            at = np.minimum(np.searchsorted(given, self._hash[rows], sorter=order), len(given) - 1)
            found = given[order[at]] == self._hash[rows]
            rows, at = rows[found], order[at[found]]
            self._put(rows, np.asarray(vectors, np.float32)[at])
            self._alive[rows] = True
            return len(rows)

    def chunk_keys(self, paths: Iterable[str]) -> dict[str, list[ChunkKey]]:
        """These notes' chunks as the chunks table holds them, as the last write of each gave
        them: id (``path#seq``, ``path#properties`` for the properties' chunk), content hash,
        start and end line, seq."""
        with self._lock:
            return {p: [(self._chunk_id(r), self._hash[r].decode(), int(self._lines[r, 0]),
                         int(self._lines[r, 1]), int(self._seq[r])) for r in self._rows.get(p, ())]
                    for p in paths}  # fmt: skip

    def waiting(self, limit: int) -> list[str]:
        """Up to ``limit`` hashes waiting for a vector, the newest first (a save's chunks go
        before a backlog's)."""
        with self._lock:
            rows = self._waiting_rows()
            newest: dict[bytes, None] = {}
            for h in self._hash[rows[np.argsort(-self._since[rows])]]:  # one hash, many rows
                newest[h] = None
                if len(newest) == limit:
                    break
            return [h.decode() for h in newest]

    def _waiting_rows(self) -> NDArray[np.intp]:
        rows = np.flatnonzero(~self._alive[: len(self._path)])
        waiting: NDArray[np.intp] = rows[self._hash[rows] != b""]  # not a hole
        return waiting

    def _wait(self, rows: NDArray[np.intp]) -> None:
        """These rows (with a hash, no vector) now wait, the last of them the newest."""
        self._since[rows] = np.arange(self._clock, self._clock + len(rows))
        self._clock += len(rows)

    def _append(self) -> int:
        row = len(self._path)
        self._reserve(row + 1)
        self._path.append("")
        return row

    def _reserve(self, rows: int) -> None:
        """Room for ``rows`` rows, grown by a quarter beyond that, not doubled: at 223k chunks
        of 384 floats the matrix is 343 MB, and doubling left up to half of it unused."""
        have = self._matrix.shape[0]
        if rows <= have:
            return
        capacity = max(rows, 1024, have + have // 4)
        n = len(self._path)
        matrix = _zeros(capacity, self.dim)
        matrix[:n] = self._matrix[:n]
        scale = np.zeros(capacity, np.float32)
        scale[:n] = self._scale[:n]
        hashes = np.zeros(capacity, HASH)
        hashes[:n] = self._hash[:n]
        alive = np.zeros(capacity, bool)
        alive[:n] = self._alive[:n]
        seq = np.zeros(capacity, np.int32)
        seq[:n] = self._seq[:n]
        lines = np.zeros((capacity, 2), np.int32)
        lines[:n] = self._lines[:n]
        named = np.zeros(capacity, bool)
        named[:n] = self._named[:n]
        since = np.zeros(capacity, np.int64)
        since[:n] = self._since[:n]
        self._matrix, self._scale, self._hash, self._alive = matrix, scale, hashes, alive
        self._seq, self._named, self._lines, self._since = seq, named, lines, since

    def _put(self, rows: NDArray[np.intp] | list[int], vectors: Vectors) -> None:
        """Store these rows' vectors (one per row, or one for all), each scaled to int16."""
        vectors = np.atleast_2d(np.asarray(vectors, np.float32))
        scale = np.maximum(np.abs(vectors).max(axis=1), 1e-30) / 32767
        self._matrix[rows] = np.rint(vectors / scale[:, None]).astype(np.int16)
        self._scale[rows] = scale

    def _vectors(self, rows: NDArray[np.intp] | list[int]) -> Vectors:
        return self._matrix[rows].astype(np.float32) * self._scale[rows, None]

    def _scores(self, queries: Vectors, n: int) -> Vectors:
        """Cosines of rows ``[:n]`` with each column of ``queries`` (dim, k)."""
        out = np.empty((n, queries.shape[1]), np.float32)
        block = np.empty((BLOCK, self.dim), np.float32)
        for start in range(0, n, BLOCK):
            rows = self._matrix[start : min(n, start + BLOCK)]
            np.copyto(block[: len(rows)], rows)
            np.dot(block[: len(rows)], queries, out=out[start : start + len(rows)])
        return out * self._scale[:n, None]

    # -- reads --------------------------------------------------------------------------------

    def of_notes(self, paths: Iterable[str]) -> Iterator[tuple[str, int, Vectors]]:
        """(path, seq, vector) of every chunk of these notes that has one."""
        with self._lock:
            found = [(p, seq, self._vectors([row])[0]) for p in paths
                     for seq, row in enumerate(self._rows.get(p, ())) if self._alive[row]]  # fmt: skip
        yield from found

    def best_of(self, query: Vectors, paths: Iterable[str]) -> dict[str, float]:
        """Each note's best cosine to ``query`` over its chunks (notes without vectors left out):
        the semantic evidence for a result that the lexical leg alone found."""
        with self._lock:
            out = {}
            for path in paths:
                rows = [r for r in self._rows.get(path, ()) if self._alive[r]]
                if rows:
                    out[path] = float(np.max(self._vectors(rows) @ query.astype(np.float32)))
            return out

    def search(
        self, query: Vectors, k: int, allowed: set[str] | None = None
    ) -> list[tuple[str, str, float]]:
        """Top ``k`` (chunk_id, path, cosine), optionally only among notes in ``allowed``."""
        with self._lock:
            n = len(self._path)
            if n == 0 or k <= 0:
                return []
            if allowed is not None and len(allowed) * SUBSET_NOTES < n:
                return self._search_rows(query, k, allowed)
            scores = self._scores(query.astype(np.float32)[:, None], n)[:, 0]
            mask = self._alive[:n].copy()
            if allowed is not None:
                keep = np.zeros(n, bool)
                keep[np.array([r for p in allowed for r in self._rows.get(p, ())], np.intp)] = True
                mask &= keep
            scores = np.where(mask, scores, -np.inf)
            k = min(k, int(mask.sum()))
            if k == 0:
                return []
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top])]
            return [(self._chunk_id(i), self._path[i], float(scores[i])) for i in top]

    def _search_rows(
        self, query: Vectors, k: int, allowed: set[str]
    ) -> list[tuple[str, str, float]]:
        """``search`` among a few notes: their rows alone are scored, not the whole matrix
        (a hybrid query pulling in the notes that replace its stale hits, a path filter)."""
        rows = np.array([r for p in allowed for r in self._rows.get(p, ()) if self._alive[r]],
                        np.intp)  # fmt: skip
        if len(rows) == 0:
            return []
        scores = self._vectors(rows) @ query.astype(np.float32)
        order = np.argsort(-scores, kind="stable")[:k]
        return [
            (self._chunk_id(int(rows[i])), self._path[rows[i]], float(scores[i])) for i in order
        ]

    def _chunk_id(self, row: int) -> str:
        """As ``sidecar.core.chunks`` names chunks: ``path#seq``, the properties' ``path#properties``."""
        return f"{self._path[row]}#{PROPERTIES_ID if self._named[row] else self._seq[row]}"

    def best(self, queries: Vectors) -> Vectors:
        """Each query's highest cosine over every row (-1 when there are none). A few queries
        at a time: a score matrix for all of them at 200k rows would be tens of MB."""
        out = np.full(len(queries), -1.0, np.float32)
        with self._lock:
            n = len(self._path)
            dead = ~self._alive[:n]
            if n == 0 or dead.all():
                return out
            for start in range(0, len(queries), 8):
                scores = self._scores(queries[start : start + 8].astype(np.float32).T, n)
                scores[dead] = -1.0
                out[start : start + 8] = scores.max(axis=0)
        return out


def _zeros(rows: int, dim: int) -> NDArray[np.int16]:
    """A zeroed matrix in an anonymous mapping of its own. numpy's zeros come from glibc's heap
    once freed blocks have raised its mmap threshold (a cold index frees many), and there a
    fresh matrix is written zero and resident at once, and stays when freed; in its own
    mapping its pages are resident only once written, and are unmapped with it."""
    buffer = mmap.mmap(-1, max(1, rows * dim * 2), flags=mmap.MAP_PRIVATE)
    return np.frombuffer(buffer, np.int16, rows * dim).reshape(rows, dim)
