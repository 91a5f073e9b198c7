"""Group semantic edges into kinds of relationship: k-means on their vectors, TF-IDF labels.

Nobody types most links; the paragraph around a link says why it is there ("depends on",
"replaced by", "see also"). Clustering those paragraphs' vectors finds the kinds a vault
actually uses, and the words that set each cluster apart from the others name it. Deterministic
(k-means++ from a fixed seed) so a label does not change between two identical runs.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

MIN_EDGES = 4
MAX_K = 20
ITERATIONS = 25
KEYWORDS = 3

_WORD = re.compile(r"[^\W\d_][\w'-]{2,}", re.UNICODE)
STOPWORDS = frozenset((
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "has", "him", "his", "how", "its", "may", "new", "now", "old", "see",
    "two", "way", "who", "did", "get", "let", "put", "say", "she", "too", "use", "that", "with",
    "this", "from", "they", "will", "have", "were", "been", "than", "then", "them", "when",
    "what", "which", "your", "into", "also", "more", "most", "some", "such", "only", "over",
    "very", "just", "like", "about", "after", "before", "other", "these", "those", "there",
    "their", "where", "while", "would", "could", "should", "each", "because", "through",
    "between", "during", "under", "again", "further", "here", "same", "both", "being", "does",
    "doing", "having", "itself", "myself", "once", "off", "own", "few", "nor", "ours", "yours",
    "why", "whom",
))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Clusters:
    assignment: tuple[int, ...]  # cluster of each input row
    labels: tuple[str, ...]  # per cluster: "word / word / word"
    keywords: tuple[tuple[str, ...], ...]
    sizes: tuple[int, ...]


def choose_k(n: int) -> int:
    """mdvdb's rule for edges: sqrt(n/2), at least 2, at most 20."""
    return max(2, min(MAX_K, round(math.sqrt(n / 2))))


def kmeans(x: NDArray[np.float32], k: int, seed: int = 0) -> NDArray[np.int64]:
    """Lloyd's k-means with k-means++ seeding on unit rows (cosine = dot)."""
    rng = np.random.default_rng(seed)
    centres = [x[int(rng.integers(len(x)))]]
    for _ in range(1, k):
        d = np.min(1.0 - x @ np.stack(centres).T, axis=1).clip(min=0)
        total = float(d.sum())
        pick = int(rng.choice(len(x), p=d / total)) if total > 0 else int(rng.integers(len(x)))
        centres.append(x[pick])
    c = np.stack(centres)
    assign = np.zeros(len(x), np.int64)
    for step in range(ITERATIONS):
        new = np.argmax(x @ c.T, axis=1)
        if step and np.array_equal(new, assign):
            break
        assign = new
        for j in range(k):
            members = x[assign == j]
            if len(members):
                mean = members.mean(axis=0)
                c[j] = mean / max(float(np.linalg.norm(mean)), 1e-12)
    return assign


def words(text: str) -> list[str]:
    return [w for w in (m.lower().strip("'-") for m in _WORD.findall(text)) if w not in STOPWORDS]


def tfidf_labels(docs: Sequence[str], top: int = KEYWORDS) -> list[tuple[str, ...]]:
    """The words most particular to each document among these documents (one per cluster)."""
    counts = [Counter(words(d)) for d in docs]
    df = Counter(w for c in counts for w in c)
    n = len(docs)
    out = []
    for c in counts:
        total = sum(c.values()) or 1
        score = {w: (f / total) * (math.log((1 + n) / (1 + df[w])) + 1) for w, f in c.items()}
        out.append(tuple(sorted(score, key=lambda w: (-score[w], w))[:top]))
    return out


def cluster_edges(vectors: NDArray[np.float32], contexts: Sequence[str]) -> Clusters | None:
    """None below ``MIN_EDGES``: two or three edges do not make kinds."""
    n = len(contexts)
    if n < MIN_EDGES:
        return None
    k = min(choose_k(n), n)
    assign = kmeans(np.asarray(vectors, np.float32), k)
    used = sorted(set(assign.tolist()))
    renumber = {old: new for new, old in enumerate(used)}
    final = tuple(renumber[a] for a in assign.tolist())
    docs = [" ".join(contexts[i] for i in range(n) if final[i] == j) for j in range(len(used))]
    keywords = tfidf_labels(docs)
    labels = tuple(" / ".join(kw) if kw else f"cluster {j}" for j, kw in enumerate(keywords))
    sizes = tuple(final.count(j) for j in range(len(used)))
    return Clusters(final, labels, tuple(keywords), sizes)
