"""Resident memory after a restart: two or more checkouts, alternating, on one kept store.

    python bench/restart_rss.py STATE --code BEFORE_DIR --code AFTER_DIR [--rounds 2]
        [--env SIDECAR_EMBED_MODEL=tiny:384] [--out bench/results/restart-rss.json]

``STATE`` holds a vault (``vault/``) and its index (``data/``), e.g. a ``bench/scale.py --keep``
state. Each round starts each checkout's daemon (its own ``.venv``) on that store in turn and
measures it as ``scale.py`` measures a restart: the time until it serves, then 50 hybrid
queries, then its memory. Then 200 ``note.backlinks`` and 200 hybrid queries are timed. A first,
unrecorded start lets the store reach the layout of the last checkout (a conversion, a
reconcile) before any is measured. A 100k-note ``scale.py`` run takes over half an hour a side;
this takes a few minutes for the restart figures alone.

The daemon's model is the test harness's default, the tiny hashing embedder at 64 dimensions,
unless ``--env SIDECAR_EMBED_MODEL=...`` says otherwise: on a store of 384-d vectors that
daemon drops them. For the real model pass ``--env SIDECAR_EMBED_MODEL=minilm`` (on a store
``bench/relabel_vectors.py`` prepared, its vectors are all found). ``--stages`` also records the
memory once the daemon serves and after 50 lexical queries, before the hybrid ones load the
model.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from machine import describe
from scale import (
    REPO,
    LoadSampler,
    _commit,
    anon_kib,
    proc_stat,
    queries,
    resident_by_mapping,
    search_latency,
    summary,
    timed,
)

from tests.daemon_harness import daemon_env, start


def memory(pid: int) -> dict[str, Any]:
    _, rss = proc_stat(pid)
    return {"rss_mib": round(rss / 1024), "anon_mib": round(anon_kib(pid) / 1024),
            "resident_by_mapping": resident_by_mapping(pid)}  # fmt: skip


def measure(
    state: Path, env: dict[str, str], code: Path, rng: random.Random, stages: bool = False
) -> dict[str, Any]:
    vault = state / "vault"
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    t0 = time.perf_counter()
    d = start(vault, env, wait=3600, code=code)
    ready = time.perf_counter() - t0
    try:
        steps: dict[str, Any] = {}
        if stages:  # where the memory comes: the start, the lexical leg, then the model
            time.sleep(5)
            steps["serving"] = memory(d.proc.pid)
            search_latency(d, "lexical", queries(random.Random(99), 50))
            time.sleep(5)
            steps["after_50_lexical"] = memory(d.proc.pid)
        search_latency(d, "hybrid", queries(rng, 50))
        time.sleep(5)
        r: dict[str, Any] = {"code": _commit(code), "ready_s": round(ready, 1),
                             **memory(d.proc.pid)}  # fmt: skip
        if stages:
            r["stages"] = steps
        with d.client() as c:
            status = c.call("index.status")
            # a daemon that queued chunks to embed would not be measuring a settled restart
            r["pending"], r["store_cache_mib"] = status["pending"], status.get("store_cache_mib")
            r["model"] = status.get("model")
            picks = [{"note": rng.choice(notes)} for _ in range(200)]
            r["backlinks"] = summary([timed(c.call, "note.backlinks", p) for p in picks])
        r["hybrid"] = search_latency(d, "hybrid", queries(rng, 200))
        return r
    finally:
        d.stop(timeout=600)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("state", type=Path)
    ap.add_argument("--code", type=Path, action="append", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--stages", action="store_true",
                    help="also measure memory once serving and after 50 lexical queries")  # fmt: skip
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "restart-rss.json")
    args = ap.parse_args()
    state = args.state.resolve()
    env = {**daemon_env(state), **dict(kv.split("=", 1) for kv in args.env)}
    env["XDG_CACHE_HOME"] = str(Path.home() / ".cache")
    codes = [c.resolve() for c in args.code]
    measure(state, env, codes[-1], random.Random(0))  # the store in the last one's layout
    runs = []
    with LoadSampler() as load:
        for n in range(args.rounds):
            for code in codes:
                r = measure(state, env, code, random.Random(n), args.stages)
                r["round"] = n
                runs.append(r)
                print(json.dumps({k: v for k, v in r.items()
                                  if k not in ("resident_by_mapping", "stages")}),
                      flush=True)  # fmt: skip
    out = {"machine": describe(), "state": str(state), "env": args.env, "runs": runs,
           "load": load.summary(), "command": "python bench/restart_rss.py " + " ".join(
               sys.argv[1:])}  # fmt: skip
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}; load {out['load']}")


if __name__ == "__main__":
    main()
