"""The plain baseline of issue #27: chunk-level BM25 plus MiniLM dense, fused by RRF (k = 60).

A reference, written apart from the sidecar's own code so its changes cannot move it: each
note's body (frontmatter dropped) is split at headings, long sections at paragraphs (~1,000
characters); BM25 (k1 1.2, b 0.75) over lower-cased words; the shipped int8 MiniLM file run as
is (no requantisation, no title prefix); the 100 best chunks of each list fused by RRF, and a
note ranked by its best chunk.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np

from sidecar.embed.onnx import OnnxEmbedder

K = 60
DEPTH = 100
MAX_CHARS = 1000
_WORD = re.compile(r"\w+")
_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)


def chunks_of(text: str) -> list[str]:
    body = _FRONTMATTER.sub("", text)
    sections: list[str] = []
    for section in re.split(r"\n(?=#{1,6} )", body):
        piece = ""
        for para in section.split("\n\n"):
            if piece and len(piece) + len(para) > MAX_CHARS:
                sections.append(piece)
                piece = ""
            piece = f"{piece}\n\n{para}" if piece else para
        if piece.strip():
            sections.append(piece)
    return [s.strip() for s in sections if s.strip()]


class PlainBaseline:
    def __init__(
        self, root: Path, ids: dict[str, str] | None = None, cache: Path | None = None
    ) -> None:
        """``ids`` maps a note path to the id results are reported under (default: the path);
        ``cache``: a folder keeping the chunk vectors between runs (keyed by the texts)."""
        self.paths: list[str] = []
        texts: list[str] = []
        for f in sorted(root.rglob("*.md")):
            rel = f.relative_to(root).as_posix()
            if any(part.startswith(".") for part in rel.split("/")):
                continue
            for c in chunks_of(f.read_text("utf-8", errors="replace")):
                self.paths.append((ids or {}).get(rel, rel))
                texts.append(c)
        docs = [_WORD.findall(t.lower()) for t in texts]
        self.lengths = np.array([len(d) for d in docs], np.float32)
        self.avg = float(self.lengths.mean()) if docs else 0.0
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, d in enumerate(docs):
            for term, tf in Counter(d).items():
                self.postings.setdefault(term, []).append((i, tf))
        self.embedder = OnnxEmbedder(quantize="none")  # the shipped file, as is
        self.vectors = self._vectors(texts, cache)

    def _vectors(self, texts: list[str], cache: Path | None) -> np.ndarray:
        key = hashlib.sha1("\x00".join(texts).encode()).hexdigest()[:16]
        path = cache / f"baseline-{key}.npy" if cache else None
        if path is not None and path.is_file():
            return np.load(path)
        vectors = self.embedder.embed(texts) if texts else np.zeros((0, 384), np.float32)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, vectors)
        return vectors

    def bm25(self, query: str) -> np.ndarray:
        scores = np.zeros(len(self.paths), np.float32)
        n = len(self.paths)
        for term in set(_WORD.findall(query.lower())):
            posting = self.postings.get(term, [])
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for i, tf in posting:
                norm = tf + 1.2 * (1 - 0.75 + 0.75 * self.lengths[i] / self.avg)
                scores[i] += idf * tf * 2.2 / norm
        return scores

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        lexical = self.bm25(query)
        dense = self.vectors @ self.embedder.embed([query])[0]
        fused: dict[int, float] = {}
        for scores, keep in ((lexical, lexical > 0), (dense, np.ones_like(dense, bool))):
            order = [i for i in np.argsort(-scores)[:DEPTH] if keep[i]]
            for rank, i in enumerate(order, start=1):
                fused[int(i)] = fused.get(int(i), 0.0) + 1.0 / (K + rank)
        out: dict[str, float] = {}
        for i in sorted(fused, key=lambda i: -fused[i]):
            out.setdefault(self.paths[i], fused[i] * (K + 1) / 2)
        return list(out.items())[:limit]
