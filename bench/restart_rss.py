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


def measure(state: Path, env: dict[str, str], code: Path, rng: random.Random) -> dict[str, Any]:
    vault = state / "vault"
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    t0 = time.perf_counter()
    d = start(vault, env, wait=3600, code=code)
    ready = time.perf_counter() - t0
    try:
        search_latency(d, "hybrid", queries(rng, 50))
        time.sleep(5)
        _, rss = proc_stat(d.proc.pid)
        r: dict[str, Any] = {"code": _commit(code), "ready_s": round(ready, 1),
                             "rss_mib": round(rss / 1024),
                             "anon_mib": round(anon_kib(d.proc.pid) / 1024),
                             "resident_by_mapping": resident_by_mapping(d.proc.pid)}  # fmt: skip
        with d.client() as c:
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
                r = measure(state, env, code, random.Random(n))
                r["round"] = n
                runs.append(r)
                print(json.dumps({k: v for k, v in r.items() if k != "resident_by_mapping"}),
                      flush=True)  # fmt: skip
    out = {"machine": describe(), "state": str(state), "env": args.env, "runs": runs,
           "load": load.summary(), "command": "python bench/restart_rss.py " + " ".join(
               sys.argv[1:])}  # fmt: skip
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}; load {out['load']}")


if __name__ == "__main__":
    main()
