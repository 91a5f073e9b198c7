"""Parse time alone: ``parse_note`` over every note of a vault, in this process, CPU seconds.

    python bench/parse_bench.py [VAULT] [RUNS]   # default: dendron-site, 3 runs

Prints the best run's CPU time and each note's wall time (p50, p95, max). Set ``PYTHONPATH``
to another tree to time its parser in the same run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from sidecar.core.note import parse_note

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "dendron-site" / "vault"


def main() -> None:
    vault = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    texts = [(f.relative_to(vault).as_posix(), f.read_text("utf-8", "replace"))
             for f in sorted(vault.rglob("*.md"))]  # fmt: skip
    cpu = []
    for _ in range(runs):
        t0 = time.process_time()
        for path, text in texts:
            parse_note(path, text, "")
        cpu.append(time.process_time() - t0)
    each = []
    for path, text in texts:
        t0 = time.perf_counter()
        parse_note(path, text, "")
        each.append((time.perf_counter() - t0) * 1000)
    each.sort()
    print(f"{len(texts)} notes: CPU {min(cpu):.2f} s (runs {', '.join(f'{c:.2f}' for c in cpu)}); "
          f"per note p50 {each[len(each) // 2]:.2f} ms, p95 {each[int(len(each) * 0.95)]:.2f} ms, "
          f"max {each[-1]:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
