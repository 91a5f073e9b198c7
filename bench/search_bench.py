"""Embedding throughput of a cold index and query latency per search mode.

    python bench/search_bench.py --vault ../shared/corpora/dendron-site/vault
    python bench/search_bench.py --generate 10000        # a bench/genvault.py vault

Indexes the vault cold into a temp dir with the real model, then: raw model throughput on a
sample of the same chunk texts (same process, warm model), the embedding stage's throughput
over every chunk, their ratio, and p50/p95 latency of 200 queries in each mode (the query's
own embedding included). Prints Markdown.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genvault import WORDS, generate
from machine import describe, pct

from sidecar.config import model_cache_dir
from sidecar.embed import load_embedder
from sidecar.services.context import Services
from sidecar.services.search import Query
from sidecar.store.chunk_search import texts_by_hash


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path)
    ap.add_argument("--generate", type=int, default=0)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = args.vault
        if vault is None:
            vault = Path(tmp) / "vault"
            generate(vault, args.generate)
        embedder = load_embedder("minilm", cache_dir=model_cache_dir(os.environ))
        s = Services.open(vault, Path(tmp) / "idx", embedder=embedder)
        t0 = time.perf_counter()
        report = s.reindex()
        parse_s = time.perf_counter() - t0
        texts = list(texts_by_hash(s.store, s.vectors.waiting(2000)).values())
        embedder.embed(texts[:64])  # load and warm the model
        t0 = time.perf_counter()
        for i in range(0, len(texts), 256):
            embedder.embed(texts[i : i + 256])
        raw = len(texts) / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        n = s.embed_stage.run()
        stage_s = time.perf_counter() - t0
        stage = n / stage_s
        rng = random.Random(3)
        queries = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
                   for _ in range(args.queries)]  # fmt: skip
        if args.vault is not None:
            titles = [note.title for note in s.state.notes.values()]
            queries = [rng.choice(titles) if i % 2 else q for i, q in enumerate(queries)]
        lat: dict[str, list[float]] = {}
        for mode in ("lexical", "semantic", "hybrid"):
            s.search.search(Query(queries[0], mode=mode))  # warm caches
            times = []
            for q in queries:
                t0 = time.perf_counter()
                s.search.search(Query(q, mode=mode))  # type: ignore[arg-type]
                times.append((time.perf_counter() - t0) * 1000)
            lat[mode] = times
        chunks = report.chunks
        s.close()
    name = args.vault.name if args.vault else f"generated {args.generate} notes"
    if args.vault is not None and args.vault.name == "vault":
        name = args.vault.parent.name
    print(f"Machine: {describe()}  ")
    print(f"Command: `python bench/search_bench.py {' '.join(sys.argv[1:])}`  ")
    print(f"Vault: {name}: {report.notes} notes, {chunks} chunks; model {embedder.model_id}\n")
    print("| measure | value |")
    print("|---|---|")
    print(f"| parse + write (no vectors) | {parse_s:.1f} s |")
    print(f"| raw model, {len(texts)} chunk texts | {raw:.1f} chunks/s |")
    print(f"| embedding stage, all {n} chunks | {stage:.1f} chunks/s ({stage_s:.0f} s) |")
    print(f"| stage / raw | {stage / raw:.2f} |")
    for mode, times in lat.items():
        print(f"| `{mode}` query, {len(times)} queries | p50 {statistics.median(times):.1f} ms, "
              f"p95 {pct(times, 0.95):.1f} ms |")  # fmt: skip


if __name__ == "__main__":
    main()
