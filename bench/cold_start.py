"""Cold start to lexically searchable: ``sidecar serve`` on a fresh store, several checkouts.

    python bench/cold_start.py --notes 100000 --tree before=/work/wt/old --tree after=.

For each round, each tree in turn (alternating, so load drifts hit both alike): a copy of one
generated vault (``genvault.py``), an empty store, ``sidecar serve`` from that tree's own
``.venv``, timed until it serves with every note lexically searchable (as ``scale.py``'s
"cold start" row), then one lexical query over the socket to check the index answers, then
stopped. The load average is recorded at each start. Results go to stdout as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from genvault import generate

from tests.daemon_harness import daemon_env, start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("/tmp/sidecar-cold"))
    ap.add_argument("--tree", action="append", required=True, metavar="LABEL=DIR")
    ap.add_argument("--model", default="minilm", help="the daemon's embedder (tiny or minilm)")
    args = ap.parse_args()
    trees = [(label, Path(d).resolve()) for label, d in (t.split("=", 1) for t in args.tree)]
    pristine = args.work / f"vault-{args.notes}"
    if not pristine.is_dir():
        generate(pristine, args.notes)
    for rnd in range(1, args.rounds + 1):
        for label, tree in trees:
            state = args.work / "state"
            shutil.rmtree(state, ignore_errors=True)
            state.mkdir(parents=True)
            vault = state / "vault"
            shutil.copytree(pristine, vault)
            env = daemon_env(state, model=args.model)
            env["XDG_CACHE_HOME"] = str(Path.home() / ".cache")
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            d = start(vault, env, wait=3600, code=tree)
            ready = time.perf_counter() - t0
            try:
                with d.client(timeout=None) as c:
                    hits = c.call("search", {"query": "session", "mode": "lexical", "limit": 3})
                    notes = c.call("index.status")["notes"]
            finally:
                d.stop(timeout=600)
            row = {"round": rnd, "tree": label, "notes": notes, "ready_s": round(ready, 1),
                   "load_1min": round(load, 2), "answered": bool(hits)}  # fmt: skip
            print(json.dumps(row), flush=True)
    shutil.rmtree(args.work / "state", ignore_errors=True)


if __name__ == "__main__":
    main()
