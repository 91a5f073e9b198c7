"""Graph lint speed on a real vault: every rule over the in-memory index, and each output format.

    python bench/lint_bench.py [VAULT] [--repeats N]   # default: ../shared/corpora/dendron-site

Indexes the vault in-process into a temporary LanceDB store (no embeddings), then times
``run_lint`` ``--repeats`` times (best and median count: other processes only slow a run down)
and each renderer once. The issue's budget is 2 s for dendron-site's 1,012 notes. Prints
Markdown rows.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe

from sidecar.core.lint_format import render
from sidecar.services.context import Services
from sidecar.services.lint import run_lint

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "dendron-site" / "vault"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("vault", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        services = Services.open(args.vault, Path(tmp) / "data")
        try:
            t0 = time.perf_counter()
            indexed = services.reindex()
            index_s = time.perf_counter() - t0
            runs = []
            for _ in range(args.repeats):
                report = run_lint(services.state)
                runs.append(report.seconds)
            formats = {}
            for fmt in ("text", "json", "sarif", "markdown"):
                t0 = time.perf_counter()
                render(fmt, report.findings, report.summary)
                formats[fmt] = time.perf_counter() - t0
        finally:
            services.close()
    s = report.summary
    print(f"Machine: {describe()}  ")
    print(f"Command: `python bench/lint_bench.py {args.vault} --repeats {args.repeats}`\n")
    print("| vault | notes | edges | findings (error/warning/info) | lint best | lint median "
          "| render text/json/sarif/md | index (cold, no vectors) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    sev = s["by_severity"]
    rendered = " / ".join(f"{formats[f] * 1000:.0f}" for f in formats)
    print(f"| {args.vault.parent.name if args.vault.name == 'vault' else args.vault.name} "
          f"| {indexed.notes} | {indexed.edges} "
          f"| {s['total']} ({sev['error']}/{sev['warning']}/{sev['info']}) "
          f"| {min(runs) * 1000:.1f} ms | {statistics.median(runs) * 1000:.1f} ms "
          f"| {rendered} ms | {index_s:.2f} s |")  # fmt: skip


if __name__ == "__main__":
    main()
