"""Measure an index kept by ``scale.py --keep`` again, as a restarted daemon sees it.

``python bench/warm.py --size 100000`` starts ``sidecar serve`` (the code checked out now) on
``/tmp/sidecar-scale/state-100000``, whose store a full scale run built, and measures what does
not need a cold start: time to serving, queries per mode, graph methods, save -> found,
one-note re-index and memory. A change to the steady state can so be measured at 100k notes
in minutes instead of the hour-long cold embedding. Results: ``bench/results/warm-N.json``;
``--label`` names the run inside it (several runs accumulate).
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
from machine import describe
from scale import RESULTS, one_note_reindex, queries, steady_state

from tests.daemon_harness import daemon_env, start


def warm_run(state: Path, idle: float) -> dict[str, Any]:
    vault = state / "vault"
    env = daemon_env(state, debounce_ms=300, model="minilm")
    env["XDG_CACHE_HOME"] = str(Path.home() / ".cache")
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    rng = random.Random(3)
    t0 = time.perf_counter()
    d = start(vault, env, wait=3600)
    r: dict[str, Any] = {"machine": describe(), "ready_s": round(time.perf_counter() - t0, 1)}
    try:
        r.update(steady_state(d, notes, rng, queries(rng, 200), idle))
        with d.client() as c:
            status = c.call("index.status")
        r["chunks"], r["pending"] = status["chunks"], status["pending"]
    finally:
        d.stop(timeout=600)
    r["one_note_reindex"] = one_note_reindex(vault, Path(env["SIDECAR_DATA_DIR"]), notes)
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/sidecar-scale"))
    ap.add_argument("--idle", type=float, default=30)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    state = args.work / f"state-{args.size}"
    if not (state / "data").is_dir():
        sys.exit(f"{state} holds no index: run bench/scale.py --sizes {args.size} --keep first")
    result = warm_run(state, args.idle)
    result["label"] = args.label
    result["command"] = f"python bench/warm.py {' '.join(sys.argv[1:])}"
    out = RESULTS / f"warm-{args.size}.json"
    runs = json.loads(out.read_text()) if out.exists() else []
    out.write_text(json.dumps([*runs, result], indent=1) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
