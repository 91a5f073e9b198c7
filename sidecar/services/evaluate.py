"""Retrieval evaluation: run every query in each mode, score the rankings, time the queries.

The search is passed in as a function, so the same code measures an in-process index built from
a BEIR corpus and a live vault served by the daemon.
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
        runs = []
        latencies = []
        top_scores: list[tuple[float, bool]] = []
        for q in queries:
            started = time.perf_counter()
            ranked = search(q.text, mode, depth)
            latencies.append((time.perf_counter() - started) * 1000)
            runs.append(([doc for doc, _ in ranked], q.gold))
            top_scores.append((ranked[0][1] if ranked else 0.0, bool(q.gold)))
            done += 1
            if progress is not None:
                progress(done, total)
        metrics: dict[str, Any] = summarise(runs)
        metrics["latency_ms"] = {
            "p50": round(statistics.median(latencies), 2),
            "p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 2),
        }
        metrics.update(_abstention(top_scores, abstain_below))
        out["modes"][mode] = metrics
    return out


def _abstention(top: list[tuple[float, bool]], floor: float) -> dict[str, Any]:
    """For queries whose gold is empty, the right answer is nothing: how often the top score
    falls under ``floor`` there, and how often a query with an answer would be wrongly dropped."""
    empty = [s for s, has_gold in top if not has_gold]
    answered = [s for s, has_gold in top if has_gold]
    if not empty:
        return {}
    return {
        "abstention": {
            "floor": floor,
            "empty_gold_queries": len(empty),
            "correctly_abstained": round(sum(s < floor for s in empty) / len(empty), 4),
            "wrongly_abstained": round(sum(s < floor for s in answered) / max(len(answered), 1), 4),
        }
    }
