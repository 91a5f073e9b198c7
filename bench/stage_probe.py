"""Where the embedding stage's time goes, beyond the model: ``EmbedStage.compute`` and
``commit`` taken apart, in one process, with the real model.

    MALLOC_ARENA_MAX=1 python bench/stage_probe.py VAULT DATA [--batches 4]

``DATA`` is an index of ``VAULT`` whose chunks wait for vectors (e.g. a copy of a store with
its ``lance/vectors.lance`` removed). Each batch of 256 waiting hashes: the queue
(``waiting``), the chunk texts (``texts_by_hash``), the model (``embed``; tokenising, timed
apart, is inside it), the append (``add_vectors``) and the vector index (``fill``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sidecar.daemon.heap import tune_allocators
from sidecar.embed import load_embedder
from sidecar.services.context import Services
from sidecar.store.chunk_search import texts_by_hash


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("data", type=Path)
    ap.add_argument("--batches", type=int, default=4)
    args = ap.parse_args()
    tune_allocators()
    embedder = load_embedder("minilm", cache_dir=Path.home() / ".cache" / "sidecar")
    s = Services.open(args.vault, args.data, embedder=embedder)
    spent = dict.fromkeys(["waiting", "texts", "model", "append", "fill", "tokenize"], 0.0)

    def timed(part: str, fn, *a):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        out = fn(*a)
        spent[part] += time.perf_counter() - t0
        return out

    try:
        embedder.embed(["load the model first"])
        tokenizer = embedder._load_tokenizer()  # type: ignore[attr-defined]
        done = 0
        for _ in range(args.batches):
            texts = timed("texts", texts_by_hash, s.store, timed("waiting", s.vectors.waiting, 256))
            if not texts:
                break
            hashes = list(texts)
            batch = [texts[h] for h in hashes]
            timed("tokenize", tokenizer.encode_batch, batch)
            vectors = timed("model", embedder.embed, batch)
            timed("append", s.store.add_vectors, embedder.model_id, hashes, vectors)
            done += timed("fill", s.vectors.fill, hashes, vectors)
    finally:
        s.close()
    stage = sum(v for k, v in spent.items() if k != "tokenize")
    print(f"{done} chunks: " + ", ".join(f"{k} {v:.2f} s" for k, v in spent.items()))
    print(f"beyond the model: {(stage - spent['model']) / stage:.1%} of the stage; "
          f"tokenising: {spent['tokenize'] / spent['model']:.1%} of the model's time")  # fmt: skip


if __name__ == "__main__":
    main()
