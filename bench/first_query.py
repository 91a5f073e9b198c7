"""The first hybrid queries after a daemon restarts on a store it built (nothing left to embed).

    python bench/first_query.py --before /tmp/old --rounds 3

Builds the index of ``--vault`` (the example vault) once per checkout with the real model, then
restarts each daemon ``--rounds`` times, alternating this tree and ``--before`` (a checkout with
its own ``.venv``), and times four hybrid searches two seconds after each is serving: the first
is the one a user meets after a restart.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from machine import describe

from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import daemon_env, start

QUERIES = ["session storage decision", "café launch plan", "auth service tokens", "welcome"]


def build(vault: Path, state: Path, code: Path | None) -> dict[str, str]:
    shutil.copytree(vault, state / "vault")
    env = daemon_env(state, model="minilm")
    d = start(state / "vault", env, wait=600, code=code)
    with d.client() as c:
        while c.call("index.status")["pending"]:
            time.sleep(0.1)
    d.stop()
    return env


def first_queries(state: Path, env: dict[str, str], code: Path | None) -> list[float]:
    d = start(state / "vault", env, wait=600, code=code)
    try:
        time.sleep(2)  # the daemon at rest after it serves
        with d.client() as c:
            times = []
            for q in QUERIES:
                t0 = time.perf_counter()
                c.call("search", {"query": q})
                times.append(round((time.perf_counter() - t0) * 1000, 1))
        return times
    finally:
        d.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", type=Path, default=EXAMPLE_VAULT)
    ap.add_argument("--before", type=Path, help="a checkout of the commit to compare with")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(describe(), f"load {os.getloadavg()[0]:.1f}")
    work = Path(tempfile.mkdtemp(dir="/tmp", prefix="fq"))
    trees: dict[str, Path | None] = {"this tree": None}
    if args.before:
        trees[f"before ({args.before})"] = args.before.resolve()
    try:
        envs = {}
        for i, (name, code) in enumerate(trees.items()):
            (work / str(i)).mkdir()
            envs[name] = build(args.vault, work / str(i), code)
        for r in range(args.rounds):
            for i, (name, code) in enumerate(trees.items()):
                ms = first_queries(work / str(i), envs[name], code)
                print(f"round {r} {name}: first, then later hybrid queries (ms) {ms}")
        print(f"load {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
