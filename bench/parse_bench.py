"""Parse time alone: a vault's cold parse as the indexer does it, and one note's parse.

    python bench/parse_bench.py [VAULT ...] [--runs N] [--one N]

For each vault (default: the three in ../shared/corpora): the cold parse of every note through
``parse_all`` (child processes for a batch of 300+ notes, as the indexer), wall and CPU seconds
(this process and its children), and the same batch parsed in this process only; best of
``--runs`` (3). Then ``--one`` (30) parses of the first vault's median-size note and of the
largest note of all the vaults, p50 and p95 wall milliseconds. Prints Markdown rows, with the
load average before and after. Set ``PYTHONPATH`` to another tree to time its parser in the
same run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, pct

import sidecar
from sidecar.core.chunks import ChunkOptions
from sidecar.core.note import parse_note
from sidecar.services import parse_worker

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
Job = tuple[str, str, str]


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _jobs(vault: Path) -> list[Job]:
    return [(f.relative_to(vault).as_posix(), f.read_text("utf-8", "replace"), "")
            for f in sorted(vault.rglob("*.md"))]  # fmt: skip


def _cold(jobs: list[Job], runs: int, alone: bool) -> tuple[float, float]:
    """Best wall and best CPU seconds of ``runs`` cold parses of ``jobs``."""
    walls, cpus = [], []
    children = parse_worker._children
    if alone:
        parse_worker._children = lambda notes: 0  # type: ignore[assignment]
    try:
        for _ in range(runs):
            wall, cpu = time.perf_counter(), _cpu()
            parse_worker.parse_all(jobs, ChunkOptions())
            walls.append(time.perf_counter() - wall)
            cpus.append(_cpu() - cpu)
    finally:
        parse_worker._children = children  # type: ignore[assignment]
    return min(walls), min(cpus)


def _one(path: str, text: str, runs: int) -> list[float]:
    parse_note(path, text, "")
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        parse_note(path, text, "")
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vaults", nargs="*", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--one", type=int, default=30)
    args = ap.parse_args()
    vaults = args.vaults or [CORPORA / name / "vault" for name in
                             ("dendron-site", "kepano-obsidian", "obsidian-tasks-docs")]  # fmt: skip
    tree = Path(sidecar.__file__).resolve().parents[1]
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Machine: {describe()}  \nTree: `{tree}`; load average at start {load}  ")
    print(f"Command: `python bench/parse_bench.py --runs {args.runs} --one {args.one}`\n")
    print("| vault (notes) | cold parse as indexed: wall / CPU s | in-process only: wall / CPU s |")
    print("|---|---|---|")
    every: list[Job] = []
    first: list[Job] = []
    for vault in vaults:
        jobs = _jobs(vault)
        every += jobs
        first = first or jobs
        kids = _cold(jobs, args.runs, alone=False)
        here = _cold(jobs, args.runs, alone=True)
        print(f"| {vault.parent.name} ({len(jobs)}) | {kids[0]:.2f} / {kids[1]:.2f} | "
              f"{here[0]:.2f} / {here[1]:.2f} |")  # fmt: skip
    by_size = sorted(first, key=lambda j: len(j[1]))
    typical = by_size[len(by_size) // 2]
    large = max(every, key=lambda j: len(j[1]))
    print("\n| one note, parse_note | chars | p50 ms | p95 ms |")
    print("|---|---|---|---|")
    for label, (path, text, _) in (("typical (median size)", typical), ("largest", large)):
        ms = _one(path, text, args.one)
        print(f"| {label}: `{path}` | {len(text)} | {statistics.median(ms):.2f} | "
              f"{pct(ms, 0.95):.2f} |")  # fmt: skip
    print(f"\nLoad average at end {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
