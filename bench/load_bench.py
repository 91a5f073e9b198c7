"""The issue's load: 50 socket clients x 1,000 mixed requests while a writer edits notes and a
subscriber counts index.changed; prints errors, missed notifications, p50/p95/p99 latency and
the daemon's resident memory at the start, its peak (VmHWM) and at the end.

    python bench/load_bench.py [--clients 50] [--requests 1000] [--edits 100]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import status_mib

from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import running
from tests.test_load import load, percentile


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--edits", type=int, default=100)
    a = ap.parse_args()
    with running(EXAMPLE_VAULT) as d:
        start = status_mib(d.proc.pid)
        r = load(d, a.clients, a.requests, a.edits)
        peak, end = status_mib(d.proc.pid, "VmHWM"), status_mib(d.proc.pid)
    lat = r["latencies"]
    missed = sum(f"load {i}.md" not in r["seen"] for i in range(a.edits))
    ms = [round(percentile(lat, q) * 1000, 2) for q in (0.5, 0.95, 0.99)]
    sys.stdout.write(
        f"| {a.clients} x {a.requests} | {len(lat)} | {len(r['errors'])} | {missed} of {a.edits} "
        f"| {ms[0]} / {ms[1]} / {ms[2]} ms | {len(lat) / r['seconds']:.0f} req/s "
        f"| RSS {start:.0f} / peak {peak:.0f} / {end:.0f} MiB |\n"
    )


if __name__ == "__main__":
    main()
