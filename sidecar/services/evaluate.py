"""Retrieval evaluation: run every query in each mode, score the rankings, time the queries.

The search is passed in as a function, so the same code measures an in-process index built from
a BEIR corpus and a live vault served by the daemon. Queries that carry a stratum (the vault dev
sets) are also scored per stratum, and each query whose first gold document is not ranked first
is listed in ``misses`` with what took first place instead.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from sidecar.core.metrics import summarise
from sidecar.store.beir import EvalQuery

# (query text, mode, limit) -> ranked (document id, score) pairs
SearchFn = Callable[[str, str, int], list[tuple[str, float]]]


def evaluate(
    search: SearchFn,
    queries: Sequence[EvalQuery],
    modes: Sequence[str],
    *,
    depth: int = 20,
    abstain_below: float = 0.0,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"queries": len(queries), "modes": {}}
    total = len(queries) * len(modes)
    done = 0
    for mode in modes:
        rankings: list[list[tuple[str, float]]] = []
        latencies = []
        for q in queries:
            started = time.perf_counter()
            rankings.append(search(q.text, mode, depth))
            latencies.append((time.perf_counter() - started) * 1000)
            done += 1
            if progress is not None:
                progress(done, total)
        metrics = score(queries, rankings, abstain_below)
        metrics["latency_ms"] = {
            "p50": round(statistics.median(latencies), 2),
            "p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 2),
        }
        out["modes"][mode] = metrics
    return out


def score(
    queries: Sequence[EvalQuery], rankings: Sequence[list[tuple[str, float]]], floor: float = 0.0
) -> dict[str, Any]:
    """Metrics over all queries, per stratum when the queries have one, and the misses."""
    runs = [
        ([doc for doc, _ in ranked], q.gold) for q, ranked in zip(queries, rankings, strict=True)
    ]
    metrics: dict[str, Any] = summarise(runs)
    metrics.update(_abstention(queries, rankings, floor))
    strata = sorted({q.stratum for q in queries if q.stratum})
    if strata:
        metrics["strata"] = {
            s: {**summarise([r for r, q in zip(runs, queries, strict=True) if q.stratum == s]),
                **_abstention(*_only(s, queries, rankings), floor)}
            for s in strata
        }  # fmt: skip
        metrics["misses"] = _misses(queries, rankings)
    return metrics


def _only(
    stratum: str, queries: Sequence[EvalQuery], rankings: Sequence[list[tuple[str, float]]]
) -> tuple[list[EvalQuery], list[list[tuple[str, float]]]]:
    pairs = [(q, r) for q, r in zip(queries, rankings, strict=True) if q.stratum == stratum]
    return [q for q, _ in pairs], [r for _, r in pairs]


def _misses(
    queries: Sequence[EvalQuery], rankings: Sequence[list[tuple[str, float]]]
) -> list[dict[str, Any]]:
    """Queries whose answer is not first (or, with no answer, that returned anything)."""
    out = []
    for q, ranked in zip(queries, rankings, strict=True):
        docs = [d for d, _ in ranked]
        ranks = [docs.index(g) + 1 for g in q.gold if g in docs]
        if (q.gold and min(ranks, default=0) == 1) or (not q.gold and not docs):
            continue
        out.append({
            "id": q.qid, "query": q.text, "stratum": q.stratum, "gold": sorted(q.gold),
            "gold_rank": min(ranks, default=None),
            "first": docs[0] if docs else None,
            "first_score": ranked[0][1] if ranked else None,
        })  # fmt: skip
    return out


def _abstention(
    queries: Sequence[EvalQuery], rankings: Sequence[list[tuple[str, float]]], floor: float
) -> dict[str, Any]:
    """For queries whose gold is empty the right answer is nothing: how often the search gave
    nothing (no result, or a top score under ``floor``), and how often a query with an answer
    was wrongly left with nothing."""
    top = [(r[0][1] if r else None, bool(q.gold)) for q, r in zip(queries, rankings, strict=True)]
    empty = [s for s, has_gold in top if not has_gold]
    answered = [s for s, has_gold in top if has_gold]
    if not empty:
        return {}

    def abstains(s: float | None) -> bool:
        return s is None or s < floor

    return {
        "abstention": {
            "floor": floor,
            "empty_gold_queries": len(empty),
            "correctly_abstained": round(sum(map(abstains, empty)) / len(empty), 4),
            "wrongly_abstained": round(sum(map(abstains, answered)) / max(len(answered), 1), 4),
        }
    }
