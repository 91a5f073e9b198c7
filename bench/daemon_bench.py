"""The daemon as users meet it: save-to-searchable, RPC round trip, idle CPU, resident memory.

    python bench/daemon_bench.py --vault ../shared/corpora/dendron-site/vault
    python bench/daemon_bench.py --generate 10000

Copies (or generates) the vault, starts ``sidecar serve`` with the real model, waits until the
start-up index and all embeddings are done, then: 40 saves of a new unique word into a note,
each timed from the file write to ``index.changed`` and to the first ``search`` (hybrid, over
the socket) that finds the word; 2,000 ``note.backlinks`` round trips; once the compaction
after the saves has run (``daemon.compact_idle_seconds`` after the last write), CPU time used
over 60 s of idling, and VmRSS. Prints Markdown.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from genvault import generate
from machine import describe, pct
from scale import SETTLED, proc_stat, wait_settled

from tests.daemon_harness import daemon_env, start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path)
    ap.add_argument("--generate", type=int, default=0)
    ap.add_argument("--saves", type=int, default=40)
    ap.add_argument("--idle", type=float, default=60)
    args = ap.parse_args()
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="scb"))
    vault = state / "vault"
    if args.vault:
        shutil.copytree(args.vault, vault)
    else:
        generate(vault, args.generate)
    env = daemon_env(state, debounce_ms=300, model="minilm")
    env["XDG_CACHE_HOME"] = str(Path.home() / ".cache")  # reuse the requantised model
    t0 = time.perf_counter()
    d = start(vault, env, wait=3600)
    ready = time.perf_counter() - t0
    try:
        with d.client(timeout=None) as c:
            c.call("index.reindex", {"embed": True})  # waits for every vector
            embedded = time.perf_counter() - t0
            status = c.call("index.status")
            notes = sorted(n["path"] for n in c.call("graph.export")["nodes"])
            rng = random.Random(5)
            settled = d.log_text().count(SETTLED)
            seen, found = [], []
            with d.client() as sub:
                events = sub.subscribe(["index.changed"], timeout=30)
                for i in range(args.saves):
                    rel = rng.choice(notes)
                    word = f"zqx{i}unique{rng.randint(0, 10**6)}"
                    path = vault / rel
                    started = time.perf_counter()
                    with path.open("a", encoding="utf-8") as fh:
                        fh.write(f"\n{word} appended for the benchmark\n")
                    for _name, params in events:
                        if rel in params["paths"]:
                            break
                    seen.append((time.perf_counter() - started) * 1000)
                    while not c.call("search", {"query": word, "limit": 1})["results"]:
                        time.sleep(0.005)
                    found.append((time.perf_counter() - started) * 1000)
                    time.sleep(0.4)
            rtt = []
            for i in range(2000):
                t = time.perf_counter()
                c.call("note.backlinks", {"note": notes[i % len(notes)]})
                rtt.append((time.perf_counter() - t) * 1000)
        settle = wait_settled(d, settled)
        time.sleep(5)
        cpu0, _ = proc_stat(d.proc.pid)
        time.sleep(args.idle)
        cpu1, rss = proc_stat(d.proc.pid)
    finally:
        d.stop()
        shutil.rmtree(state, ignore_errors=True)
    name = args.vault.parent.name if args.vault else f"generated {args.generate} notes"
    print(f"Machine: {describe()}  ")
    print(f"Command: `python bench/daemon_bench.py {' '.join(sys.argv[1:])}`  ")
    print(f"Vault: {name}: {status['notes']} notes, {status['chunks']} chunks, debounce 300 ms\n")
    print("| measure | value |")
    print("|---|---|")
    print(f"| start to serving (cold index) | {ready:.1f} s |")
    print(f"| start to every chunk embedded | {embedded:.0f} s |")
    print(f"| save -> `index.changed` ({len(seen)} saves) | p50 {statistics.median(seen):.0f} ms, "
          f"p95 {pct(seen, 0.95):.0f} ms |")  # fmt: skip
    print(f"| save -> found by `search` over the socket | p50 {statistics.median(found):.0f} ms, "
          f"p95 {pct(found, 0.95):.0f} ms |")  # fmt: skip
    print(f"| `note.backlinks` round trip (2,000 calls) | p50 {statistics.median(rtt):.2f} ms, "
          f"p95 {pct(rtt, 0.95):.2f} ms |")  # fmt: skip
    print(
        f"| idle CPU over {args.idle:.0f} s, from {settle + 5:.0f} s after the backlinks calls "
        f"(the compaction after the saves had run) | {100 * (cpu1 - cpu0) / args.idle:.2f} % |"
    )
    print(f"| resident memory (VmRSS) | {rss / 1024:.0f} MiB |")


if __name__ == "__main__":
    main()
