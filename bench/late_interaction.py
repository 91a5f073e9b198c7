"""Late interaction over our own embedder's token vectors, as a reranker of the hybrid top 20:
``python bench/late_interaction.py DUMP_DIR [set ...]``, where DUMP_DIR is what
``vault_eval.py --modes hybrid --dump DUMP_DIR`` wrote (each query's top 20 chunks with text).

MaxSim as ColBERT scores: the mean over the query's tokens of the best cosine with any token of
the chunk (``title > heading`` line included, as it is embedded), from MiniLM's last hidden layer
([CLS] and [SEP] dropped). Printed: R@5 / MRR of the hybrid order, of MaxSim alone, and of the
two fused by RRF (k 10).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sidecar.config import model_cache_dir
from sidecar.core.chunks import embedding_input
from sidecar.embed.onnx import OnnxEmbedder, _truncate

K = 10


class TokenVectors:
    def __init__(self) -> None:
        self.model = OnnxEmbedder(cache_dir=model_cache_dir(os.environ))
        self.session = self.model._load_session()
        self.tokenizer = self.model._load_tokenizer()
        self.cache: dict[str, np.ndarray] = {}

    def __call__(self, text: str) -> np.ndarray:
        if text not in self.cache:
            e = self.tokenizer.encode(text)
            ids = np.array([_truncate(e.ids, e.special_tokens_mask, 256)], np.int64)
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in self.model._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            (hidden,) = self.session.run([self.model._output], feeds)
            h = np.asarray(hidden[0][1:-1], np.float32)
            self.cache[text] = h / np.linalg.norm(h, axis=1, keepdims=True)
        return self.cache[text]


def first_rank(ranked: list[str], gold: set[str]) -> tuple[float, float]:
    rr = next((1 / (i + 1) for i, p in enumerate(ranked) if p in gold), 0.0)
    return rr, len(set(ranked[:5]) & gold) / len(gold)


def main() -> None:
    dump, names = Path(sys.argv[1]), sys.argv[2:] or ["dendron-site", "obsidian-tasks-docs"]
    tokens = TokenVectors()
    for name in names:
        queries: list[dict[str, Any]] = json.loads((dump / f"{name}.json").read_text("utf-8"))
        scores: dict[str, list[tuple[float, float]]] = {"hybrid": [], "maxsim": [], "fused": []}
        started = time.perf_counter()
        for q in queries:
            gold = set(q["gold"])
            if not gold:
                continue
            res = q["results"]
            hybrid = [r["id"] for r in res]
            qt = tokens(q["query"])
            sim = []
            for r in res:
                title = r["id"].rsplit("/", 1)[-1].removesuffix(".md")
                dt = tokens(embedding_input(title, r["heading"], r["text"]))
                sim.append(float((qt @ dt.T).max(axis=1).mean()))
            maxsim = [hybrid[i] for i in np.argsort(-np.array(sim), kind="stable")]
            at = {p: i for i, p in enumerate(maxsim)}
            fused = sorted(
                hybrid, key=lambda p: -(1 / (K + hybrid.index(p) + 1) + 1 / (K + at[p] + 1))
            )
            for key, ranked in (("hybrid", hybrid), ("maxsim", maxsim), ("fused", fused)):
                scores[key].append(first_rank(ranked, gold))
        per_query = (time.perf_counter() - started) / max(len(queries), 1)
        cells = " | ".join(
            f"{np.mean([r for _, r in v]):.3f} / {np.mean([m for m, _ in v]):.3f}"
            for v in scores.values()
        )
        print(f"| {name} ({len(scores['hybrid'])}) | {cells} | {per_query:.2f} s/query |")


if __name__ == "__main__":
    main()
