"""Retrieval metrics over ranked document ids: nDCG@k, Recall@k, MRR (BEIR's definitions)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at(ranked: Sequence[str], gold: Mapping[str, int], k: int = 10) -> float:
    """Graded gains (the qrels score), log2 discount, normalised by the ideal ranking."""
    dcg = sum(gold.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(gold.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: Sequence[str], gold: Mapping[str, int], k: int) -> float:
    relevant = {d for d, g in gold.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(ranked[:k])) / len(relevant)


def mrr(ranked: Sequence[str], gold: Mapping[str, int], k: int = 100) -> float:
    for i, doc in enumerate(ranked[:k]):
        if gold.get(doc, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def summarise(runs: Sequence[tuple[Sequence[str], Mapping[str, int]]]) -> dict[str, float]:
    """Mean of each metric over queries that have gold documents."""
    scored = [(r, g) for r, g in runs if any(v > 0 for v in g.values())]
    if not scored:
        return {"queries": 0}
    n = len(scored)
    return {
        "queries": n,
        "ndcg@10": round(sum(ndcg_at(r, g, 10) for r, g in scored) / n, 4),
        "recall@5": round(sum(recall_at(r, g, 5) for r, g in scored) / n, 4),
        "recall@10": round(sum(recall_at(r, g, 10) for r, g in scored) / n, 4),
        "mrr": round(sum(mrr(r, g) for r, g in scored) / n, 4),
    }
