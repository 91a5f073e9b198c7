"""Ranking math, pure: reciprocal rank fusion, score normalisation, time decay.

Reference constants from mdvdb (DESIGN §4): RRF k = 60, each list over-fetched 5x the limit,
a hybrid score divided by 2/(k+1) (the best possible: rank 1 in both lists) so it reads 0..1,
BM25 squashed as s/(s+1.5), semantic score = cosine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

RRF_K = 60
OVERFETCH = 5
# Hybrid fusion, tuned on the first half of the queries of scifact, hotpotqa-hipporag-100 and
# musique-hipporag-100 (maximise the smallest gain over the better single mode), reported on
# all of them in docs/benchmarks.md: a sharper k than the reference 60, the lexical list
# weighted a little under the semantic one, and notes named in the query as a third list.
HYBRID_K = 10
HYBRID_WEIGHTS = (0.9, 1.0, 0.7)  # lexical, semantic, notes named in the query


@dataclass(frozen=True, slots=True)
class Fused:
    key: str
    score: float  # normalised to 0..1
    ranks: tuple[int | None, ...]  # 1-based rank in each input list, None when absent


def rrf(
    lists: Sequence[Sequence[str]],
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    best: float | None = None,
) -> list[Fused]:
    """Fuse ranked lists of keys; ties keep the order of first appearance.

    Scores are divided by ``best`` (default: the score of a key ranked first in every list) and
    capped at 1.0, so 1.0 means "top of every list that counts".
    """
    w = list(weights) if weights is not None else [1.0] * len(lists)
    ranks: dict[str, list[int | None]] = {}
    for i, keys in enumerate(lists):
        for rank, key in enumerate(keys, start=1):
            slot = ranks.setdefault(key, [None] * len(lists))
            if slot[i] is None:
                slot[i] = rank
    top = best if best is not None else sum(w) / (k + 1)
    fused = [
        Fused(key, min(1.0, sum(wi / (k + r) for wi, r in zip(w, rs, strict=True) if r) / top),
              tuple(rs))
        for key, rs in ranks.items()
    ]  # fmt: skip
    fused.sort(key=lambda f: -f.score)
    return fused


def bm25_normalise(score: float) -> float:
    return score / (score + 1.5) if score > 0 else 0.0


def decay(age_days: float, half_life_days: float) -> float:
    """1.0 for a note touched now, 0.5 at one half-life, never below 0 or above 1."""
    if half_life_days <= 0 or age_days <= 0:
        return 1.0
    return math.pow(0.5, age_days / half_life_days)


# Confidence: whether a result answers the query at all, 0..1, from the two kinds of evidence a
# hybrid search has. Fused scores are ranks (the top result of an unanswerable query still scores
# near 1.0), so they cannot say "nothing here". The rule is recall's (services/recall.py): a
# cosine of 0.34 alone, or BM25 of 1.5 per query word alone (identifiers), or a weaker cosine
# (0.25) with a fair word match (1.0 per word), each counts as CONFIDENT.
CONFIDENT = 0.34
# The default floor with vectors: none yet. On the dev sets' tune halves (docs/benchmarks.md)
# a floor of CONFIDENT left 55 % of the no-answer queries with nothing and 4 % of the others
# (0.26: 45 % and 3 %; 0.40: 73 % and 12 %), but on by default it also drops the current
# note that the supersedes fade pulls in when its own evidence is weak; callers that want
# abstention pass min_confidence=CONFIDENT (recall's floor).
MIN_CONFIDENCE = 0.0


def confidence(cosine: float, bm25: float, terms: int) -> float:
    per_term = bm25 / max(terms, 1)
    lexical = CONFIDENT * per_term / 1.5
    support = CONFIDENT if cosine >= 0.25 and per_term >= 1.0 else 0.0
    return round(min(1.0, max(cosine, lexical, support, 0.0)), 4)


# Length prior: a note ranks by its best chunk, so a long catch-all note (a changelog, an index)
# gets many chances at every query that mentions its subjects. Its fused score is divided by
# 1 + LENGTH_PRIOR * ln(chunks); 0 turns it off. Chosen on the dev sets' tune halves.
LENGTH_PRIOR = 0.0


def length_prior(chunks: int, weight: float = LENGTH_PRIOR) -> float:
    return 1.0 / (1.0 + weight * math.log(max(chunks, 1)))
