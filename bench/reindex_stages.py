"""Where a one-note re-index spends its time, stage by stage, and the cold index's stages.

    python bench/reindex_stages.py [VAULT] [--edits 60]   # default: dendron-site

As ``index_bench.py``: a copy of the vault indexed cold (no embeddings), then one note edited
and re-indexed ``--edits`` times. Each stage is timed by wrapping the function that does it
(parse, the chunk rows, the in-memory state, the note's row, the vector lookup, meta.json);
"other" is the re-index's time outside them. Prints Markdown rows.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, pct

import sidecar.services.context as context
import sidecar.services.indexer as indexer
from sidecar.services.context import Services
from sidecar.services.state import IndexState
from sidecar.store.lance import IndexStore

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "dendron-site" / "vault"
SPENT: dict[str, list[float]] = defaultdict(list)


def timed(owner: Any, name: str, stage: str) -> None:
    fn: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[stage].append((time.perf_counter() - t0) * 1000)

    setattr(owner, name, wrapper)


STAGES = [
    (indexer, "parse_all", "parse"),
    (IndexStore, "put_chunks", "chunk rows (LanceDB)"),
    (IndexState, "apply", "in-memory state"),
    (IndexStore, "put_notes", "note's row (LanceDB)"),
    (IndexStore, "find_vectors", "vector lookup (LanceDB)"),
    (context, "ensure_fts_index", "FTS + B-tree indexes"),
    (Services, "save_meta", "meta.json"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vault", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--edits", type=int, default=60)
    args = ap.parse_args()
    for owner, name, stage in STAGES:
        timed(owner, name, stage)
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(args.vault, vault)
        services = Services.open(vault, Path(tmp) / "data")
        t0 = time.perf_counter()
        services.reindex()
        cold = {"total": [(time.perf_counter() - t0) * 1000], **SPENT}
        SPENT.clear()
        notes = sorted(services.state.notes)
        target = vault / notes[len(notes) // 2]
        rel = target.relative_to(vault).as_posix()
        totals = []
        for i in range(args.edits):
            with target.open("a", encoding="utf-8") as fh:
                fh.write(f"\nedit {i} links [[{Path(notes[i % len(notes)]).stem}]]\n")
            st = target.stat()
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + (i + 1) * 10**9))
            t0 = time.perf_counter()
            services.reindex(paths=[rel])
            totals.append((time.perf_counter() - t0) * 1000)
        services.close()
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Machine: {describe()}  ")
    print(f"Command: `python bench/reindex_stages.py {args.vault} --edits {args.edits}`, "
          f"load at the end {load}\n")  # fmt: skip
    print("| cold index, stage | ms |\n|---|---|")
    for stage, values in cold.items():
        print(f"| {stage} | {sum(values):.0f} |")
    print(
        f"\n| one-note re-index ({args.edits} edits), stage | p50 ms | p95 ms | share of the sum |"
    )
    print("|---|---|---|---|")
    total = sum(totals)
    for stage, values in SPENT.items():
        values += [0.0] * (len(totals) - len(values))  # a stage skipped in some runs
        print(f"| {stage} | {statistics.median(values):.2f} | {pct(values, 0.95):.2f} | "
              f"{sum(values) / total:.0%} |")  # fmt: skip
    other = [t - sum(SPENT[s][i] for s in SPENT) for i, t in enumerate(totals)]
    print(f"| other | {statistics.median(other):.2f} | {pct(other, 0.95):.2f} | "
          f"{sum(other) / total:.0%} |")  # fmt: skip
    print(f"| **re-index** | **{statistics.median(totals):.1f}** | **{pct(totals, 0.95):.1f}** | |")


if __name__ == "__main__":
    main()
